#pragma once

// `relctl lease acquire` as the tests run it through the CLI: its argument
// list and the lease it answers with, built and read in one place, so that a
// change to the command's options or to its --json reply is one edit here and
// not one in every test file that takes a lease.

#include "relctlprocess.h"

#include <string>

// `relctl --json lease acquire` of release r<generation> at that generation,
// for job on env. The caller appends what its tests vary (--ttl, --wait,
// --op-id).
Args leaseAcquireArgs(const std::string& env, const std::string& job, int generation);

// What a test needs of a lease it acquired to use it, or to attack it.
struct AcquiredLease
{
    std::string handle; // what RELCTL_LEASE takes
    std::string token;  // the fencing token, as text for SQL
    std::string id;     // 32 hex digits
};

// Runs relctl with args (a `--json lease acquire`) against dsn and reads the
// lease from its reply. A refusal stops the test binary (qFatal): the callers
// cannot go on without the lease.
AcquiredLease acquireLease(const std::string& dsn, const Args& args, const Env& env = {});
