#pragma once

// The replies about what happened and what became of it: the audit trail
// (relctl.event_json, relctl.audit), the trace of a job's refusals
// (relctl.trace), the stored outcome of an operation (relctl.op_show) and the
// state of a job or operation (relctl.job_state, relctl.op_state); and the
// server itself. The event itself is relctl/event.h, the one type every
// reader of the trail shares.

#include "relctl/event.h"
#include "relctl/protocol.h"
#include "relctl/replyjson.h"
#include "relctl/time.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace relctl {

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

// The server and schema; cheap, so the console times it as its round trip.
struct ServerInfo
{
    std::string serverVersion;
    std::string database;
    std::string login; // session_user: who the server says this connection is
    Timestamp now;
    std::optional<std::int64_t> schemaVersion; // empty before the first migration
    // relctl's group roles whose privileges the login has (relctl_job,
    // relctl_reviewer, relctl_manager; pg_has_role USAGE, so a role it must
    // SET ROLE to first does not count): what it may call.
    std::vector<std::string> roles;
    // Every role the login is a member of: an environment's approver role
    // (env set --approver-role) is checked against these, as decide_promotion
    // checks it.
    std::vector<std::string> memberOf;
    bool tls = false; // the connection is encrypted (pg_stat_ssl)

    bool hasRole(const std::string& role) const;
    bool isMemberOf(const std::string& role) const;
};

RELCTL_REPLY_JSON(ServerInfo);
// relctl.event_json: one row of the audit trail (relctl/event.h).
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

} // namespace relctl
