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
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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
    // Its group (relctl.env_group: the one set, else the name up to its
    // first '.'; none on a schema before migration 0016).
    std::optional<std::string> group;
};

// relctl.env_list (by name as text; the CLI sorts it naturally).
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
        std::optional<std::string> group;        // "" when back to the default
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

// relctl.env_brief: one line's worth of an environment (`relctl env list`),
// read in place: its text points into the EnvironmentBriefs that gave it,
// and is valid while that lives.
struct EnvironmentBrief
{
    std::string_view name;
    std::string_view group;
    std::optional<std::string_view> release; // the current manifest's, if any
    std::optional<std::int64_t> generation;
    std::optional<std::string_view> holder;  // the live lease's job, if any
    std::optional<std::int64_t> remainingMs; // of the live lease
    bool frozen = false;
    std::int64_t waiting = 0; // queued candidates
    std::optional<std::string_view> promoteFrom;
};

// relctl.env_brief's rows, kept as the server sent them and read where they
// arrived, in natural order of name (svc2 before svc10). At 10,000
// environments, copying them into values first cost the client more page
// faults than holding the server's answer.
class EnvironmentBriefs final
{
public:
    std::size_t size() const;
    bool empty() const { return size() == 0; }
    EnvironmentBrief operator[](std::size_t i) const;

private:
    friend class Database;
    struct Rows;
    std::shared_ptr<const Rows> m_rows;
};

// relctl.env_names: the environments a group or a pattern selects.
struct EnvironmentNames
{
    std::vector<std::string> environments;
    bool truncated = false; // more than the 10,000 a bulk call takes
};

// One reason an environment needs a person (relctl.environment_attention).
struct AttentionReason
{
    std::string reason; // frozen | refused | decision | waiting | expiring | promotion_blocked
    std::string summary;
    std::optional<Timestamp> at; // when it began, last happened or ends
};

struct EnvironmentAttention
{
    std::string name;
    std::string group;
    std::vector<AttentionReason> attention;
};

// relctl.attention: the environments that need a person now.
struct AttentionList
{
    Timestamp serverNow;
    std::vector<EnvironmentAttention> environments; // unordered
};

// relctl.env_paths: the promotion paths set per group.
struct PromotionPaths
{
    struct Path
    {
        std::string group;
        std::string env;
        std::string promoteFrom;
        EnvironmentSet::Changed changed; // empty: it was already so
    };
    struct Skipped
    {
        std::string group;
        std::vector<std::string> missing; // the stages it lacks
    };
    std::string status; // ok
    std::vector<Path> paths;
    std::vector<Skipped> skipped;
};

RELCTL_REPLY_JSON(Frozen);
RELCTL_REPLY_JSON(Environment);
RELCTL_REPLY_JSON(EnvironmentList);
RELCTL_REPLY_JSON(EnvironmentAdded);
RELCTL_REPLY_JSON(EnvironmentSet::Changed);
RELCTL_REPLY_JSON(EnvironmentSet);
RELCTL_REPLY_JSON(FreezeChange);
RELCTL_REPLY_JSON(EnvironmentNames);
RELCTL_REPLY_JSON(AttentionReason);
RELCTL_REPLY_JSON(EnvironmentAttention);
RELCTL_REPLY_JSON(AttentionList);
RELCTL_REPLY_JSON(PromotionPaths::Path);
RELCTL_REPLY_JSON(PromotionPaths::Skipped);
RELCTL_REPLY_JSON(PromotionPaths);

} // namespace relctl
