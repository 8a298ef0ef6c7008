#pragma once

#include "relctl/migrations.h"
#include "relctl/protocol.h"
#include "relctl/replies.h"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace relctl {

namespace internal {
class DatabaseGate;
}

// What a freeze or unfreeze of many environments did: the environments it
// changed, and those already in the state asked for. Both in natural order.
struct BulkFreezeResult
{
    std::vector<std::string> changed;
    std::vector<std::string> unchanged;
};

// text with the passwords masked ("***"): those conninfo carries (password=
// of the keyword/value form; a URI's user:password@ and ?password=), as
// written and as decoded, and anything in text of either form. For every
// message that may echo a connection string or a piece of one: libpq's own
// quote what they could not parse (an invalid percent-encoding, a whole URI).
std::string redactPasswords(const std::string& text, const std::string& conninfo = {});

// The typed client of a relctl database. Every protocol operation is one call
// of a SQL function (see migrations/): one statement in one round trip, one
// transaction, all decisions on the server. One Database belongs to one thread.
class Database final
{
public:
    // Connects with a libpq connection string (keyword/value or URI; empty:
    // libpq's PG* environment). Throws Error(Usage) for a malformed string and
    // Error(Unavailable) when the server cannot be reached. The session is
    // bounded (connect, lock and statement timeouts, TCP keepalives) unless
    // the string sets a bound itself; see docs/security.md, "Timeouts".
    explicit Database(const std::string& conninfo, ClientContext client = ClientContext::current());
    ~Database();
    Database(Database&&) noexcept;
    Database& operator=(Database&&) noexcept;

    // How long one call waits for its reply before the connection is cut and
    // the call fails with Error(Unavailable) (a write's outcome is then
    // unknown). Default: a little more than the session's statement_timeout,
    // or $RELCTL_CALL_TIMEOUT. Afterwards the Database is unusable: connect again.
    std::chrono::milliseconds callTimeout() const;
    void setCallTimeout(std::chrono::milliseconds bound);

    // Schema. Migrations run one per transaction under a session advisory lock,
    // so concurrent runs wait for each other and the later one finds nothing to
    // do. After them, the function modules are re-applied, together in one
    // transaction, when any of them changed or a migration was applied. Needs
    // a superuser (it creates the group roles and hands everything to the
    // NOLOGIN owner role).
    MigrationReport migrate(const std::vector<Migration>& migrations = bundledMigrations(),
                            const std::vector<SchemaModule>& modules = bundledModules());
    std::vector<MigrationState>
    migrationStatus(const std::vector<Migration>& migrations = bundledMigrations(),
                    const std::vector<SchemaModule>& modules = bundledModules());

    // Environments. A group filter is a group name; a match is a
    // shell-style glob on the name (* any run of characters, ? any one).
    // Listings come unordered: sort them with naturalLess.
    EnvironmentAdded addEnvironment(const EnvironmentSpec& spec);
    EnvironmentList listEnvironments(const std::optional<std::string>& group = std::nullopt,
                                     const std::optional<std::string>& match = std::nullopt);
    // One line's worth of each (env list's text), read as rows: a fifth of
    // the reply. In natural order of name, unlike the other listings: the
    // rows are read where they arrived (EnvironmentBriefs).
    EnvironmentBriefs briefEnvironments(const std::optional<std::string>& group = std::nullopt,
                                        const std::optional<std::string>& match = std::nullopt);
    // The names a group or a pattern selects (at most 10,000; see truncated).
    EnvironmentNames environmentNames(const std::optional<std::string>& group,
                                      const std::optional<std::string>& match);
    // The environments that need a person now (relctl.environment_attention).
    AttentionList attention(const std::optional<std::string>& group = std::nullopt,
                            const std::optional<std::string>& match = std::nullopt);
    Environment showEnvironment(const std::string& name);
    // group: the environment's group ("" back to the default: the name up to
    // its first '.'); none: unchanged.
    EnvironmentSet setEnvironment(const EnvironmentSettings& settings,
                                  const std::optional<std::string>& group = std::nullopt);
    // In every group (of the environments group and match select) that has
    // GROUP.STAGE for each stage, each stage after the first is promoted
    // from the one before it, with the soak and approvals given (none:
    // unchanged). One transaction; each change recorded as an env-set event.
    PromotionPaths setPromotionPaths(const std::vector<std::string>& stages,
                                     const std::optional<std::string>& group,
                                     const std::optional<std::string>& match,
                                     std::optional<std::chrono::milliseconds> soak,
                                     std::optional<int> approvals);

    // The lease protocol. Each answer is an Outcome: accepted, it carries a
    // Grant, Renewal, LeaseEnd or Publication (outcome.reply<Grant>()). With
    // request.wait, a busy environment queues the request as a candidate and
    // waits (LISTEN/NOTIFY, plus a timer at the holder's expiry) until it is
    // granted, refused, or the wait runs out.
    Outcome acquire(const AcquireRequest& request);
    Outcome renew(const Handle& lease, std::optional<std::chrono::milliseconds> ttl = {});
    // The note (e.g. why a wrapper gave the lease up) is recorded with the
    // event, and so is what a wrapper stopped (also for a lease that already
    // ended: it only ever touches the presented token's lease).
    Outcome release(const Handle& lease, const std::string& note = {},
                    const std::optional<StopReport>& stopped = std::nullopt);
    // retryLockedUntil: until when a publish that found the environment
    // locked (lock_timeout ran out: nothing was applied) is sent again, as a
    // --wait does. `relctl run` passes its lease's end: a command that
    // succeeded is not reported as failed because the server was busy for a
    // few seconds. None: exit 9 at once.
    Outcome publish(const PublishRequest& request,
                    std::optional<std::chrono::steady_clock::time_point> retryLockedUntil = std::nullopt);
    Outcome publishUnserialized(const UnserializedPublishRequest& request);

    // Operator controls, recorded with who and why.
    Revocation revoke(const std::string& env, const std::string& by, const std::string& reason);
    FreezeChange freeze(const std::string& env, const std::string& by, const std::string& reason);
    FreezeChange unfreeze(const std::string& env, const std::string& by,
                          const std::optional<std::string>& reason = std::nullopt);
    // Many environments at once (a group, a pattern's matches): one
    // transaction, all or nothing (an unknown, repeated or missing name
    // refuses the whole call with Error(Usage)), the environments locked in
    // name order, one event per environment changed, each with the reason.
    // At most 10,000 names.
    BulkFreezeResult freezeMany(const std::vector<std::string>& envs, const std::string& by,
                                const std::string& reason);
    BulkFreezeResult unfreezeMany(const std::vector<std::string>& envs, const std::string& by,
                                  const std::optional<std::string>& reason);
    Supersessions supersessions(const std::optional<std::string>& env, bool all);
    // A release manager takes a waiting candidate out of its queue: its
    // waiter is refused CANDIDATE_DROPPED, and the next candidate moves up.
    // Accepted: reply<DroppedCandidate>().
    Outcome dropCandidate(std::int64_t candidate, const std::string& by, const std::string& reason);
    // Accepted: the request as decided (reply<SupersessionDecision>()). A
    // decision the approver rules refuse (NOT_APPROVER, SELF_APPROVAL) is
    // recorded and answered as a refusal, like a promotion's.
    Outcome decideSupersession(std::int64_t request, bool approve, const std::string& by,
                               const std::optional<std::string>& reason);

    // Promotions. The replies are the request (reply<PromotionRequested>(),
    // reply<PromotionDecision>()) or a refusal: DISPATCH_FROZEN for a
    // request on a frozen environment; SELF_APPROVAL when the requester's login (or
    // name) approves, DUPLICATE_APPROVAL when a login decides twice,
    // NOT_APPROVER for a login outside the environment's approver role.
    Outcome requestPromotion(const PromotionRequest& request);
    Promotions promotions(const std::optional<std::string>& env, bool all);
    Outcome decidePromotion(std::int64_t id, bool approve, const std::string& by,
                            const std::optional<std::string>& reason);
    // Rollback (accepted: reply<RollbackDone>(), rolled back or already
    // current): busy while another job holds a live lease, after request.wait
    // (woken by the environment's notifications and the holder's expiry).
    Outcome rollback(const RollbackRequest& request);

    // The server and schema. Cheap; the console times it as its round trip.
    ServerInfo serverInfo();
    // The statement serverInfo() sends: catalogue reads any login may make,
    // so a login with no relctl role learns that it has none.
    static const char* const serverInfoQuery;

    // Keeps this connection busy on the server (pg_sleep): a stand-in for a
    // slow query, for diagnostics and the console's responsiveness tests.
    void sleepOnServer(double seconds);

    // Reading
    LeaseShow showLease(const std::string& env);
    ManifestShow showManifest(const std::string& env);
    ManifestHistory manifestHistory(const std::string& env);
    AuditTrail audit(const AuditQuery& query);
    JobTrace trace(const std::string& job);
    OperationRecord showOperation(const std::string& opId);
    // What became of the job's newest operation (relctl.job_state).
    JobStatus jobStatus(const std::string& job);
    // The same state model for one op id (relctl.op_state).
    JobStatus operationStatus(const std::string& opId);

private:
    // core's other readers (the console's queries, the history checker)
    // share the connection through this one gate (core/src/database_impl.h).
    friend class internal::DatabaseGate;
    struct Impl;
    std::unique_ptr<Impl> d;
};

// The first connection of a job that may wait (--wait): a connection the
// server did not answer within connect_timeout is tried again, after 0.1 s
// and then up to 1 s, until the wait runs out. When hundreds of jobs start at
// once, the postmaster, which starts sessions one at a time, can take longer
// than that to reach the last of them; nothing was sent yet. Every other
// failure (refused, unknown host, authentication) is thrown at once, as is
// the last unanswered one. Without a wait, connect() once. `tell` hears the
// first retry, once (the CLI prints it as a diagnostic).
Database connectWithin(const std::function<Database()>& connect,
                       std::optional<std::chrono::milliseconds> wait,
                       const std::function<void(const std::string&)>& tell = {});

} // namespace relctl
