// PromotionStanding: a login's place on a promotion request.
#include "promotionstanding.h"

namespace relctl::ui {

PromotionStanding PromotionStanding::of(const relctl::Promotion& p, const relctl::Environment* env,
                                        const QString& login)
{
    PromotionStanding s;
    if (p.approverRole && !p.approverRole->empty())
        s.approverRole = p.approverRole;
    else if (env && env->approverRole && !env->approverRole->empty())
        s.approverRole = env->approverRole;
    if (login.isEmpty())
        return s;
    // Compared as UTF-8, the login converted once: a full read of the
    // promotions asks this of every open and approved request.
    const std::string mine = login.toStdString();
    const auto is = [&mine](const std::optional<std::string>& who) { return who && *who == mine; };
    s.requestedByLogin = is(p.requestedLogin);
    for (const relctl::PromotionVote& v : p.approvals)
        if (is(v.login))
            s.approval = &v;
    s.deniedByLogin = p.denial && is(p.denial->login);
    return s;
}

} // namespace relctl::ui
