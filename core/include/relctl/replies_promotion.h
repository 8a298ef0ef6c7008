#pragma once

// The replies about promotions (migrations/functions/promotions.sql): a
// request to promote a release to an environment, with its approvals, its
// denial and where it stands upstream, and the list of them; and the
// accepted answers of opening and deciding one.

#include "relctl/replyjson.h"
#include "relctl/time.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace relctl {

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

// relctl.promote_request's accepted reply: the request, opened now or the
// one already there (created false).
struct PromotionRequested
{
    Promotion promotion;
    std::string status; // ok
    bool created = false;
};

// relctl.decide_promotion's accepted reply: the request as decided. A login's
// repeated decision changes nothing (changed false) and says so (message).
struct PromotionDecision
{
    Promotion promotion;
    std::string status; // ok
    bool changed = false;
    std::optional<std::string> message;
};

RELCTL_REPLY_JSON(PromotionVote);
RELCTL_REPLY_JSON(PromotionUpstream);
RELCTL_REPLY_JSON(Promotion);
RELCTL_REPLY_JSON(Promotions);
RELCTL_REPLY_JSON(PromotionRequested);
RELCTL_REPLY_JSON(PromotionDecision);

} // namespace relctl
