#pragma once

// Where one login stands on a promotion request, by the protocol's four-eyes
// rules, which are decided on logins (decide_promotion): whether it opened
// the request (SELF_APPROVAL), approved or denied it already
// (DUPLICATE_APPROVAL), and which role may decide it. The Promotions view
// offers Approve by it and the decision notifier says what waits by it, so
// the two never disagree.

#include "relctl/replies_environment.h"
#include "relctl/replies_promotion.h"

#include <QString>
#include <optional>
#include <string>

namespace relctl::ui {

struct PromotionStanding
{
    // The role whose members alone may decide it: the request's, else its
    // environment's (empty: any release manager).
    std::optional<std::string> approverRole;
    bool requestedByLogin = false;
    const relctl::PromotionVote* approval = nullptr; // this login's approval (into `promotion`)
    bool deniedByLogin = false;

    // `env`: the request's environment as last read (null when unknown);
    // an empty login stands nowhere.
    static PromotionStanding of(const relctl::Promotion& promotion, const relctl::Environment* env,
                                const QString& login);
};

} // namespace relctl::ui
