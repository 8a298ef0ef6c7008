#pragma once

// One event of the audit trail (relctl.events): the one type the CLI's
// `relctl audit`, the console's browser and timeline, the export and the
// history checker all read. Each reader fills what its SQL function returns
// (relctl.audit, relctl.console_audit, relctl.history); a member a function
// does not send stays empty, and the comments say which.

#include "relctl/time.h"

#include <cstdint>
#include <optional>
#include <string>

namespace relctl {

struct Event
{
    std::int64_t id = 0;
    Timestamp at;
    std::optional<std::string> env; // empty on events of no environment
    std::string operation;
    std::string outcome; // accepted | rejected
    std::optional<std::string> reason;
    std::optional<std::string> job;
    std::optional<std::string> release;
    std::optional<std::int64_t> generation;
    std::optional<std::int64_t> token;
    // What was current when a write was judged: the lease's token and the
    // environment's release and generation.
    std::optional<std::int64_t> currentToken;
    std::optional<std::int64_t> currentGeneration;
    std::optional<std::string> currentRelease;
    std::optional<std::string> opId;
    std::optional<std::string> host;
    std::optional<std::int64_t> pid;
    std::optional<std::string> jobUrl;
    // Who: the person an operator action names (--by), the database login
    // that made the call, and the address it came from (none: a local
    // socket). The login and address are the server's, not the caller's word.
    std::optional<std::string> actor;
    std::optional<std::string> dbUser;
    std::optional<std::string> clientAddr;
    // The event's detail as compact JSON (keys in byte order); none when it
    // has none. Kept as text: the console shows it and the export copies it,
    // and only `relctl audit --json` needs it as a value.
    std::optional<std::string> detail;
    // The environment's high-water mark (the highest generation ever
    // accepted there) when the event was recorded: what a STALE_GENERATION
    // refusal is judged against since rollbacks exist. Empty on events
    // recorded before migration 0006.
    std::optional<std::int64_t> highWaterGeneration;

    // Read by the history checker only (relctl.history):
    // a publish without a lease (serialization off): it presents no token;
    bool unserialized = false;
    // the manifest an accepted publish wrote;
    std::optional<std::int64_t> manifestId;
    // whose request an accepted acquire or publish was: the session's login,
    // or for a queued candidate granted on its behalf the login it queued
    // with. Empty on other events, and on a grant that recorded another
    // session's login (a candidate queued before migration 0011, handed over
    // by the session that freed the lease);
    std::optional<std::string> login;
    // what an env-set changed of the promotion path: the environment it is
    // promoted from ("" when cleared), and the soak. Empty: unchanged.
    std::optional<std::string> promoteFrom;
    std::optional<std::int64_t> soakMs;
};

} // namespace relctl
