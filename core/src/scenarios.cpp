// The rehearsal scenarios. Each plays one story through real `relctl`
// processes on its own environment of the scratch database, logs what it does,
// and states what must have happened as expectations; the history checker
// then judges everything the database recorded (rehearsal.cpp).
//
// Deploy commands wait for a "go" file the scenario creates, not for a timer:
// a scenario moves on when the database shows the state its story needs
// (a lease held, a candidate queued), so it plays the same on a slow machine.

#include "rehearsal_stage.h"
#include "session.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <pqxx/pqxx>
#include <string>

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace relctl::rehearsal {

namespace {

std::string jobOf(const Stage& stage, const std::string& actor)
{
    return stage.env() + "-" + actor;
}

std::string quoted(const fs::path& path)
{
    std::string out = "'";
    for (char c : path.string())
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

fs::path manifestOf(Stage& stage, const std::string& release)
{
    return stage.writeFile("manifest-" + release + ".json", R"({"image": "registry.example/app:)" + release +
                                                                R"(", "rehearsal": ")" + stage.env() +
                                                                "\"}\n");
}

// A deploy that records its process id and the lease handle it was given,
// then waits until the scenario creates its go file.
std::string deployCommand(Stage& stage, const std::string& actor)
{
    const fs::path& dir = stage.directory();
    return "echo $$ > " + quoted(dir / (actor + ".pid")) + "; echo \"$RELCTL_LEASE\" > " +
           quoted(dir / (actor + ".lease")) + "; while [ ! -e " + quoted(dir / (actor + ".go")) +
           " ]; do sleep 0.05; done; echo deployed > " + quoted(dir / (actor + ".deployed"));
}

void go(Stage& stage, const std::string& actor)
{
    stage.writeFile(actor + ".go", "");
}

bool deployed(Stage& stage, const std::string& actor)
{
    return fs::exists(stage.directory() / (actor + ".deployed"));
}

// `relctl run` for a release: acquire (queueing up to `wait`), renew, deploy,
// publish when the deploy succeeds, release.
std::vector<std::string> runArgs(Stage& stage, const std::string& actor, const std::string& release,
                                 std::int64_t generation, const std::string& wait, const std::string& command)
{
    return {"run",
            "--env",
            stage.env(),
            "--job",
            jobOf(stage, actor),
            "--release",
            release,
            "--generation",
            std::to_string(generation),
            "--ttl",
            stage.ttlText(),
            "--wait",
            wait,
            "--grace",
            "1s",
            "--op-id",
            jobOf(stage, actor),
            "--manifest",
            manifestOf(stage, release).string(),
            "--",
            "sh",
            "-c",
            command};
}

std::optional<Lease> liveLease(Stage& stage)
{
    return stage.db().showEnvironment(stage.env()).lease;
}

bool holds(Stage& stage, const std::string& actor)
{
    const auto lease = liveLease(stage);
    return lease && lease->job == jobOf(stage, actor);
}

bool queued(Stage& stage, const std::string& actor)
{
    const Environment e = stage.db().showEnvironment(stage.env());
    return std::any_of(e.queue.begin(), e.queue.end(),
                       [&](const Candidate& c) { return c.job == jobOf(stage, actor); });
}

void waitHolds(Stage& stage, const std::string& actor)
{
    stage.waitFor(actor + " to hold the lease", 20s, [&] { return holds(stage, actor); });
    const auto lease = liveLease(stage);
    stage.log(actor, "holds the lease", "granted", {}, lease->token, lease->generation);
}

void waitQueued(Stage& stage, const std::string& actor)
{
    stage.waitFor(actor + " to queue", 20s, [&] { return queued(stage, actor); });
    stage.log(actor, "waits in the queue", "queued");
}

std::string trimmed(std::string text)
{
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
        text.pop_back();
    return text;
}

std::optional<LeaseSpan> leaseOf(const TimelineSlice& slice, const std::string& job)
{
    for (const LeaseSpan& l : slice.leases)
        if (l.job == job)
            return l;
    return std::nullopt;
}

// ---------------------------------------------------------------------------

void playRace(Stage& stage)
{
    Actor& r9 = stage.start("r9", runArgs(stage, "r9", "r9", 9, "20s", deployCommand(stage, "r9")));
    stage.log("r9", "relctl run (release r9, generation 9)", "started");
    waitHolds(stage, "r9");
    Actor& r8 = stage.start("r8", runArgs(stage, "r8", "r8", 8, "20s", deployCommand(stage, "r8")));
    stage.log("r8", "relctl run (release r8, generation 8)", "started", {}, {}, {},
              "the older pipeline, slower");
    waitQueued(stage, "r8");
    go(stage, "r9");
    stage.log("r9", "deploy", "finished", {}, {}, {}, "r9 passed validation; its wrapper publishes");
    const int c9 = stage.finish(r9, 20s);
    stage.logExit(r9, "relctl run", c9);
    go(stage, "r8"); // would let r8's deploy finish, had it ever started
    const int c8 = stage.finish(r8, 20s);
    stage.logExit(r8, "relctl run", c8);

    stage.expectExit("r9", c9, 0, "published r9");
    stage.expectExit("r8", c8, 4, "STALE_GENERATION: r8 is older than the published r9");
    stage.expect("r8-never-deployed", !deployed(stage, "r8"),
                 deployed(stage, "r8")
                     ? "r8's deploy command ran although its generation was stale"
                     : "r8's deploy command never ran: the freshness check refused it first");
    stage.expectTraced("r8", "STALE_GENERATION");
    stage.expectCurrent("r9");
}

void playExpiry(Stage& stage)
{
    Actor& r8 = stage.start("r8", runArgs(stage, "r8", "r8", 8, "20s", deployCommand(stage, "r8")));
    stage.log("r8", "relctl run (release r8, generation 8)", "started");
    waitHolds(stage, "r8");
    stage.waitFor("r8's deploy to start", 10s, [&] {
        return !trimmed(stage.readFile("r8.lease")).empty() && !stage.readFile("r8.pid").empty();
    });
    const std::string handle = trimmed(stage.readFile("r8.lease"));
    const int deployPid = std::stoi(stage.readFile("r8.pid"));

    r8.signal(SIGSTOP);
    stage.log("rehearsal", "SIGSTOP r8's relctl run", "paused", {}, {}, {},
              "the wrapper stops renewing; its deploy (pid " + std::to_string(deployPid) + ") runs on");
    stage.pause(stage.ttl() + 300ms);
    stage.expect("r8-lease-expired", !holds(stage, "r8"),
                 "r8's lease ran out on the server's clock while r8 was paused");

    const int c9 = stage.play("r9", "relctl run (release r9, generation 9)",
                              runArgs(stage, "r9", "r9", 9, "20s", "true"));
    r8.signal(SIGCONT);
    stage.log("rehearsal", "SIGCONT r8's relctl run", "resumed");
    const int c8 = stage.finish(r8, stage.ttl() + 15s);
    stage.logExit(r8, "relctl run", c8);
    // The wrapper killed its deploy's process group before exiting.
    stage.waitFor("r8's deploy to be gone", 5s, [&] { return kill(deployPid, 0) != 0 && errno == ESRCH; });
    stage.log("rehearsal", "r8's deploy", "killed", {}, {}, {},
              "pid " + std::to_string(deployPid) + " is gone");

    // What a hand-rolled job would do next with its old handle.
    const int renew =
        stage.play("r8", "lease renew (late, old handle)", {"lease", "renew"}, {"RELCTL_LEASE=" + handle});
    const int publish = stage.play("r8", "publish (late, old handle)",
                                   {"publish", "--manifest", manifestOf(stage, "r8").string(), "--op-id",
                                    jobOf(stage, "r8") + "-late-publish"},
                                   {"RELCTL_LEASE=" + handle});

    stage.expectExit("r9", c9, 0, "took over with a higher token and published r9");
    stage.expectExit("r8", c8, 5, "the wrapper found its lease lost, killed its command, did not publish");
    stage.expect("r8-deploy-killed", !deployed(stage, "r8"), "r8's deploy never reached its end");
    stage.expectExit("r8-late-renew", renew, 5, "LEASE_SUPERSEDED");
    stage.expectExit("r8-late-publish", publish, 4, "STALE_GENERATION outranks the lost lease");
    stage.expectTraced("r8", "LEASE_SUPERSEDED");
    stage.expectTraced("r8", "STALE_GENERATION");
    const TimelineSlice slice = stage.timeline();
    const auto l8 = leaseOf(slice, jobOf(stage, "r8"));
    const auto l9 = leaseOf(slice, jobOf(stage, "r9"));
    stage.expect("successor-token-higher", l8 && l9 && l9->token > l8->token,
                 l8 && l9 ? "r8 held token " + std::to_string(l8->token) + ", r9 took token " +
                                std::to_string(l9->token)
                          : "a lease is missing from the timeline");
    stage.expectCurrent("r9");
}

void playCrash(Stage& stage)
{
    Actor& r8 = stage.start("r8", runArgs(stage, "r8", "r8", 8, "20s", deployCommand(stage, "r8")));
    stage.log("r8", "relctl run (release r8, generation 8)", "started");
    waitHolds(stage, "r8");
    stage.waitFor("r8's deploy to start", 10s, [&] { return !stage.readFile("r8.pid").empty(); });
    const int deployPid = std::stoi(stage.readFile("r8.pid"));
    Actor& r9 = stage.start("r9", runArgs(stage, "r9", "r9", 9, "30s", "true"));
    stage.log("r9", "relctl run --wait (release r9, generation 9)", "started");
    waitQueued(stage, "r9");

    // The runner dies: the wrapper and its deploy, at once.
    r8.signalGroup(SIGKILL);
    kill(-deployPid, SIGKILL);
    stage.log("rehearsal", "SIGKILL r8 (wrapper and deploy)", "killed", {}, {}, {},
              "mid-deploy, holding the lease");
    const int c8 = stage.finish(r8, 5s);
    const int c9 = stage.finish(r9, stage.ttl() * 3 + 20s);
    stage.logExit(r9, "relctl run", c9);

    stage.expectExit("r8", c8, 128 + SIGKILL, "killed");
    stage.expectExit("r9", c9, 0, "granted after r8's lease expired; published r9");
    const TimelineSlice slice = stage.timeline();
    const auto l8 = leaseOf(slice, jobOf(stage, "r8"));
    const auto l9 = leaseOf(slice, jobOf(stage, "r9"));
    if (l8 && l9) {
        const std::int64_t gap = l9->acquiredAt.millis() - l8->endsAt.millis();
        stage.expect("no-overlap", gap >= 0,
                     "r9's lease began " + std::to_string(gap) + " ms after r8's ended (" + l8->ending + ")");
        stage.expect("takeover-within-bound", gap >= 0 && gap <= 1500,
                     "r9 took over " + std::to_string(gap) + " ms after r8's lease expired (bound: 1500 ms)");
    } else {
        stage.expect("takeover-within-bound", false, "a lease is missing from the timeline");
    }
    const ManifestHistory published = stage.db().manifestHistory(stage.env());
    const auto fromR8 =
        std::count_if(published.history.begin(), published.history.end(),
                      [&](const ManifestHistoryEntry& e) { return e.manifest.job == jobOf(stage, "r8"); });
    stage.expect("nothing-from-the-dead-holder", fromR8 == 0,
                 std::to_string(fromR8) + " manifest(s) published by the killed holder");
    stage.expectCurrent("r9");
}

void playLostReply(Stage& stage)
{
    Actor& acquire = stage.start("r9", {"lease", "acquire", "--env", stage.env(), "--job", jobOf(stage, "r9"),
                                        "--release", "r9", "--generation", "9", "--ttl", stage.ttlText(4),
                                        "--op-id", jobOf(stage, "r9") + "-acquire"});
    const int acquired = stage.finish(acquire, 20s);
    stage.logExit(acquire, "lease acquire (release r9, generation 9)", acquired);
    const nlohmann::json reply = acquire.reply();
    if (acquired != 0 || !reply.contains("handle") || !reply["handle"].is_string())
        throw Error(ExitCode::Internal,
                    "r9 could not acquire the lease (exit " + std::to_string(acquired) + ")");
    const std::string handle = reply["handle"].get<std::string>();
    const auto lease = liveLease(stage);
    const std::string opId = jobOf(stage, "r9") + "-publish";
    const fs::path manifest = manifestOf(stage, "r9");

    // Hold the publish's operation lock: the publish waits on the server
    // while its client gives up (a 600 ms call timeout) and cuts the
    // connection. Released, the publish goes on and commits; the reply has
    // nowhere to go.
    session::Connection lockConn(stage.conninfo());
    pqxx::work hold(lockConn);
    hold.exec_params("SELECT pg_advisory_xact_lock(hashtextextended('relctl.op:' || $1, 0))", opId);
    stage.log("rehearsal", "holds the publish's op-id lock", "holding", {}, {}, {}, "the publish will stall");
    const int lost = stage.play("r9", "publish (its reply is lost)",
                                {"publish", "--manifest", manifest.string(), "--op-id", opId},
                                {"RELCTL_LEASE=" + handle, "RELCTL_CALL_TIMEOUT=600ms"});
    hold.commit();
    stage.log("rehearsal", "releases the op-id lock", "released", {}, {}, {}, "the stalled publish proceeds");
    stage.waitFor("the stalled publish to commit", 10s, [&] {
        const auto m = stage.db().showManifest(stage.env()).manifest;
        return m && m->release == "r9";
    });
    stage.log("rehearsal", "manifest show", "r9 is current", {},
              lease ? std::optional(lease->token) : std::nullopt, 9,
              "the publish committed; r9's job never heard");

    const std::vector<std::string> withHandle{"RELCTL_LEASE=" + handle};
    Actor& same =
        stage.start("r9", {"publish", "--manifest", manifest.string(), "--op-id", opId}, withHandle);
    const int retried = stage.finish(same, 20s);
    stage.logExit(same, "publish (retry, same op id)", retried);
    const bool replayed = same.reply().value("replayed", false);
    const int fresh =
        stage.play("r9", "publish (retry, new op id)",
                   {"publish", "--manifest", manifest.string(), "--op-id", opId + "-again"}, withHandle);
    stage.play("r9", "lease release", {"lease", "release"}, withHandle);

    stage.expectExit("r9-lost-publish", lost, 9, "the outcome is unknown to the client: its reply was lost");
    stage.expectExit("r9-retry", retried, 0, "answered from the record");
    stage.expect("retry-replayed", replayed,
                 replayed ? "the retry's reply says replayed: the publish was not re-applied"
                          : "the retry was not answered from the record");
    stage.expectExit("r9-fresh-op-id", fresh, 4, "a new op id is a new publish of generation 9: stale");
    const OperationRecord record = stage.db().showOperation(opId);
    const bool recordedOk = record.recorded() && record.outcome && record.outcome->accepted();
    stage.expect("op-show-truthful", recordedOk,
                 "op show " + opId + ": " + (recordedOk ? "recorded, accepted" : record.status));
    const ManifestHistory published = stage.db().manifestHistory(stage.env());
    stage.expect("applied-once", published.history.size() == 1,
                 std::to_string(published.history.size()) + " manifest(s) published (expected exactly 1)");
    stage.expectCurrent("r9");
}

// The release manager's approval. The rehearsal's jobs act as relctl_job
// under the rehearsal's own login, and the login that queued the winner may
// not approve skipping the others for it (SELF_APPROVAL): so the manager acts
// from a session authorized as relctl_manager itself, and the trail names it.
// SET SESSION AUTHORIZATION needs the superuser that migrating the scratch
// database needed already.
SupersessionDecision approveAsManager(Stage& stage, std::int64_t request, const std::string& by,
                                      const std::string& reason)
{
    session::Connection conn(stage.conninfo());
    pqxx::nontransaction tx(conn);
    tx.exec0("SET SESSION AUTHORIZATION relctl_manager");
    const pqxx::row row = tx.exec_params1("SELECT relctl.decide($1, true, $2, $3, $4::jsonb)", request, by,
                                          reason, ClientContext::current().toJson().dump());
    const nlohmann::json reply = nlohmann::json::parse(row[0].c_str());
    if (reply.value("status", "") == "refused") {
        const std::string why = reply.value("reason", "");
        throw Error(exitCodeForReason(why), reply.value("message", why), why, reply);
    }
    return reply.get<SupersessionDecision>();
}

void playSupersede(Stage& stage)
{
    Actor& r7 = stage.start("r7", runArgs(stage, "r7", "r7", 7, "20s", deployCommand(stage, "r7")));
    stage.log("r7", "relctl run (release r7, generation 7)", "started");
    waitHolds(stage, "r7");
    std::vector<Actor*> waiting;
    for (const int g : {8, 9, 10}) {
        const std::string actor = "r" + std::to_string(g);
        waiting.push_back(&stage.start(actor, runArgs(stage, actor, actor, g, "30s", "true")));
        stage.log(actor, "relctl run --wait (release " + actor + ")", "started");
        waitQueued(stage, actor);
    }
    std::int64_t request = 0;
    stage.waitFor("the supersession request", 10s, [&] {
        for (const Supersession& s : stage.db().supersessions(stage.env(), false).requests)
            if (s.state == "pending" && s.winner && s.winner->job == jobOf(stage, "r10"))
                request = s.id;
        return request != 0;
    });
    stage.log("rehearsal", "approvals list", "pending", {}, {}, {},
              "request #" + std::to_string(request) + ": r10 would skip r8 and r9");
    const SupersessionDecision decision =
        approveAsManager(stage, request, "alice", "r10 carries the fix; r8 and r9 are obsolete");
    stage.log("alice", "approve #" + std::to_string(request), decision.supersession.state);
    go(stage, "r7");
    int codes[3] = {0, 0, 0};
    for (std::size_t i = 0; i < waiting.size(); ++i) {
        codes[i] = stage.finish(*waiting[i], 30s);
        stage.logExit(*waiting[i], "relctl run", codes[i]);
    }
    const int c7 = stage.finish(r7, 20s);
    stage.logExit(r7, "relctl run", c7);

    stage.expectExit("r7", c7, 0, "the holder finished and published r7");
    stage.expectExit("r8", codes[0], 4, "SUPERSEDED");
    stage.expectExit("r9", codes[1], 4, "SUPERSEDED");
    stage.expectExit("r10", codes[2], 0, "adopted after the approval");
    stage.expectTraced("r8", "SUPERSEDED");
    stage.expectTraced("r9", "SUPERSEDED");
    const Supersessions decided = stage.db().supersessions(stage.env(), true);
    const auto named =
        std::find_if(decided.requests.begin(), decided.requests.end(), [&](const Supersession& s) {
            return s.id == request && s.decidedBy == "alice" && s.reason;
        });
    stage.expect("approver-recorded", named != decided.requests.end(),
                 named != decided.requests.end()
                     ? "request #" + std::to_string(request) +
                           " decided by alice: " + named->reason.value_or("")
                     : "request #" + std::to_string(request) + " does not name its approver");
    stage.expectCurrent("r10");
}

void playFreeze(Stage& stage)
{
    Actor& r8 = stage.start("r8", runArgs(stage, "r8", "r8", 8, "20s", deployCommand(stage, "r8")));
    stage.log("r8", "relctl run (release r8, generation 8)", "started");
    waitHolds(stage, "r8");
    Actor& r10 = stage.start("r10", runArgs(stage, "r10", "r10", 10, "60s", "true"));
    stage.log("r10", "relctl run --wait (release r10)", "started");
    waitQueued(stage, "r10");
    Actor& r9 = stage.start("r9", runArgs(stage, "r9", "r9", 9, "60s", "true"));
    stage.log("r9", "relctl run --wait (release r9)", "started", {}, {}, {}, "queued after r10, older");
    waitQueued(stage, "r9");

    stage.db().freeze(stage.env(), "oncall", "investigating a lease failure");
    stage.log("oncall", "freeze", "frozen", {}, {}, {}, "investigating a lease failure");
    go(stage, "r8");
    const int c8 = stage.finish(r8, 20s);
    stage.logExit(r8, "relctl run", c8);
    const int c11 = stage.play("r11", "lease acquire (release r11)",
                               {"lease", "acquire", "--env", stage.env(), "--job", jobOf(stage, "r11"),
                                "--release", "r11", "--generation", "11", "--op-id", jobOf(stage, "r11")});
    stage.pause(stage.ttl());
    const Environment frozen = stage.db().showEnvironment(stage.env());
    stage.expect("nobody-granted-while-frozen", !frozen.lease && frozen.queue.size() == 2,
                 std::string(frozen.lease ? "a lease was granted" : "no lease granted") + ", " +
                     std::to_string(frozen.queue.size()) + " candidate(s) still waiting while frozen");
    stage.db().unfreeze(stage.env(), "oncall");
    stage.log("oncall", "unfreeze", "unfrozen");
    const int c9 = stage.finish(r9, 30s);
    stage.logExit(r9, "relctl run", c9);
    const int c10 = stage.finish(r10, 30s);
    stage.logExit(r10, "relctl run", c10);

    stage.expectExit("r8", c8, 6, "its publish was refused: DISPATCH_FROZEN");
    stage.expectExit("r11", c11, 6, "DISPATCH_FROZEN");
    stage.expectTraced("r8", "DISPATCH_FROZEN");
    stage.expectTraced("r11", "DISPATCH_FROZEN");
    stage.expectExit("r9", c9, 0, "served first after the unfreeze (ordered: lower generation first)");
    stage.expectExit("r10", c10, 0, "served next");
    const TimelineSlice slice = stage.timeline();
    const auto l9 = leaseOf(slice, jobOf(stage, "r9"));
    const auto l10 = leaseOf(slice, jobOf(stage, "r10"));
    stage.expect("policy-order-after-unfreeze", l9 && l10 && l9->token < l10->token,
                 l9 && l10 ? "r9 got token " + std::to_string(l9->token) + ", r10 token " +
                                 std::to_string(l10->token)
                           : "a lease is missing from the timeline");
    stage.expectCurrent("r10");
}

void playRollout(Stage& stage)
{
    const auto leaseless = [&](const std::string& actor, std::int64_t generation) {
        return std::vector<std::string>{"publish",
                                        "--env",
                                        stage.env(),
                                        "--job",
                                        jobOf(stage, actor),
                                        "--release",
                                        actor,
                                        "--generation",
                                        std::to_string(generation),
                                        "--manifest",
                                        manifestOf(stage, actor).string(),
                                        "--op-id",
                                        jobOf(stage, actor) + "-leaseless"};
    };
    const int c8 = stage.play("r8", "publish without a lease (serialization off)", leaseless("r8", 8));
    const int c7 = stage.play("r7", "publish without a lease (older)", leaseless("r7", 7));
    EnvironmentSettings enforce;
    enforce.name = stage.env();
    enforce.serialization = "enforced";
    stage.db().setEnvironment(enforce);
    stage.log("operator", "env set --serialization enforced", "enforced");
    const int c9 = stage.play("r9", "publish without a lease (enforced)", leaseless("r9", 9));
    const int run9 = stage.play("r9", "relctl run (release r9, with a lease)",
                                runArgs(stage, "r9", "r9", 9, "20s", "true"));

    stage.expectExit("r8", c8, 0, "accepted without a lease while serialization is off");
    stage.expectExit("r7", c7, 4, "freshness is still checked: STALE_GENERATION");
    stage.expectExit("r9-leaseless", c9, 5, "NO_LEASE once serialization is enforced");
    stage.expectExit("r9", run9, 0, "published under a lease");
    stage.expectTraced("r7", "STALE_GENERATION");
    stage.expectTraced("r9", "NO_LEASE");
    stage.expectCurrent("r9");
}

// `relctl run` whose command only keeps the lease handle it was given, so
// that the job can come back with it later.
std::vector<std::string> keepHandleRun(Stage& stage, const std::string& release, std::int64_t generation)
{
    return runArgs(stage, release, release, generation, "20s",
                   "echo \"$RELCTL_LEASE\" > " + quoted(stage.directory() / (release + ".lease")));
}

// An acquire under a fresh op id: a retried job, not a replay of its first try.
std::vector<std::string> acquireArgs(Stage& stage, const std::string& release, std::int64_t generation,
                                     const std::string& opSuffix)
{
    return {"lease",        "acquire",
            "--env",        stage.env(),
            "--job",        jobOf(stage, release),
            "--release",    release,
            "--generation", std::to_string(generation),
            "--ttl",        stage.ttlText(),
            "--op-id",      jobOf(stage, release) + "-" + opSuffix};
}

// The operator's rollback, through the engine's own connection (a manager).
Outcome rollBack(Stage& stage, const std::string& release, const std::string& reason)
{
    RollbackRequest r;
    r.env = stage.env();
    r.toRelease = release;
    r.by = "oncall";
    r.reason = reason;
    Outcome o = stage.db().rollback(r);
    stage.log("oncall", "rollback --to-release " + release,
              o.accepted() ? "rolled back" : "refused " + o.reason, {},
              o.accepted() ? o.reply<RollbackDone>().token : std::nullopt, {},
              o.message().empty() ? reason : o.message());
    return o;
}

// What is current after a rollback, and the bar it must have kept.
void expectRestored(Stage& stage, const std::string& name, const Outcome& o, const std::string& release,
                    std::int64_t highWater)
{
    const ManifestShow shown = stage.db().showManifest(stage.env());
    const std::string current = shown.manifest ? shown.manifest->release : "(none)";
    const bool rolledBack = o.accepted() && o.reply<RollbackDone>().rolledBack;
    stage.expect(name, rolledBack && current == release && shown.highWaterGeneration == highWater,
                 std::string(rolledBack ? "rolled back" : "not rolled back (" + o.reason + ")") +
                     "; current " + current + " (expected " + release + "), high-water generation " +
                     std::to_string(shown.highWaterGeneration) + " (expected " + std::to_string(highWater) +
                     ": a rollback does not lower the bar)");
}

void playRollback(Stage& stage)
{
    // v1.8 and v1.9 go out; v1.9 turns out bad.
    const int c8 =
        stage.play("v1.8", "relctl run (release v1.8, generation 8)", keepHandleRun(stage, "v1.8", 8));
    const int c9 =
        stage.play("v1.9", "relctl run (release v1.9, generation 9)", keepHandleRun(stage, "v1.9", 9));
    const std::string handle8 = trimmed(stage.readFile("v1.8.lease"));
    const std::string handle9 = trimmed(stage.readFile("v1.9.lease"));
    const Outcome back = rollBack(stage, "v1.8", "v1.9 breaks checkout");
    expectRestored(stage, "rolled-back-to-v1.8", back, "v1.8", 9);
    const auto v9 = leaseOf(stage.timeline(), jobOf(stage, "v1.9"));
    // Tokens are positive: 0 is "none".
    const std::int64_t rollbackToken = back.accepted() ? back.reply<RollbackDone>().token.value_or(0) : 0;
    const std::int64_t heldToken = v9 ? v9->token : 0;
    stage.expect("rollback-fences-older-leases", heldToken > 0 && rollbackToken > heldToken,
                 heldToken > 0 && rollbackToken > 0
                     ? "v1.9 held token " + std::to_string(heldToken) + ", the rollback took token " +
                           std::to_string(rollbackToken)
                     : "the rollback took no token, or v1.9's lease is missing");

    // The old jobs retry. v1.8 is current again, but neither may become
    // current: the bar stays at generation 9.
    const auto late = [&](const std::string& release, const std::string& handle) {
        return stage.play(release, "publish (retry, old handle)",
                          {"publish", "--manifest", manifestOf(stage, release).string(), "--op-id",
                           jobOf(stage, release) + "-late-publish"},
                          {"RELCTL_LEASE=" + handle});
    };
    const int late9 = late("v1.9", handle9);
    const int again9 = stage.play("v1.9", "lease acquire (retry)", acquireArgs(stage, "v1.9", 9, "retry"));
    const int late8 = late("v1.8", handle8);
    const int again8 = stage.play("v1.8", "lease acquire (retry)", acquireArgs(stage, "v1.8", 8, "retry"));

    // The fix, as pipeline 10, adopts as usual.
    const int c10 =
        stage.play("v1.10", "relctl run (release v1.10, generation 10)", keepHandleRun(stage, "v1.10", 10));

    // Second phase: v1.11 goes out, and during the incident's freeze the
    // on-call engineer rolls it back; acquisitions stay refused meanwhile.
    const int c11 =
        stage.play("v1.11", "relctl run (release v1.11, generation 11)", keepHandleRun(stage, "v1.11", 11));
    stage.db().freeze(stage.env(), "oncall", "v1.11 corrupts carts");
    stage.log("oncall", "freeze", "frozen", {}, {}, {}, "v1.11 corrupts carts");
    const Outcome frozenBack = rollBack(stage, "v1.10", "v1.11 corrupts carts");
    expectRestored(stage, "rolled-back-while-frozen", frozenBack, "v1.10", 11);
    const int frozen12 =
        stage.play("v1.12", "lease acquire (while frozen)", acquireArgs(stage, "v1.12", 12, "frozen"));
    stage.db().unfreeze(stage.env(), "oncall");
    stage.log("oncall", "unfreeze", "unfrozen");
    const int again11 =
        stage.play("v1.11", "lease acquire (retry)", acquireArgs(stage, "v1.11", 11, "retry"));

    stage.expectExit("v1.8", c8, 0, "published v1.8");
    stage.expectExit("v1.9", c9, 0, "published v1.9");
    stage.expectExit("v1.9-late-publish", late9, 4, "STALE_GENERATION: 9 is not above the high-water mark 9");
    stage.expectExit("v1.9-acquire-again", again9, 4, "STALE_GENERATION, although only v1.8 is current");
    stage.expectExit("v1.8-late-publish", late8, 4, "STALE_GENERATION: v1.8 is current, but not by this job");
    stage.expectExit("v1.8-acquire-again", again8, 4, "STALE_GENERATION");
    stage.expectExit("v1.10", c10, 0, "adopted after the rollback: newer than the bar");
    stage.expectExit("v1.11", c11, 0, "published v1.11");
    stage.expectExit("v1.12-while-frozen", frozen12, 6,
                     "DISPATCH_FROZEN: the rollback did not lift the freeze");
    stage.expectExit("v1.11-acquire-again", again11, 4, "STALE_GENERATION after the unfreeze");
    stage.expectTraced("v1.9", "STALE_GENERATION");
    stage.expectTraced("v1.8", "STALE_GENERATION");
    stage.expectTraced("v1.12", "DISPATCH_FROZEN");
    stage.expectTraced("v1.11", "STALE_GENERATION");
    stage.expectCurrent("v1.10");
}

EnvironmentSettings forcing(std::optional<std::string> policy, std::optional<std::string> supersede,
                            std::optional<std::string> serialization)
{
    EnvironmentSettings s;
    s.policy = std::move(policy);
    s.supersede = std::move(supersede);
    s.serialization = std::move(serialization);
    return s;
}

} // namespace

const std::vector<ScenarioPlay>& plays()
{
    static const std::vector<ScenarioPlay> all{
        {{"race", "Two releases deploy at once; the older one finishes last",
          "r9 takes the lease and deploys while r8, an older pipeline started at the same time, waits in the "
          "queue. r9 publishes. When r8's turn comes its generation is no longer newer than what is current, "
          "so the database refuses it (STALE_GENERATION) before its deploy ever runs: exactly one current "
          "manifest, r9, and r8's refusal traced to its job."},
         forcing(std::nullopt, std::nullopt, "enforced"),
         playRace},
        {{"expiry", "The holder is paused past its lease; a successor takes over",
          "r8's relctl run is stopped (SIGSTOP) mid-deploy and stops renewing. Its lease runs out on the "
          "server's clock; r9 acquires a higher fencing token and publishes. r8 resumes: its wrapper sees "
          "the "
          "lease lost by its own clock, kills its deploy's process group and does not publish (exit 5). Its "
          "late renew and publish with the old handle are refused and recorded."},
         forcing(std::nullopt, std::nullopt, "enforced"),
         playExpiry},
        {{"crash", "The holder crashes mid-deploy; a waiter takes over",
          "r8's runner dies (SIGKILL to the wrapper and its deploy) while r8 holds the lease and r9 waits. "
          "Nobody releases the lease: it expires, and r9 is granted within the expiry bound (woken at the "
          "holder's expiry, no polling). Nothing from the dead holder is published."},
         forcing(std::nullopt, std::nullopt, "enforced"),
         playCrash},
        {{"lost-reply", "A publish commits but its reply is lost",
          "r9's publish stalls on the server until its client gives up and cuts the connection (exit 9: "
          "outcome unknown); then the publish commits. The retry with the same op id is answered from the "
          "record and applied once; a retry under a fresh op id is a second publish of generation 9 and is "
          "refused as stale. Why every write carries a stable operation id."},
         forcing(std::nullopt, std::nullopt, "enforced"),
         playLostReply},
        {{"supersede", "Newest-eligible with a release manager's approval",
          "Under policy newest with supersede approval, r8, r9 and r10 queue behind a holder. The database "
          "opens a supersession request; alice approves it with a reason. r10 adopts; r8 and r9 are refused "
          "SUPERSEDED (exit 4), and the audit trail names the approver."},
         forcing("newest", "approval", "enforced"),
         playSupersede},
        {{"freeze", "Dispatch is frozen during an investigation",
          "With r9 and r10 queued behind the holder r8, an on-call engineer freezes the environment. r8's "
          "publish and a new acquire are refused DISPATCH_FROZEN and recorded; nobody is granted the lease "
          "while frozen. After the unfreeze the queue resumes in policy order: r9, then r10."},
         forcing("ordered", std::nullopt, "enforced"),
         playFreeze},
        {{"rollout", "Serialization rolled out in stages",
          "With serialization off, a publish without a lease is accepted (r8), but freshness is still "
          "checked: an older leaseless publish (r7) is refused. Once serialization is enforced, a leaseless "
          "publish is refused NO_LEASE and the release goes out under a lease."},
         forcing(std::nullopt, std::nullopt, "off"),
         playRollout},
        {{"rollback", "A bad release is rolled back; the old jobs retry",
          "v1.8 and v1.9 publish; v1.9 is bad and the on-call engineer rolls back to v1.8. The rollback "
          "takes "
          "the next fencing token (so no older lease can act again) and makes v1.8 current, but the "
          "freshness "
          "bar stays at generation 9: the old v1.9 and v1.8 jobs retrying with their old handles, or "
          "acquiring "
          "again, are refused STALE_GENERATION, and pipeline 10 adopts as usual. Then v1.11 goes out and is "
          "rolled back to v1.10 during a freeze: the rollback works while acquisitions stay refused "
          "DISPATCH_FROZEN, and after the unfreeze v1.11's retry is stale."},
         forcing(std::nullopt, std::nullopt, "enforced"),
         playRollback},
    };
    return all;
}

const std::vector<Scenario>& scenarios()
{
    static const std::vector<Scenario> all = [] {
        std::vector<Scenario> out;
        for (const ScenarioPlay& p : plays())
            out.push_back(p.scenario);
        return out;
    }();
    return all;
}

} // namespace relctl::rehearsal
