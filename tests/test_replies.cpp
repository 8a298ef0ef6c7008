// The typed replies (relctl/replies.h) carry every key the server sends. Over
// a history with every shape a reply takes (members null and present,
// refusals of each kind, a freeze, a queue, supersession requests), each SQL
// function behind a Database call is called directly, its reply parsed into
// its type and written back: the JSON must be the server's, key for key, null
// for null. The protocol's writes answer with an Outcome whose body is the
// server's reply: an accepted one is checked the same way against the type
// that Outcome::reply reads it as. And `relctl --json` prints exactly what the server sent, as it did
// before the replies were typed.

#include "relctl/database.h"
#include "relctl/parse.h"
#include "relctl/replies.h"
#define RELCTL_TEST_NO_SHORT_NAME // core's namespace relctl is visible here
#include "relctlprocess.h"
#include "testdatabase.h"

#include <QtTest>
#include <thread>

using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// The server's reply, parsed into Reply and written back, compared as text:
// the text is what --json prints, and it also tells an integer from a float.
template <class Reply> Reply roundTrip(const json& server)
{
    Reply typed = server.get<Reply>();
    const std::string back = relctl::toJson(typed).dump();
    if (back != server.dump())
        qFatal("the typed reply differs from the server's:\nserver: %s\ntyped:  %s", server.dump().c_str(),
               back.c_str());
    return typed;
}

const char* const kClient =
    R"('{"host": "ci-runner-7", "pid": 4242, "job_url": "https://ci.example/jobs/7"}')";

// An accepted write's reply as its type, checked against the server's.
template <class Reply> Reply acceptedReply(const relctl::Outcome& o)
{
    if (!o.accepted())
        qFatal("expected an accepted outcome: %s", o.body.dump().c_str());
    roundTrip<Reply>(o.body);
    return o.reply<Reply>();
}

relctl::Handle handleOf(const relctl::Outcome& o)
{
    return *relctl::parseHandle(acceptedReply<relctl::Grant>(o).handle);
}

} // namespace

class TestReplies final : public QObject
{
    Q_OBJECT

private slots:
    // relctl::Timestamp reads what the server's JSON writes for a timestamptz
    // and writes it back the same, to the microsecond: whole seconds, every
    // length of fraction, before the epoch, a leap day, a year's last instant.
    void timestampsAreWrittenAsTheServerWritesThem()
    {
        TestDatabase db;
        const json rows = db.json(
            "SELECT json_agg(json_build_array(to_json(t), (extract(epoch FROM t) * 1000000)::bigint)) FROM ("
            "  SELECT t FROM unnest(ARRAY['1970-01-01 00:00:00+00', '1969-12-31 23:59:59.999999+00',"
            "    '2024-02-29 12:00:00.5+00', '2023-12-31 23:59:59.000001+00', '2000-03-01 00:00:00.12+00',"
            "    '2026-12-06 14:04:11.123456+00', '1900-01-01 00:00:00.1234+00']::timestamptz[]) t"
            "  UNION ALL SELECT now()"
            "  UNION ALL SELECT timestamptz '2020-01-01 00:00:00+00' + random() * interval '20 years'"
            "    FROM generate_series(1, 500)) s");
        QCOMPARE(rows.size(), std::size_t{508});
        for (const json& row : rows) {
            const auto t = relctl::Timestamp::parse(row[0].get<std::string>());
            QVERIFY2(t, row.dump().c_str());
            QCOMPARE(t->micros(), row[1].get<std::int64_t>());
            QCOMPARE(t->iso(), row[0].get<std::string>());
        }
    }

    void everyReplyCarriesEveryKeyTheServerSends()
    {
        TestDatabase db;
        relctl::Database m(db.dsn(), relctl::ClientContext{"ci-runner-7", 4242, "https://ci.example/jobs/7"});

        // Environments: created, already there; settings changed and unchanged.
        auto added = roundTrip<relctl::EnvironmentAdded>(
            db.write(std::string("SELECT relctl.env_add('prod', NULL, NULL, ") + kClient + ")"));
        QVERIFY(added.created);
        QCOMPARE(added.environment.defaultTtlMs, std::int64_t(60000));
        added =
            roundTrip<relctl::EnvironmentAdded>(db.write("SELECT relctl.env_add('prod', NULL, NULL, '{}')"));
        QVERIFY(!added.created);
        QVERIFY(m.addEnvironment({"staging", 30s, 10min}).created);
        QCOMPARE(m.addEnvironment({"test", {}, {}}).environment.name, std::string("test"));
        auto set = roundTrip<relctl::EnvironmentSet>(
            db.write("SELECT relctl.env_set('staging', 'newest', 'approval', NULL, '{}')"));
        QCOMPARE(set.changed.policy, std::optional<std::string>("newest"));
        QVERIFY(!set.changed.serialization);
        set = roundTrip<relctl::EnvironmentSet>(
            db.write("SELECT relctl.env_set('staging', 'newest', NULL, NULL, '{}')"));
        QVERIFY(!set.changed.policy && !set.changed.supersede && !set.changed.serialization);
        QCOMPARE(m.setEnvironment({"test", {}, {}, "off", {}, {}, {}}).environment.serialization,
                 std::string("off"));

        // Nothing published, no lease.
        auto shown = roundTrip<relctl::ManifestShow>(db.json("SELECT relctl.manifest_show('prod', false)"));
        QVERIFY(!shown.manifest);
        QVERIFY(roundTrip<relctl::ManifestHistory>(db.json("SELECT relctl.manifest_show('prod', true)"))
                    .history.empty());
        QVERIFY(!roundTrip<relctl::LeaseShow>(db.json("SELECT relctl.lease_show('prod')")).lease);
        auto revoked = roundTrip<relctl::Revocation>(db.write(
            std::string("SELECT relctl.revoke('prod', 'alice', 'nothing to see', ") + kClient + ")"));
        QVERIFY(!revoked.revoked && !revoked.lease && revoked.message && !revoked.by);

        // prod: r1 published with a manifest; r2 stalls past its lease, r3 takes
        // over and publishes, r2's late publish and renewal are refused; r4 is stale.
        const relctl::Handle h1 =
            handleOf(m.acquire({"prod", "job-1", "r1", 1, 30s, "op-1-acquire", {}, {}}));
        auto live = roundTrip<relctl::LeaseShow>(db.json("SELECT relctl.lease_show('prod')"));
        QVERIFY(live.lease && live.lease->remainingMs && live.lease->pid == 4242);
        QCOMPARE(acceptedReply<relctl::Renewal>(m.renew(h1, 30s)).token, h1.token);
        const json manifest1{{"image", "app:1"}, {"nested", {{"a", {1, 2.5, nullptr, true}}}}};
        const relctl::Outcome published1 = m.publish({h1, manifest1, "op-1-publish"});
        QVERIFY(published1.accepted());
        const auto p1 = acceptedReply<relctl::Publication>(published1);
        QVERIFY(!p1.previous && p1.token == h1.token && p1.serialized && !p1.replayed);
        const relctl::Outcome released1 = m.release(h1);
        QVERIFY(released1.accepted());
        QVERIFY(acceptedReply<relctl::LeaseEnd>(released1).released);
        // Retries: the release (the lease had ended), the publish and the
        // acquire under their op ids (answered from the record).
        const auto again = acceptedReply<relctl::LeaseEnd>(m.release(h1));
        QVERIFY(!again.released && again.state == "already-released" && !again.caveat);
        QVERIFY(acceptedReply<relctl::Publication>(m.publish({h1, manifest1, "op-1-publish"})).replayed);
        const auto regranted =
            acceptedReply<relctl::Grant>(m.acquire({"prod", "job-1", "r1", 1, 30s, "op-1-acquire", {}, {}}));
        QVERIFY(regranted.replayed && regranted.token == h1.token && !regranted.candidate);
        const relctl::Handle h2 = handleOf(m.acquire({"prod", "job-2", "r2", 2, 1s, "op-2-acquire", {}, {}}));
        std::this_thread::sleep_for(1200ms);
        const relctl::Handle h3 =
            handleOf(m.acquire({"prod", "job-3", "r3", 3, 30s, "op-3-acquire", {}, {}}));
        QCOMPARE(m.publish({h2, json{{"image", "app:2"}}, "op-2-publish"}).reason,
                 std::string("LEASE_SUPERSEDED"));
        QVERIFY(!m.renew(h2).accepted());
        const relctl::Outcome published3 = m.publish({h3, json{{"image", "app:3"}}, "op-3-publish"});
        QVERIFY(published3.accepted());
        const auto p3 = acceptedReply<relctl::Publication>(published3);
        QVERIFY(p3.previous && p3.previous->release == "r1");
        QCOMPARE(m.acquire({"prod", "job-4", "r2b", 2, 30s, "op-4-acquire", {}, {}}).reason,
                 std::string("STALE_GENERATION"));
        // Released with a stop report: the reply carries its caveat.
        const relctl::StopReport stopped{"cancelled", "SIGTERM", true, 4321, 143, "SIGTERM", false};
        const relctl::Outcome released3 = m.release(h3, "cancelled", stopped);
        QVERIFY(released3.accepted());
        QVERIFY(acceptedReply<relctl::LeaseEnd>(released3).caveat);
        const auto h5 = handleOf(m.acquire({"prod", "job-5", "r5", 5, 30s, "op-5-acquire", {}, {}}));
        auto prod = roundTrip<relctl::Environment>(db.json("SELECT relctl.environment_json('prod')"));
        QVERIFY(prod.current && prod.current->token && prod.lease && !prod.frozen);
        QCOMPARE(prod.current->generation, std::int64_t(3));
        revoked = roundTrip<relctl::Revocation>(
            db.write(std::string("SELECT relctl.revoke('prod', 'alice', 'stuck deploy', ") + kClient + ")"));
        QVERIFY(revoked.revoked && revoked.lease && !revoked.lease->remainingMs && revoked.by &&
                !revoked.message);
        QCOMPARE(revoked.lease->token, h5.token);

        // test: serialization off, a publish without a lease and without a manifest.
        const relctl::Outcome unserialized =
            m.publishUnserialized({"test", "job-u", "r9", 9, std::nullopt, "op-u-publish"});
        QVERIFY(unserialized.accepted());
        const auto pu = acceptedReply<relctl::Publication>(unserialized);
        QVERIFY(!pu.token && !pu.serialized && !pu.previous);
        shown = roundTrip<relctl::ManifestShow>(db.json("SELECT relctl.manifest_show('test', false)"));
        QVERIFY(shown.manifest && !shown.manifest->token && shown.manifest->manifest.is_null());
        QCOMPARE(roundTrip<relctl::ManifestHistory>(db.json("SELECT relctl.manifest_show('prod', true)"))
                     .history.size(),
                 std::size_t(2));

        // Freezing: changed, unchanged; unfreezing; test stays frozen.
        QVERIFY(
            roundTrip<relctl::FreezeChange>(
                db.write(std::string("SELECT relctl.freeze('prod', 'alice', 'audit week', ") + kClient + ")"))
                .changed);
        auto frozen =
            roundTrip<relctl::FreezeChange>(db.write("SELECT relctl.freeze('prod', 'bob', 'again', '{}')"));
        QVERIFY(!frozen.changed && frozen.environment.frozen);
        QCOMPARE(frozen.environment.frozen->by, std::string("alice"));
        QVERIFY(roundTrip<relctl::FreezeChange>(db.write("SELECT relctl.unfreeze('prod', 'alice', '{}')"))
                    .changed);
        QVERIFY(!roundTrip<relctl::FreezeChange>(db.write("SELECT relctl.unfreeze('prod', 'alice', '{}')"))
                     .changed);
        QVERIFY(m.freeze("test", "alice", "change freeze").changed);

        // staging: a holder, two waiters (separate processes: a candidate lives
        // as long as its session), a supersession request for the newer one.
        const relctl::Handle holder =
            handleOf(m.acquire({"staging", "job-h", "r10", 10, 60s, "op-h-acquire", {}, {}}));
        auto w1 = startRelctlWithDsn(db.jobDsn(), {"lease", "acquire", "--env", "staging", "--job", "job-w1",
                                                   "--release", "r11", "--generation", "11", "--ttl", "60s",
                                                   "--wait", "60s", "--op-id", "op-w1"});
        QTRY_COMPARE_WITH_TIMEOUT(m.showEnvironment("staging").queue.size(), std::size_t(1), 20000);
        auto w2 = startRelctlWithDsn(db.jobDsn(), {"--json", "lease", "acquire", "--env", "staging", "--job",
                                                   "job-w2", "--release", "r12", "--generation", "12",
                                                   "--ttl", "60s", "--wait", "60s", "--op-id", "op-w2"});
        QTRY_COMPARE_WITH_TIMEOUT(m.supersessions(std::nullopt, false).requests.size(), std::size_t(1),
                                  20000);
        const auto staging =
            roundTrip<relctl::Environment>(db.json("SELECT relctl.environment_json('staging')"));
        QCOMPARE(staging.queue.size(), std::size_t(2));
        QCOMPARE(staging.pendingSupersessions, std::int64_t(1));
        QVERIFY(staging.lease && staging.queue[0].pid && !staging.queue[0].endedAt);
        roundTrip<relctl::EnvironmentList>(db.json("SELECT relctl.env_list()"));
        const auto pending =
            roundTrip<relctl::Supersessions>(db.json("SELECT relctl.approvals(NULL, false)"));
        QCOMPARE(pending.requests.size(), std::size_t(1));
        const relctl::Supersession& request = pending.requests.front();
        QVERIFY(request.winner && !request.decidedAt && !request.decidedBy && !request.reason);
        QCOMPARE(request.winner->job, std::string("job-w2"));
        QCOMPARE(request.skipped.size(), std::size_t(1));
        const auto decided = roundTrip<relctl::SupersessionDecision>(db.write(
            "SELECT relctl.decide(" + std::to_string(request.id) + ", true, 'alice', 'newest wins', '{}')"));
        QVERIFY(decided.supersession.decidedAt && decided.supersession.reason);
        QVERIFY(m.revoke("staging", "alice", "hand over").revoked);
        const RunResult w2Result = finish(*w2);
        QCOMPARE(w2Result.exitCode, 0);
        // A queued candidate's grant, as --json prints it: the reply without
        // its status (the exit code says it).
        json granted = json::parse(w2Result.out);
        granted["status"] = "ok";
        QCOMPARE(roundTrip<relctl::Grant>(granted).job, std::string("job-w2"));
        const RunResult w1Result = finish(*w1);
        QVERIFY2(w1Result.exitCode == 4,
                 (w1Result.out + w1Result.err).c_str()); // SUPERSEDED: skipped for the newer candidate
        Q_UNUSED(holder);

        // prod again: a waiting candidate dropped from the queue; then a
        // rollback, and one to what is current already.
        const relctl::Handle h6 =
            handleOf(m.acquire({"prod", "job-6", "r6", 6, 60s, "op-6-acquire", {}, {}}));
        auto w3 = startRelctlWithDsn(db.jobDsn(), {"lease", "acquire", "--env", "prod", "--job", "job-w3",
                                                   "--release", "r7", "--generation", "7", "--ttl", "60s",
                                                   "--wait", "60s", "--op-id", "op-w3"});
        QTRY_COMPARE_WITH_TIMEOUT(m.showEnvironment("prod").queue.size(), std::size_t(1), 20000);
        const std::int64_t queued = m.showEnvironment("prod").queue.front().candidate;
        const auto dropped =
            acceptedReply<relctl::DroppedCandidate>(m.dropCandidate(queued, "alice", "not this one"));
        QVERIFY(dropped.candidate.state == "dropped" && dropped.droppedBy == "alice");
        QCOMPARE(finish(*w3).exitCode, 4); // CANDIDATE_DROPPED
        QVERIFY(m.release(h6).accepted());
        const auto back = acceptedReply<relctl::RollbackDone>(
            m.rollback({"prod", "r1", {}, {}, "alice", "r3 breaks checkout", "op-rollback", {}}));
        QVERIFY(back.rolledBack && back.rollback && back.token && back.replaced && !back.message);
        QCOMPARE(back.restored.release, std::string("r1"));
        const auto current = acceptedReply<relctl::RollbackDone>(
            m.rollback({"prod", "r1", {}, {}, "alice", "again", "op-rollback-again", {}}));
        QVERIFY(!current.rolledBack && !current.replaced && !current.token && current.message);

        // Promotions: a request opened, then found open; approved by another
        // login, then approved again (nothing changes, and the reply says so).
        QVERIFY(m.addEnvironment({"promo", {}, {}}).created);
        m.setEnvironment({"promo", {}, {}, {}, {}, {}, 1});
        const auto opened =
            acceptedReply<relctl::PromotionRequested>(m.requestPromotion({"promo", "r1", 1, "carol", {}}));
        QVERIFY(opened.created && opened.promotion.state == "open");
        QVERIFY(
            !acceptedReply<relctl::PromotionRequested>(m.requestPromotion({"promo", "r1", 1, "carol", {}}))
                 .created);
        relctl::Database bob(db.loginDsn("bob"));
        const auto approved = acceptedReply<relctl::PromotionDecision>(
            bob.decidePromotion(opened.promotion.id, true, "bob", std::nullopt));
        QVERIFY(approved.changed && !approved.message && approved.promotion.state == "approved");
        const auto repeated = acceptedReply<relctl::PromotionDecision>(
            bob.decidePromotion(opened.promotion.id, true, "bob", std::nullopt));
        QVERIFY(!repeated.changed && repeated.message);

        const auto decidedAll =
            roundTrip<relctl::Supersessions>(db.json("SELECT relctl.approvals(NULL, true)"));
        QVERIFY(!decidedAll.requests.empty());
        roundTrip<relctl::Environment>(db.json("SELECT relctl.environment_json('staging')"));
        roundTrip<relctl::Environment>(db.json("SELECT relctl.environment_json('test')"));
        roundTrip<relctl::EnvironmentList>(db.json("SELECT relctl.env_list()"));

        // Reading: the audit trail, traces, operations, the server.
        const auto trail =
            roundTrip<relctl::AuditTrail>(db.json("SELECT relctl.audit(NULL, NULL, NULL, NULL, NULL, NULL)"));
        QVERIFY(trail.events.size() > 20);
        const auto t2 = roundTrip<relctl::JobTrace>(db.json("SELECT relctl.trace('job-2')"));
        QCOMPARE(t2.refusals.size(), std::size_t(2)); // publish and renew
        QVERIFY(t2.refusals.front().lease && t2.refusals.front().supersededBy &&
                t2.refusals.front().currentManifest);
        const auto t4 = roundTrip<relctl::JobTrace>(db.json("SELECT relctl.trace('job-4')"));
        QVERIFY(!t4.refusals.empty() && !t4.refusals.front().lease);
        QVERIFY(roundTrip<relctl::JobTrace>(db.json("SELECT relctl.trace('nobody')")).refusals.empty());
        roundTrip<relctl::JobTrace>(db.json("SELECT relctl.trace('job-w1')"));
        const auto op1 = roundTrip<relctl::OperationRecord>(db.json("SELECT relctl.op_show('op-1-acquire')"));
        QVERIFY(op1.recorded() && op1.outcome && op1.outcome->accepted() && op1.request);
        const auto op2 = roundTrip<relctl::OperationRecord>(db.json("SELECT relctl.op_show('op-2-publish')"));
        QVERIFY(op2.outcome && !op2.outcome->accepted());
        const auto none = roundTrip<relctl::OperationRecord>(db.json("SELECT relctl.op_show('no-such-op')"));
        QVERIFY(!none.recorded() && !none.outcome && !none.operation);
        const auto info = roundTrip<relctl::ServerInfo>(db.json(relctl::Database::serverInfoQuery));
        QVERIFY(info.schemaVersion.value_or(0) > 0);
        // The test's connection (the superuser's) has every role; the
        // manager's login has relctl_manager and the two it is granted.
        QVERIFY(info.hasRole("relctl_manager") && info.hasRole("relctl_job"));
        const auto managerInfo = m.serverInfo();
        QCOMPARE(managerInfo.roles,
                 (std::vector<std::string>{"relctl_job", "relctl_manager", "relctl_reviewer"}));
        QVERIFY(managerInfo.isMemberOf("relctl_manager") && !managerInfo.isMemberOf("relctl_owner"));
        QVERIFY(!managerInfo.tls); // the tests' server listens on a local socket, without TLS
        QCOMPARE(m.serverInfo().database, db.name());
        // The login the server authenticated: what approvals are counted by.
        QCOMPARE(m.serverInfo().login, std::string("relctl_test_manager"));

        // relctl --json prints the server's reply (the history is at rest now:
        // no live lease whose remaining time would change between two reads).
        QVERIFY(m.revoke("staging", "alice", "end of the test").revoked);
        const std::vector<std::pair<Args, std::string>> cases = {
            {{"env", "list"}, "SELECT relctl.env_list()"},
            {{"env", "show", "prod"}, "SELECT relctl.environment_json('prod')"},
            {{"env", "show", "test"}, "SELECT relctl.environment_json('test')"},
            {{"lease", "show", "--env", "prod"}, "SELECT relctl.lease_show('prod')"},
            {{"manifest", "show", "--env", "prod"}, "SELECT relctl.manifest_show('prod', false)"},
            {{"manifest", "show", "--env", "test"}, "SELECT relctl.manifest_show('test', false)"},
            {{"manifest", "show", "--env", "prod", "--history"}, "SELECT relctl.manifest_show('prod', true)"},
            {{"audit"}, "SELECT relctl.audit(NULL, NULL, NULL, NULL, NULL, NULL)"},
            {{"trace", "--job", "job-2"}, "SELECT relctl.trace('job-2')"},
            {{"trace", "--job", "job-4"}, "SELECT relctl.trace('job-4')"},
            {{"op", "show", "op-2-publish"}, "SELECT relctl.op_show('op-2-publish')"},
            {{"op", "show", "no-such-op"}, "SELECT relctl.op_show('no-such-op')"},
            {{"approvals", "list", "--all"}, "SELECT relctl.approvals(NULL, true)"},
        };
        for (const auto& [args, sql] : cases) {
            Args withJson{"--json"};
            withJson.insert(withJson.end(), args.begin(), args.end());
            const RunResult r = runRelctl(db, withJson);
            QVERIFY2(r.exitCode == 0, r.err.c_str());
            QCOMPARE(r.out, db.json(sql).dump() + "\n");
        }
    }
};

QTEST_GUILESS_MAIN(TestReplies)
#include "test_replies.moc"
