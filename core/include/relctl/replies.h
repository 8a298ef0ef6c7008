#pragma once

// The replies of relctl's SQL functions (migrations/functions/*.sql) as value
// types: what Database returns for every operation besides the lease protocol
// (whose answer is an Outcome). Each type is named after the SQL that builds
// it, each member after its key (camelCase). JSON is made from these types
// only at the edges (the CLI's --json output): to_json writes exactly the keys
// the server sent, so that output keeps its shape. A member the server sends
// as null is an empty optional and written back as null; a key the server
// sends only in some replies is an empty optional there and left out.
//
// from_json/to_json are nlohmann's conversion hooks: `reply.get<Environment>()`
// parses, `nlohmann::json(environment)` (or toJson) writes.

#include "relctl/protocol.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace relctl {

// A time as the server wrote it (ISO 8601, UTC): kept as text so that --json
// and the plain output print it unchanged, to the microsecond.
using Timestamp = std::string;

// relctl.lease_json: a live lease.
struct Lease
{
    std::int64_t token = 0;
    std::string job;
    std::string release;
    std::int64_t generation = 0;
    Timestamp acquiredAt;
    Timestamp expiresAt;
    std::int64_t ttlMs = 0;
    // On the server's clock when read; not in revoke's reply (the lease has ended).
    std::optional<std::int64_t> remainingMs;
    std::optional<std::string> host;
    std::optional<std::int64_t> pid;
    std::optional<std::string> jobUrl;
};

// relctl.candidate_json: a request in an environment's queue.
struct Candidate
{
    std::int64_t candidate = 0; // its id
    std::string job;
    std::string release;
    std::int64_t generation = 0;
    Timestamp queuedAt;
    std::string state; // waiting | granted | superseded | ...
    std::optional<Timestamp> endedAt;
    std::optional<std::int64_t> token; // the lease it was granted
    std::optional<std::string> host;
    std::optional<std::int64_t> pid;
    std::optional<std::string> jobUrl;
};

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

// Who froze an environment, when and why.
struct Frozen
{
    Timestamp at;
    std::string by;
    std::string reason;
};

// relctl.environment_json.
struct Environment
{
    std::string name;
    std::int64_t defaultTtlMs = 0;
    std::int64_t maxTtlMs = 0;
    std::int64_t lastToken = 0;
    Timestamp createdAt;
    std::string policy;        // ordered | newest
    std::string supersede;     // auto | approval
    std::string serialization; // enforced | off
    std::optional<Frozen> frozen;
    std::optional<Manifest> current;
    std::optional<Lease> lease;   // the live lease
    std::vector<Candidate> queue; // waiting candidates whose session is alive
    std::int64_t pendingSupersessions = 0;
    // Promotions: the environment candidates must have been accepted on
    // first, for how long, and how many distinct approvals they need here.
    std::optional<std::string> promoteFrom;
    std::int64_t soakMs = 0;
    std::int64_t approvalsRequired = 0;
    // The highest generation ever accepted here: the freshness bar, which a
    // rollback does not lower.
    std::int64_t highWaterGeneration = 0;
    std::int64_t openPromotions = 0;
    // The role whose members alone may decide approvals here (empty: any
    // release manager; also on a schema before migration 0012).
    std::optional<std::string> approverRole;
};

// relctl.env_list.
struct EnvironmentList
{
    std::vector<Environment> environments;
};

// relctl.env_add: the environment, and whether this call created it.
struct EnvironmentAdded
{
    Environment environment;
    bool created = false;
};

// relctl.env_set: the environment after the change, and what changed (only
// the settings whose value differs are named).
struct EnvironmentSet
{
    struct Changed
    {
        std::optional<std::string> policy;
        std::optional<std::string> supersede;
        std::optional<std::string> serialization;
        std::optional<std::string> promoteFrom; // "" when cleared
        std::optional<std::int64_t> soakMs;
        std::optional<std::int64_t> approvalsRequired;
        std::optional<std::string> approverRole; // "" when cleared
    };
    Environment environment;
    std::string status; // ok
    Changed changed;
};

// relctl.freeze and relctl.unfreeze: the environment after the call, and
// whether it changed (freezing a frozen environment changes nothing).
struct FreezeChange
{
    Environment environment;
    std::string status; // ok
    bool changed = false;
};

// relctl.lease_show.
struct LeaseShow
{
    std::string env;
    std::optional<Lease> lease;
};

// relctl.revoke. With a live lease: who revoked it and why, and the lease
// (without remainingMs); without one: a message.
struct Revocation
{
    std::string status; // ok
    std::string env;
    bool revoked = false;
    std::optional<Lease> lease;
    std::optional<std::string> by;
    std::optional<std::string> reason;
    std::optional<std::string> message;
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

// One person's decision on a promotion request.
struct PromotionVote
{
    std::string by; // the name given (--by)
    std::optional<std::string> reason;
    Timestamp at;
    // The database login that decided (empty before migration 0012).
    std::optional<std::string> login = std::nullopt;
};

// Where a promotion's candidate stands on the environment it is promoted from.
struct PromotionUpstream
{
    std::string env;
    std::int64_t soakMs = 0;
    std::optional<Timestamp> acceptedAt;         // empty: not accepted there (or withdrawn by a rollback)
    std::optional<std::int64_t> soakedMs;        // since it was accepted there
    std::optional<std::int64_t> soakRemainingMs; // 0 once the soak has passed
    nlohmann::json current;                      // {release, generation} current there, or null
};

// relctl.promotion_json: a request to promote (release, generation) to env.
struct Promotion
{
    std::int64_t id = 0;
    std::string env;
    std::string release;
    std::int64_t generation = 0;
    std::string state; // open | approved | denied
    std::string requestedBy;
    // The login that opened the request: it can never approve it (empty
    // before migration 0012).
    std::optional<std::string> requestedLogin;
    std::optional<std::string> reason;
    Timestamp requestedAt;
    std::optional<Timestamp> decidedAt;
    std::int64_t approvalsRequired = 0;
    // Approvals counted, one per login (before migration 0012: absent, and
    // approvals.size() is the count).
    std::optional<std::int64_t> approvalsGiven;
    std::optional<std::string> approverRole;
    std::vector<PromotionVote> approvals;
    std::optional<PromotionVote> denial;
    std::optional<PromotionUpstream> upstream; // empty when env is promoted from nowhere
    nlohmann::json current;                    // {release, generation, manifest} current on env, or null
    nlohmann::json candidateManifest;          // the upstream's manifest of the candidate, or null
};

// relctl.promotions_list.
struct Promotions
{
    std::vector<Promotion> promotions;
};

// How the person behind a decision is shown everywhere (CLI, console): the
// name they gave, and the database login that made the call when the two
// differ — "alice", or "alice (login ci-bot)". The login is what the server
// authenticated; the name is only what was typed.
std::string actorWithLogin(const std::string& by, const std::optional<std::string>& login);

// relctl.supersession_json: a request to let a newer candidate skip older ones.
struct Supersession
{
    std::int64_t id = 0;
    std::string env;
    std::string state; // pending | approved | denied | ...
    Timestamp openedAt;
    std::optional<Timestamp> decidedAt;
    std::optional<std::string> decidedBy;
    std::optional<std::string> decidedLogin; // the login behind decidedBy (migration 0012 on)
    std::optional<std::string> reason;
    std::optional<Candidate> winner;
    std::vector<Candidate> skipped;
};

// relctl.approvals: the supersession requests (a waiting candidate's
// request to skip lower ones, decided by a release manager; promotions are
// another concept, with their own approvals).
struct Supersessions
{
    std::vector<Supersession> requests;
};

// relctl.decide: the supersession request as decided.
struct SupersessionDecision
{
    Supersession supersession;
    std::string status; // ok
};

// The server and schema; cheap, so the console times it as its round trip.
struct ServerInfo
{
    std::string serverVersion;
    std::string database;
    std::string login; // session_user: who the server says this connection is
    Timestamp now;
    std::optional<std::int64_t> schemaVersion; // empty before the first migration
};

// relctl.event_json: one row of the audit trail. (The console reads the same
// rows as AuditEvent, with times in epoch milliseconds.)
struct Event
{
    std::int64_t id = 0;
    Timestamp at;
    std::optional<std::string> env;
    std::string operation;
    std::string outcome; // accepted | rejected
    std::optional<std::string> reason;
    std::optional<std::string> job;
    std::optional<std::string> release;
    std::optional<std::int64_t> generation;
    std::optional<std::int64_t> token;
    std::optional<std::int64_t> currentToken;
    std::optional<std::int64_t> currentGeneration;
    std::optional<std::string> currentRelease;
    std::optional<std::string> opId;
    std::optional<std::string> host;
    std::optional<std::int64_t> pid;
    std::optional<std::string> jobUrl;
    nlohmann::json detail; // free-form, per operation; null when none
    // Who: the person an operator action names (--by), the database login
    // that made the call, and the address it came from (none: a local
    // socket). The login and address are the server's, not the caller's word.
    std::optional<std::string> actor;
    std::optional<std::string> dbUser;
    std::optional<std::string> clientAddr;
    // The environment's freshness bar after the event (none before 0006).
    std::optional<std::int64_t> highWaterGeneration;
};

// relctl.audit: the newest matching events, oldest first.
struct AuditTrail
{
    std::vector<Event> events;
};

// The parts of a traced refusal. At namespace scope, not nested in
// TracedRefusal: clang decides whether a nested struct with member
// initializers is default-constructible while the enclosing one is still
// incomplete, says no, and nlohmann::json then cannot read it.

// The refused job's own lease, as it stood or ended.
struct RefusalOwnLease
{
    std::int64_t token = 0;
    std::string release;
    std::int64_t generation = 0;
    Timestamp acquiredAt;
    Timestamp expiresAt;
    std::optional<Timestamp> endedAt;
    std::optional<std::string> endReason; // released | revoked
    std::optional<std::string> host;
    std::optional<std::int64_t> pid;
    std::optional<std::string> jobUrl;
};

// The environment's newest lease at the refusal, when it was not the job's.
struct RefusalSupersedingLease
{
    std::int64_t token = 0;
    std::string job;
    std::string release;
    std::int64_t generation = 0;
    Timestamp acquiredAt;
    Timestamp expiresAt;
    std::optional<std::string> host;
    std::optional<std::int64_t> pid;
    std::optional<std::string> jobUrl;
};

// The manifest current at the refusal.
struct RefusalCurrentManifest
{
    std::string release;
    std::int64_t generation = 0;
    std::string job;
    std::optional<std::int64_t> token;
    Timestamp publishedAt;
    std::int64_t publishedBeforeMs = 0; // from that publish to the refusal
};

// What caused the refusal (relctl.refusal_cause): the row that decided it,
// in one sentence and in parts. Which parts are set depends on `kind`:
// superseded (the winning candidate; the approval, who and why), lease_superseded
// (the newer holder), revoked and frozen (the operator and why), stale (the
// publish that set the bar), expired, released, no_lease.
struct RefusalCause
{
    std::string kind;
    std::string summary;
    std::optional<std::string> job;
    std::optional<std::string> release;
    std::optional<std::int64_t> generation;
    std::optional<std::int64_t> token;
    std::optional<std::string> host;
    std::optional<std::int64_t> pid;
    std::optional<std::string> jobUrl;
    std::optional<std::int64_t> approval;
    std::optional<std::string> by;
    std::optional<std::string> reason;
    std::optional<Timestamp> at;
};

// One refusal of relctl.trace, with what explains it.
struct TracedRefusal
{
    using OwnLease = RefusalOwnLease;
    using SupersedingLease = RefusalSupersedingLease;
    using CurrentManifest = RefusalCurrentManifest;

    Event event;
    std::optional<OwnLease> lease;
    std::optional<SupersedingLease> supersededBy;
    std::optional<CurrentManifest> currentManifest;
    std::optional<RefusalCause> cause; // none for promotion gates: their event's detail explains them
};

// relctl.trace: every refusal of one job.
struct JobTrace
{
    std::string job;
    std::vector<TracedRefusal> refusals;
};

// relctl.op_show: the first outcome stored under an op id.
struct OperationRecord
{
    std::string opId;
    std::string status; // recorded | not-found
    // The rest only when recorded.
    std::optional<std::string> operation;
    std::optional<nlohmann::json> request; // as the operation's function recorded it
    std::optional<Outcome> outcome;        // the stored reply, lease credentials stripped
    std::optional<Timestamp> recordedAt;
    // What became of it since, from the database alone (see JobStatus); a
    // schema before the state model sends none.
    std::optional<std::string> state;
    std::optional<std::string> summary;
    std::optional<std::string> next;
    std::optional<nlohmann::json> evidence;

    bool recorded() const { return status == "recorded"; }
};

// What became of a job (relctl.job_state) or an operation (relctl.op_state):
//   unknown            the database never saw it: a retry is safe
//   queued             waiting in an environment's queue
//   rejected           refused (reason, the refusal's event)
//   accepted-running   its lease is live, nothing published under it yet
//   completed          published: still current, or superseded since
//   ended-unpublished  its lease ended (released, expired, revoked) without a publish
// with the state in a sentence, the next step, and the rows it rests on.
struct JobStatus
{
    std::optional<std::string> job;
    std::optional<std::string> opId; // the operation the state is of
    std::string state;
    std::string summary;
    std::string next;
    nlohmann::json evidence;
};

// NOLINTBEGIN(bugprone-macro-parentheses): the argument is a type name
#define RELCTL_REPLY_JSON(Type)                                                                              \
    void to_json(nlohmann::json& j, const Type& value);                                                      \
    void from_json(const nlohmann::json& j, Type& value)

RELCTL_REPLY_JSON(Lease);
RELCTL_REPLY_JSON(Candidate);
RELCTL_REPLY_JSON(Manifest);
RELCTL_REPLY_JSON(Frozen);
RELCTL_REPLY_JSON(Environment);
RELCTL_REPLY_JSON(EnvironmentList);
RELCTL_REPLY_JSON(EnvironmentAdded);
RELCTL_REPLY_JSON(EnvironmentSet::Changed);
RELCTL_REPLY_JSON(EnvironmentSet);
RELCTL_REPLY_JSON(FreezeChange);
RELCTL_REPLY_JSON(LeaseShow);
RELCTL_REPLY_JSON(Revocation);
RELCTL_REPLY_JSON(ManifestShow);
RELCTL_REPLY_JSON(ManifestHistory);
RELCTL_REPLY_JSON(Supersession);
RELCTL_REPLY_JSON(ReplacedManifest);
RELCTL_REPLY_JSON(RollbackRecord);
RELCTL_REPLY_JSON(ManifestHistoryEntry);
RELCTL_REPLY_JSON(PromotionVote);
RELCTL_REPLY_JSON(PromotionUpstream);
RELCTL_REPLY_JSON(Promotion);
RELCTL_REPLY_JSON(Promotions);
RELCTL_REPLY_JSON(Supersessions);
RELCTL_REPLY_JSON(SupersessionDecision);
RELCTL_REPLY_JSON(ServerInfo);
RELCTL_REPLY_JSON(Event);
RELCTL_REPLY_JSON(AuditTrail);
RELCTL_REPLY_JSON(TracedRefusal::OwnLease);
RELCTL_REPLY_JSON(TracedRefusal::SupersedingLease);
RELCTL_REPLY_JSON(TracedRefusal::CurrentManifest);
RELCTL_REPLY_JSON(RefusalCause);
RELCTL_REPLY_JSON(TracedRefusal);
RELCTL_REPLY_JSON(JobTrace);
RELCTL_REPLY_JSON(OperationRecord);
RELCTL_REPLY_JSON(JobStatus);

#undef RELCTL_REPLY_JSON
// NOLINTEND(bugprone-macro-parentheses)

// A reply as the server sent it: for --json output.
template <class Reply> nlohmann::json toJson(const Reply& reply)
{
    nlohmann::json j;
    to_json(j, reply);
    return j;
}

} // namespace relctl
