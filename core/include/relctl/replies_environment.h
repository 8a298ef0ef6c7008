#pragma once

// The replies about environments (migrations/functions/environments.sql):
// relctl.environment_json, which carries the environment's lease, queue and
// current manifest, and the calls that list, add, change and freeze
// environments.

#include "relctl/replies_lease.h"
#include "relctl/replies_manifest.h"
#include "relctl/replyjson.h"
#include "relctl/time.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace relctl {

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

RELCTL_REPLY_JSON(Frozen);
RELCTL_REPLY_JSON(Environment);
RELCTL_REPLY_JSON(EnvironmentList);
RELCTL_REPLY_JSON(EnvironmentAdded);
RELCTL_REPLY_JSON(EnvironmentSet::Changed);
RELCTL_REPLY_JSON(EnvironmentSet);
RELCTL_REPLY_JSON(FreezeChange);

} // namespace relctl
