#pragma once

// The replies of the lease and its queue (migrations/functions/lease.sql,
// queue.sql): a live lease, a candidate waiting for one, the lease an
// environment holds, a revocation, and the supersession requests that let a
// newer candidate skip older ones.

#include "relctl/replies_audit.h" // Timestamp
#include "relctl/replyjson.h"

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

RELCTL_REPLY_JSON(Lease);
RELCTL_REPLY_JSON(Candidate);
RELCTL_REPLY_JSON(LeaseShow);
RELCTL_REPLY_JSON(Revocation);
RELCTL_REPLY_JSON(Supersession);
RELCTL_REPLY_JSON(Supersessions);
RELCTL_REPLY_JSON(SupersessionDecision);

} // namespace relctl
