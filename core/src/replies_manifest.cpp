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

template <class Io, Is<PublishedManifest> M> void fields(Io& io, M& m)
{
    io.required("id", m.id);
    io.required("release", m.release);
    io.required("generation", m.generation);
    io.required("job", m.job);
    io.nullable("token", m.token);
    io.required("published_at", m.publishedAt);
}

template <class Io, Is<Publication> P> void fields(Io& io, P& p)
{
    io.required("status", p.status);
    io.required("env", p.env);
    io.required("release", p.release);
    io.required("generation", p.generation);
    io.required("job", p.job);
    io.nullable("token", p.token);
    io.required("published_at", p.publishedAt);
    io.required("serialized", p.serialized);
    io.nullable("previous", p.previous);
    io.nullable("op_id", p.opId);
    io.required("replayed", p.replayed);
}

template <class Io, Is<RollbackDone> R> void fields(Io& io, R& r)
{
    io.required("status", r.status);
    io.required("env", r.env);
    io.required("rolled_back", r.rolledBack);
    io.omittable("rollback", r.rollback);
    io.omittable("token", r.token);
    io.omittable("by", r.by);
    io.omittable("reason", r.reason);
    io.omittable("at", r.at);
    io.required("restored", r.restored);
    io.omittable("replaced", r.replaced);
    io.required("high_water_generation", r.highWaterGeneration);
    io.omittable("message", r.message);
    io.nullable("op_id", r.opId);
    io.required("replayed", r.replayed);
}

} // namespace

RELCTL_JSON_FROM_FIELDS(Manifest)
RELCTL_JSON_FROM_FIELDS(ReplacedManifest)
RELCTL_JSON_FROM_FIELDS(RollbackRecord)
RELCTL_JSON_FROM_FIELDS(ManifestHistoryEntry)
RELCTL_JSON_FROM_FIELDS(PublishedManifest)
RELCTL_JSON_FROM_FIELDS(Publication)
RELCTL_JSON_FROM_FIELDS(RollbackDone)

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
