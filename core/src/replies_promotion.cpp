// The keys of the promotion replies (relctl/replies_promotion.h).

#include "relctl/replies_promotion.h"

#include "replyfields.h"

namespace relctl {

namespace {

template <class Io, Is<PromotionVote> V> void fields(Io& io, V& v)
{
    io.required("by", v.by);
    io.nullableSince("login", v.login);
    io.nullable("reason", v.reason);
    io.required("at", v.at);
}

template <class Io, Is<PromotionUpstream> U> void fields(Io& io, U& u)
{
    io.required("env", u.env);
    io.required("soak_ms", u.soakMs);
    io.nullable("accepted_at", u.acceptedAt);
    io.nullable("soaked_ms", u.soakedMs);
    io.nullable("soak_remaining_ms", u.soakRemainingMs);
    io.required("current", u.current);
}

template <class Io, Is<Promotion> P> void fields(Io& io, P& p)
{
    io.required("id", p.id);
    io.required("env", p.env);
    io.required("release", p.release);
    io.required("generation", p.generation);
    io.required("state", p.state);
    io.required("requested_by", p.requestedBy);
    io.nullableSince("requested_login", p.requestedLogin);
    io.nullable("reason", p.reason);
    io.required("requested_at", p.requestedAt);
    io.nullable("decided_at", p.decidedAt);
    io.required("approvals_required", p.approvalsRequired);
    io.nullableSince("approvals_given", p.approvalsGiven);
    io.nullableSince("approver_role", p.approverRole);
    io.required("approvals", p.approvals);
    io.nullable("denial", p.denial);
    io.nullable("upstream", p.upstream);
    io.required("current", p.current);
    io.required("candidate_manifest", p.candidateManifest);
}

template <class Io, Is<Promotions> P> void fields(Io& io, P& p)
{
    io.required("promotions", p.promotions);
}

template <class Io, Is<PromotionRequested> R> void fields(Io& io, R& r)
{
    io.merged(r.promotion);
    io.required("status", r.status);
    io.required("created", r.created);
}

template <class Io, Is<PromotionDecision> D> void fields(Io& io, D& d)
{
    io.merged(d.promotion);
    io.required("status", d.status);
    io.required("changed", d.changed);
    io.omittable("message", d.message);
}

} // namespace

RELCTL_JSON_FROM_FIELDS(PromotionVote)
RELCTL_JSON_FROM_FIELDS(PromotionUpstream)
RELCTL_JSON_FROM_FIELDS(Promotion)
RELCTL_JSON_FROM_FIELDS(Promotions)
RELCTL_JSON_FROM_FIELDS(PromotionRequested)
RELCTL_JSON_FROM_FIELDS(PromotionDecision)

} // namespace relctl
