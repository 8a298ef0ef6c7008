#pragma once

// The replies about published manifests (migrations/functions/publish.sql,
// rollback.sql): a manifest, the current one, and an environment's history
// of publishes and rollbacks.

#include "relctl/replies_audit.h" // Timestamp
#include "relctl/replyjson.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace relctl {

// relctl.manifest_json without its environment: a published manifest.
struct Manifest
{
    std::optional<std::int64_t> id; // its row; rollback --to-manifest names it
    std::string release;
    std::int64_t generation = 0;
    std::string job;
    std::optional<std::int64_t> token; // empty: published without a lease (serialization off)
    Timestamp publishedAt;
    nlohmann::json manifest; // the document itself, as published; null when none was
};

// relctl.manifest_show without history: the current manifest, empty when
// nothing is published (the server then sends every member as null).
struct ManifestShow
{
    std::string env;
    std::optional<Manifest> manifest;
    std::int64_t highWaterGeneration = 0;
};

// The manifest a rollback replaced, and the rollback itself.
struct ReplacedManifest
{
    std::int64_t id = 0;
    std::string release;
    std::int64_t generation = 0;
};
struct RollbackRecord
{
    std::int64_t id = 0;
    std::string by;
    std::string reason;
    Timestamp at;
    std::int64_t token = 0;
    ReplacedManifest replaced;
};

// One entry of a manifest history: a publish, or a rollback (then `manifest`
// is the manifest it restored, as first published, and `rollback` says who
// restored it, why, when, and what it replaced).
struct ManifestHistoryEntry
{
    Manifest manifest;
    std::string kind; // publish | rollback
    std::optional<RollbackRecord> rollback;
};

// relctl.manifest_show with history: every publish and rollback there, oldest first.
struct ManifestHistory
{
    std::string env;
    std::int64_t highWaterGeneration = 0;
    std::optional<std::int64_t> currentManifestId;
    std::vector<ManifestHistoryEntry> history;
};

RELCTL_REPLY_JSON(Manifest);
RELCTL_REPLY_JSON(ManifestShow);
RELCTL_REPLY_JSON(ManifestHistory);
RELCTL_REPLY_JSON(ReplacedManifest);
RELCTL_REPLY_JSON(RollbackRecord);
RELCTL_REPLY_JSON(ManifestHistoryEntry);

} // namespace relctl
