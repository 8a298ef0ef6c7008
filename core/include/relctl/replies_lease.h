#pragma once

// The replies of the lease and its queue (migrations/functions/lease.sql,
// queue.sql): a live lease, a candidate waiting for one, the lease an
// environment holds, a revocation, and the supersession requests that let a
// newer candidate skip older ones; and the accepted answers of the lease's
// writes (acquire, renew, release, a candidate dropped from the queue, a
// supersession decided).

#include "relctl/replyjson.h"
#include "relctl/time.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace relctl {

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

// relctl.acquire's accepted reply (relctl.grant_lease): the lease granted,
// at once or to the request's queued candidate, or the recorded grant a retry
// with the same op id and secret is answered with (replayed), and the lease's
// credentials for the job that asked (relctl.credentials).
struct Grant
{
    std::string status; // ok
    std::string env;
    std::int64_t token = 0;
    std::string job;
    std::string release;
    std::int64_t generation = 0;
    Timestamp acquiredAt;
    Timestamp expiresAt;
    std::int64_t ttlMs = 0;
    std::optional<std::string> opId;
    bool replayed = false;
    // Only when the grant was rebuilt from the candidate's row
    // (relctl.candidate_outcome) rather than read from the op id's record.
    std::optional<std::int64_t> candidate;
    std::string leaseId;
    std::string handle; // ENV:TOKEN:LEASE_ID, what the job passes back
};

// relctl.renew's accepted reply: the lease's new expiry.
struct Renewal
{
    std::string status; // ok
    std::string env;
    std::int64_t token = 0;
    std::string job;
    std::string release;
    std::int64_t generation = 0;
    Timestamp expiresAt;
    std::int64_t ttlMs = 0;
};

// relctl.release's accepted reply, also for a lease that had already ended
// (released false; state says how it ended).
struct LeaseEnd
{
    std::string status; // ok
    std::string env;
    std::int64_t token = 0;
    std::string job;
    std::string release;
    std::int64_t generation = 0;
    bool released = false;
    std::string state; // released | already-released | revoked | superseded | expired
    // With a stop report: what stopping the command's process group may not have reached.
    std::optional<std::string> caveat;
};

// relctl.queue_drop's accepted reply: the candidate as dropped, who dropped it and why.
struct DroppedCandidate
{
    Candidate candidate;
    std::string status; // ok
    std::string droppedBy;
    std::string reason;
};

RELCTL_REPLY_JSON(Lease);
RELCTL_REPLY_JSON(Candidate);
RELCTL_REPLY_JSON(LeaseShow);
RELCTL_REPLY_JSON(Revocation);
RELCTL_REPLY_JSON(Supersession);
RELCTL_REPLY_JSON(Supersessions);
RELCTL_REPLY_JSON(SupersessionDecision);
RELCTL_REPLY_JSON(Grant);
RELCTL_REPLY_JSON(Renewal);
RELCTL_REPLY_JSON(LeaseEnd);
RELCTL_REPLY_JSON(DroppedCandidate);

} // namespace relctl
