// The keys of the manifest replies (relctl/replies_manifest.h). ManifestShow
// and ManifestHistory are written by hand: their shape is not a list of keys.

#include "relctl/replies_manifest.h"

#include "replyfields.h"

#include <utility>

namespace relctl {

namespace {

template <class Io, Is<Manifest> M> void fields(Io& io, M& m)
{
    io.nullable("id", m.id);
    io.required("release", m.release);
    io.required("generation", m.generation);
    io.required("job", m.job);
    io.nullable("token", m.token);
    io.required("published_at", m.publishedAt);
    io.required("manifest", m.manifest);
}

template <class Io, Is<ReplacedManifest> M> void fields(Io& io, M& m)
{
    io.required("id", m.id);
    io.required("release", m.release);
    io.required("generation", m.generation);
}

template <class Io, Is<RollbackRecord> R> void fields(Io& io, R& r)
{
    io.required("id", r.id);
    io.required("by", r.by);
    io.required("reason", r.reason);
    io.required("at", r.at);
    io.required("token", r.token);
    io.required("replaced", r.replaced);
}

template <class Io, Is<ManifestHistoryEntry> H> void fields(Io& io, H& h)
{
    io.merged(h.manifest);
    io.required("kind", h.kind);
    io.omittable("rollback", h.rollback);
}

} // namespace

RELCTL_JSON_FROM_FIELDS(Manifest)
RELCTL_JSON_FROM_FIELDS(ReplacedManifest)
RELCTL_JSON_FROM_FIELDS(RollbackRecord)
RELCTL_JSON_FROM_FIELDS(ManifestHistoryEntry)

// Not a list of keys: relctl.manifest_json of a row that does not exist has
// every member null.
void to_json(json& j, const ManifestShow& s)
{
    if (s.manifest) {
        to_json(j, *s.manifest);
    } else {
        j = json::object();
        for (const char* key : {"id", "release", "generation", "job", "token", "published_at", "manifest"})
            j[key] = nullptr;
    }
    j["env"] = s.env;
    j["high_water_generation"] = s.highWaterGeneration;
}

void from_json(const json& j, ManifestShow& s)
{
    Reader reader{j};
    reader.required("env", s.env);
    reader.required("high_water_generation", s.highWaterGeneration);
    if (j.at("release").is_null())
        s.manifest.reset();
    else
        s.manifest = j.get<Manifest>();
}

// Not a list of keys: each entry of the history carries the environment too.
void to_json(json& j, const ManifestHistory& h)
{
    json history = json::array();
    for (const ManifestHistoryEntry& m : h.history) {
        json item = m;
        item["env"] = h.env;
        history.push_back(std::move(item));
    }
    j = json{{"env", h.env},
             {"high_water_generation", h.highWaterGeneration},
             {"current_manifest_id", h.currentManifestId ? json(*h.currentManifestId) : json()},
             {"history", std::move(history)}};
}

void from_json(const json& j, ManifestHistory& h)
{
    Reader reader{j};
    reader.required("env", h.env);
    reader.required("high_water_generation", h.highWaterGeneration);
    reader.nullable("current_manifest_id", h.currentManifestId);
    reader.required("history", h.history);
}

} // namespace relctl
