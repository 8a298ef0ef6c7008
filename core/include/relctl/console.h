#pragma once

// What the release console reads, as plain value types (no Qt, no libpqxx):
// core runs the queries on a worker's connection, the UI's models are fed
// with these values.

#include "relctl/event.h"
#include "relctl/replies.h"
#include "relctl/time.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace relctl {

class Database;

// A candidate waiting in an environment's queue, as the console shows it.
struct QueuedCandidate
{
    std::int64_t candidate = 0;
    std::int64_t position = 0; // 1: the one the queue serves next
    std::string job;
    std::string release;
    std::int64_t generation = 0;
    Timestamp queuedAt;
    std::optional<std::string> host;
    std::optional<std::string> jobUrl;
    std::optional<std::int64_t> skippedBy; // the supersession request that would skip it
    std::optional<std::int64_t> wins;      // the supersession request that names it the winner

    bool operator==(const QueuedCandidate&) const = default;
};

// Why an environment needs a person now (relctl.environment_attention, the
// one definition): reason is frozen, refused, decision, waiting, expiring or
// promotion_blocked; summary says it in words.
struct AttentionItem
{
    std::string reason;
    std::string summary;
    std::optional<Timestamp> at; // when it began (frozen), last happened (refused) or ends (expiring)

    bool operator==(const AttentionItem&) const = default;
};

struct EnvironmentRow
{
    std::string name;
    std::string group;         // the one set, else the name up to its first '.' (relctl.env_group)
    std::string policy;        // ordered | newest
    std::string supersede;     // auto | approval
    std::string serialization; // enforced | off
    std::optional<std::string> currentRelease;
    std::optional<std::int64_t> currentGeneration;
    std::optional<std::string> publishedBy; // the publishing job
    std::optional<Timestamp> publishedAt;
    // The live lease, if any.
    std::optional<std::string> holderJob;
    std::optional<std::string> holderRelease;
    std::optional<std::int64_t> holderToken;
    std::optional<std::int64_t> holderGeneration;
    std::optional<Timestamp> holderAcquiredAt;
    std::optional<std::string> holderHost;
    std::optional<Timestamp> leaseExpiresAt;
    std::int64_t queueLength = 0;
    std::vector<QueuedCandidate> queue; // in the order it is served
    std::int64_t pendingSupersessions = 0;
    std::int64_t pendingPromotions = 0; // open promotion requests
    bool frozen = false;
    std::optional<std::string> frozenBy;
    std::optional<std::string> frozenReason;
    std::optional<Timestamp> frozenAt;
    std::optional<std::string> promoteFrom;
    std::vector<AttentionItem> attention; // as of serverNow; empty: nothing needs a person
    Timestamp serverNow;                  // the server's clock when read: countdowns start from it
};

// Whether two reads of an environment say the same, whatever the clock
// (serverNow) when each was read: a live update repaints only what changed.
bool sameExceptClock(const EnvironmentRow& a, const EnvironmentRow& b);

// Filters for the audit browser; every one is applied by the server.
struct AuditFilter
{
    std::optional<std::string> env;
    std::optional<std::string> job; // a case-insensitive substring of the job's name
    std::optional<std::string> operation;
    std::optional<std::string> reason;
    std::optional<Timestamp> from;
    std::optional<Timestamp> to;
    // free text: matched against job, release, op id, host, reason, actor, job url, login and the
    // detail's values
    std::optional<std::string> text;
    std::optional<std::string> outcome; // accepted | rejected ("refused only")

    bool operator==(const AuditFilter&) const = default;
};

// The audit browser's order, decided by the server. Time is the event id:
// ids are stamped with `at` by the same insert, are unique, and are what the
// live updates follow. NULL values sort as larger than every value: last when
// ascending, first when descending.
struct AuditSort
{
    // In the order of catalogue::kAuditSortKeys.
    enum class Column {
        Time,
        Environment,
        Operation,
        Outcome,
        Reason,
        Job,
        Release,
        Generation,
        Token,
        Host,
        Actor
    };
    Column column = Column::Time;
    bool descending = true;

    bool operator==(const AuditSort&) const = default;
};

// The name relctl.console_audit knows a sort column by.
const char* auditSortKey(AuditSort::Column column);

// Where a page continues: after the row with this sort key and id. The key is
// the row's value in the sort column as text (empty optional: NULL); for the
// time sort the id alone is the key.
struct AuditCursor
{
    std::optional<std::string> key;
    std::int64_t id = 0;

    bool operator==(const AuditCursor&) const = default;
};

// The cursor that continues after `event` under `sort`.
AuditCursor auditCursorAfter(const Event& event, AuditSort::Column column);

// Keyset pagination under a sort: the next page holds the rows after `after`
// (from the first row when empty). With newerThan, the page holds instead the
// events with an id above it, oldest first, whatever the sort: what arrived
// since (live updates); `after` is then ignored.
struct AuditPageRequest
{
    AuditFilter filter;
    AuditSort sort;
    std::optional<AuditCursor> after;
    std::optional<std::int64_t> newerThan;
    int limit = 500;

    bool operator==(const AuditPageRequest&) const = default;
};

struct AuditPage
{
    std::vector<Event> events; // in the request's order
    bool more = false;         // another page exists
    // The newest event id the page's snapshot saw (0: an empty trail). Events
    // above it, if they match the filter, are new to the page's reader.
    std::int64_t horizon = 0;
};

// An event as relctl.console_audit_export sends it, for the export: the
// export's fields (auditExportFields() in relctl/auditexport.h) in their
// order, each as the server's text (`at` as a timestamptz under TimeZone
// UTC and DateStyle ISO: 2024-01-01 00:00:00.01+00), empty for NULL. The views point into buffers that the
// next row reuses.
using AuditRowText = std::vector<std::optional<std::string_view>>;

// One lease on the timeline: from acquisition to release, revoke or expiry.
struct LeaseSpan
{
    std::string env;
    std::int64_t token = 0;
    std::string job;
    std::string release;
    std::int64_t generation = 0;
    Timestamp acquiredAt;
    Timestamp endsAt;   // ended_at, else expires_at (for a live lease: its current expiry)
    std::string ending; // released | revoked | expired | live
};

// A point on the timeline: publishes, refusals, supersessions and other events.
struct TimelineMarker
{
    std::int64_t eventId = 0;
    std::string env;
    Timestamp at;
    std::string kind; // publish | refusal | superseded | queued | operator | rollback | promotion
    std::string label;
    std::string job; // the job the event concerns; empty for an operator's action without one
};

// A period an environment was frozen: from its freeze to the unfreeze that
// lifted it, or open-ended while it is still in force.
struct FrozenSpan
{
    std::string env;
    Timestamp from;
    std::optional<Timestamp> to; // empty: still frozen
    std::string by;              // the operator who froze it
    std::string reason;
};

struct TimelineSlice
{
    std::vector<std::string> environments; // lanes, in name order
    std::vector<LeaseSpan> leases;         // overlapping [from, to], by env then acquiredAt
    std::vector<TimelineMarker> markers;   // within [from, to], by env then at
    std::vector<FrozenSpan> freezes;       // overlapping [from, to], by env then from
    Timestamp serverNow;
    // The audit trail's first and last events, whatever the window: the
    // extent of the whole history (empty while the trail is empty).
    std::optional<Timestamp> historyFirst;
    std::optional<Timestamp> historyLast;
};

// What a promotion gate saw when it refused (NOT_PROMOTED, APPROVAL_REQUIRED,
// APPROVAL_DENIED) or the approver rules refused a decision (SELF_APPROVAL,
// NOT_APPROVER, DUPLICATE_APPROVAL), as the
// refusal's event recorded it. Every member is empty when the event did not
// say: a publish re-checking its lease's gate records no request, say.
struct PromotionGate
{
    // The environment promoted from, and the candidate's standing there.
    std::optional<std::string> upstreamEnv;
    std::optional<std::int64_t> soakMs;
    std::optional<Timestamp> upstreamAcceptedAt; // empty: not accepted there, or withdrawn by a rollback
    std::optional<std::int64_t> soakedMs;
    std::optional<std::int64_t> soakRemainingMs;
    std::optional<std::string> upstreamRelease; // what the upstream had current
    std::optional<std::int64_t> upstreamGeneration;
    // The promotion request, its approvals and its denial.
    std::optional<std::int64_t> promotion;
    std::optional<std::vector<std::string>> approvedBy;
    std::optional<std::int64_t> approvalsRequired;
    std::optional<std::string> deniedBy;
    std::optional<std::string> denialReason;
    std::optional<Timestamp> deniedAt;
    std::optional<std::string> requestedBy;    // SELF_APPROVAL: who asked (and tried to approve)
    std::optional<std::string> requestedLogin; // SELF_APPROVAL: the login that asked
    std::optional<std::string> approverRole;   // NOT_APPROVER: the role whose members may decide
    // DUPLICATE_APPROVAL: the decision already counted, under which name and login.
    std::optional<std::string> decidedBy;
    std::optional<std::string> decidedLogin;
};

// What caused a refusal (relctl.refusal_cause), as the console reads it:
// the row that decided it in one sentence and in parts (see RefusalCause in
// replies.h for which parts each kind sets).
struct TraceCause
{
    // superseded | lease_superseded | revoked | frozen | stale | expired | released | no_lease
    std::string kind;
    std::string summary;
    std::optional<std::string> job; // the winner, newer holder or publisher
    std::optional<std::string> release;
    std::optional<std::int64_t> generation;
    std::optional<std::int64_t> token;
    std::optional<std::string> host;
    std::optional<std::int64_t> pid;
    std::optional<std::string> jobUrl;
    std::optional<std::int64_t> approval; // the supersession approval that decided it
    std::optional<std::string> by;        // the approver or operator
    std::optional<std::string> reason;    // their reason
    std::optional<Timestamp> at;          // when it was decided
};

// The full story of one refusal, for the trace panel.
struct RefusalTrace
{
    Event event;
    std::optional<LeaseSpan> lease;        // the refused job's own lease
    std::optional<LeaseSpan> supersededBy; // the lease that beat it
    std::optional<std::string> supersedingHost;
    std::optional<std::int64_t> supersedingPid;
    std::optional<std::string> supersedingJobUrl;
    // The manifest current at the moment of the refusal, and who published it.
    std::optional<std::string> currentRelease;
    std::optional<std::int64_t> currentGeneration;
    std::optional<std::string> currentJob;
    std::optional<Timestamp> currentPublishedAt;
    std::optional<std::int64_t> publishedBeforeMs; // time from that publish to the refusal
    std::optional<PromotionGate> gate;             // a promotion gate's refusal: what it saw
    std::optional<TraceCause> cause;               // what decided it (none for a promotion gate)
};

// The Promotions view's read (relctl.console_promotions): the environments
// that take part in a promotion path, the open requests and the newest
// decided ones. A read of some environments covers them and those promoted
// from them (`covers`); a read of every environment covers everything (empty).
struct PromotionsRead
{
    // Only what the Promotions view reads of each environment is filled in:
    // name, promoteFrom, soakMs, approvalsRequired, approverRole, frozen, and
    // of current its id, release and generation (its job, token, publishedAt
    // and document are left empty). Every other member keeps its default
    // (no lease, an empty queue, zero counts): reading them cost the full
    // read two seconds at 10,000 environments. In name order.
    std::vector<Environment> environments;
    std::vector<Promotion> promotions;
    std::optional<std::vector<std::string>> covers;
};

// The console's queries. Each is one round trip on the given connection;
// call them on the thread that owns it.
class ConsoleQueries final
{
public:
    explicit ConsoleQueries(Database& db);

    // Every environment, or only those named (a live event's: absent names
    // are environments that no longer exist), in no particular order: the
    // console sorts them itself.
    std::vector<EnvironmentRow>
    environments(const std::optional<std::vector<std::string>>& names = std::nullopt);
    AuditPage auditPage(const AuditPageRequest& request);
    // Every event matching the filter, in the sort's order, read by one
    // statement over one snapshot and handed to `row` as it arrives (memory
    // stays flat however many match). Unlike a page, the statement is not
    // bounded by the session's statement timeout; it fails instead when no
    // rows arrive within the call bound (Database::callTimeout). An exception
    // thrown by `row` cancels the statement and propagates unchanged.
    void auditRows(const AuditFilter& filter, const AuditSort& sort,
                   const std::function<void(const AuditRowText& row)>& row);
    // The window's leases, markers and freezes, of every environment or only
    // of those named (a live event's lanes).
    TimelineSlice timeline(Timestamp from, Timestamp to,
                           const std::optional<std::vector<std::string>>& envs = std::nullopt);
    // The promotion paths and requests, of every environment or of those
    // named (see PromotionsRead), with at most decidedLimit decided requests.
    PromotionsRead promotions(const std::optional<std::vector<std::string>>& names = std::nullopt,
                              int decidedLimit = 100);
    std::optional<RefusalTrace> trace(std::int64_t eventId); // empty: no such event, or not a refusal
    // Distinct values for the filter drop-downs.
    std::vector<std::string> operations();
    std::vector<std::string> reasons();

private:
    Database& m_db;
};

} // namespace relctl
