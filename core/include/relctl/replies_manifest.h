#pragma once

// The replies about published manifests (migrations/functions/publish.sql,
// rollback.sql): a manifest, the current one, and an environment's history
// of publishes and rollbacks; and the accepted answers of a publish and a
// rollback.

#include "relctl/replyjson.h"
#include "relctl/time.h"

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

// relctl.manifest_json without the document and the environment: the
// manifest a publish replaced, or the ones a rollback restored and replaced.
struct PublishedManifest
{
    std::int64_t id = 0;
    std::string release;
    std::int64_t generation = 0;
    std::string job;
    std::optional<std::int64_t> token; // empty: published without a lease
    Timestamp publishedAt;
};

// relctl.publish's accepted reply, and relctl.publish_unserialized's (no
// token, serialized false); a retry with the same op id is answered with
// the recorded one (replayed).
struct Publication
{
    std::string status; // ok
    std::string env;
    std::string release;
    std::int64_t generation = 0;
    std::string job;
    std::optional<std::int64_t> token;
    Timestamp publishedAt;
    bool serialized = true;
    std::optional<PublishedManifest> previous; // empty: nothing was current before
    std::optional<std::string> opId;
    bool replayed = false;
};

// relctl.rollback's accepted reply. rolledBack false: the target was already
// current, nothing was done, and `message` says so; true: the rollback's id,
// token, who, why and when, and the manifest it replaced.
struct RollbackDone
{
    std::string status; // ok
    std::string env;
    bool rolledBack = false;
    std::optional<std::int64_t> rollback; // its id
    std::optional<std::int64_t> token;
    std::optional<std::string> by;
    std::optional<std::string> reason;
    std::optional<Timestamp> at;
    PublishedManifest restored; // current now
    std::optional<PublishedManifest> replaced;
    std::int64_t highWaterGeneration = 0; // unchanged: a rollback does not lower the bar
    std::optional<std::string> message;
    std::optional<std::string> opId;
    bool replayed = false;
};

RELCTL_REPLY_JSON(Manifest);
RELCTL_REPLY_JSON(ManifestShow);
RELCTL_REPLY_JSON(ManifestHistory);
RELCTL_REPLY_JSON(ReplacedManifest);
RELCTL_REPLY_JSON(RollbackRecord);
RELCTL_REPLY_JSON(ManifestHistoryEntry);
RELCTL_REPLY_JSON(PublishedManifest);
RELCTL_REPLY_JSON(Publication);
RELCTL_REPLY_JSON(RollbackDone);

} // namespace relctl
