// What became of an operation or a job, told from the database alone before
// anyone retries: each state of the model (unknown, queued, rejected,
// accepted-running, completed, ended-unpublished) reached by real relctl
// processes against PostgreSQL, and reported the same by `relctl op show`
// and `relctl status --job`, in words and in JSON.

#include "relctlprocess.h"
#include "testdatabase.h"

#include <QtTest>

using nlohmann::json;

namespace {

json opShow(const TestDatabase& db, const std::string& opId)
{
    const RunResult r = relctl(db, {"--json", "op", "show", opId});
    if (r.exitCode != 0)
        qFatal("op show %s failed (%d): %s", opId.c_str(), r.exitCode, r.err.c_str());
    return r.json();
}

json status(const TestDatabase& db, const std::string& job)
{
    const RunResult r = relctl(db, {"--json", "status", "--job", job});
    if (r.exitCode != 0)
        qFatal("status --job %s failed (%d): %s", job.c_str(), r.exitCode, r.err.c_str());
    return r.json();
}

std::string acquire(const TestDatabase& db, const std::string& job, int generation, const std::string& opId,
                    const std::string& ttl = "30s")
{
    const RunResult r = relctl(db, {"lease", "acquire", "--env", "prod", "--job", job, "--release",
                                    "v" + std::to_string(generation), "--generation",
                                    std::to_string(generation), "--ttl", ttl, "--op-id", opId});
    if (r.exitCode != 0)
        qFatal("acquire failed (%d): %s", r.exitCode, r.err.c_str());
    return r.line();
}

} // namespace

class TestStatus final : public QObject
{
    Q_OBJECT

private slots:
    void everyStateIsReachedAndToldTheSameWay()
    {
        TestDatabase db;
        QCOMPARE(relctl(db, {"env", "add", "prod"}).exitCode, 0);

        // unknown: never seen. A retry is safe, and both commands say so.
        json s = opShow(db, "never-sent");
        QCOMPARE(s["status"], json("not-found"));
        QCOMPARE(s["state"], json("unknown"));
        QVERIFY(s["next"].get<std::string>().find("retry with the same op id is safe") != std::string::npos);
        QCOMPARE(status(db, "job-0")["state"], json("unknown"));

        // accepted-running: the lease is live, nothing published.
        const std::string h1 = acquire(db, "job-1", 1, "job-1-acquire");
        s = opShow(db, "job-1-acquire");
        QCOMPARE(s["state"], json("accepted-running"));
        QCOMPARE(s["evidence"]["job"], json("job-1"));
        QCOMPARE(s["evidence"]["token"], json(1));
        QVERIFY(s["evidence"]["expires_in_ms"].get<long long>() > 0);
        QVERIFY(s["next"].get<std::string>().find("do not start the work again") != std::string::npos);
        QCOMPARE(status(db, "job-1")["state"], json("accepted-running"));
        QCOMPARE(status(db, "job-1")["op_id"], json("job-1-acquire"));

        // queued: a second job waits behind it (its waiter is a live process).
        auto waiter =
            startRelctl(db, {"lease", "acquire", "--env", "prod", "--job", "job-2", "--release", "v2",
                             "--generation", "2", "--wait", "30s", "--op-id", "job-2-acquire"});
        QTRY_COMPARE_WITH_TIMEOUT(opShow(db, "job-2-acquire")["state"], json("queued"), 10000);
        s = opShow(db, "job-2-acquire");
        QCOMPARE(s["status"], json("not-found")); // no outcome yet, yet no reason to retry
        QVERIFY(s["evidence"]["waiting"].get<bool>());
        const RunResult plain = relctl(db, {"op", "show", "job-2-acquire"});
        QVERIFY2(plain.out.find("a retry is safe") == std::string::npos &&
                     plain.out.find("state: queued") != std::string::npos,
                 plain.out.c_str());
        QCOMPARE(status(db, "job-2")["state"], json("queued"));

        // completed: job-1 publishes; both its acquire and its publish are completed and current.
        QCOMPARE(relctl(db, {"publish", "--lease", h1, "--op-id", "job-1-publish"}).exitCode, 0);
        s = opShow(db, "job-1-publish");
        QCOMPARE(s["state"], json("completed"));
        QCOMPARE(s["evidence"]["current"], json(true));
        QCOMPARE(s["evidence"]["release"], json("v1"));
        QCOMPARE(opShow(db, "job-1-acquire")["state"], json("completed"));
        QCOMPARE(status(db, "job-1")["state"], json("completed"));
        QCOMPARE(relctl(db, {"lease", "release", "--lease", h1}).exitCode, 0);
        // A late renew of the released lease is refused, and the job is still completed.
        QVERIFY(relctl(db, {"lease", "renew", "--lease", h1}).exitCode != 0);
        QCOMPARE(status(db, "job-1")["state"], json("completed"));

        // The waiter takes over and publishes: job-1's publish is completed but superseded, by whom.
        const RunResult granted = finish(*waiter, 20000);
        QCOMPARE(granted.exitCode, 0);
        QCOMPARE(opShow(db, "job-2-acquire")["state"], json("accepted-running"));
        QCOMPARE(relctl(db, {"publish", "--lease", granted.line(), "--op-id", "job-2-publish"}).exitCode, 0);
        s = opShow(db, "job-1-publish");
        QCOMPARE(s["state"], json("completed"));
        QCOMPARE(s["evidence"]["current"], json(false));
        QCOMPARE(s["evidence"]["superseded_by"]["job"], json("job-2"));
        QVERIFY(s["summary"].get<std::string>().find("v2 (generation 2, by job-2) is current") !=
                std::string::npos);
        QCOMPARE(relctl(db, {"lease", "release", "--lease", granted.line()}).exitCode, 0);

        // ended-unpublished: released without a publish, and revoked by an operator.
        const std::string h3 = acquire(db, "job-3", 3, "job-3-acquire");
        QCOMPARE(relctl(db, {"lease", "release", "--lease", h3}).exitCode, 0);
        s = opShow(db, "job-3-acquire");
        QCOMPARE(s["state"], json("ended-unpublished"));
        QCOMPARE(s["evidence"]["ending"], json("released"));
        acquire(db, "job-4", 4, "job-4-acquire");
        QCOMPARE(
            relctl(db, {"lease", "revoke", "--env", "prod", "--by", "alice", "--reason", "stuck"}).exitCode,
            0);
        s = status(db, "job-4");
        QCOMPARE(s["state"], json("ended-unpublished"));
        QCOMPARE(s["evidence"]["ending"], json("revoked"));
        QCOMPARE(s["evidence"]["ended_by"], json("alice"));
        QVERIFY(s["summary"].get<std::string>().find("by alice (stuck)") != std::string::npos);
        // And one that ran out: a lease of 1 s, left to expire.
        acquire(db, "job-5", 5, "job-5-acquire", "1s");
        QTRY_COMPARE_WITH_TIMEOUT(opShow(db, "job-5-acquire")["state"], json("ended-unpublished"), 10000);
        QCOMPARE(opShow(db, "job-5-acquire")["evidence"]["ending"], json("expired"));

        // rejected: a stale candidate, with the refusal's event.
        const RunResult stale =
            relctl(db, {"lease", "acquire", "--env", "prod", "--job", "job-old", "--release", "v1",
                        "--generation", "1", "--op-id", "job-old-acquire"});
        QCOMPARE(stale.exitCode, 4);
        s = opShow(db, "job-old-acquire");
        QCOMPARE(s["state"], json("rejected"));
        QCOMPARE(s["evidence"]["reason"], json("STALE_GENERATION"));
        const std::string event = db.scalar(
            "SELECT id FROM relctl.events WHERE op_id = 'job-old-acquire' AND outcome = 'rejected'");
        QCOMPARE(s["evidence"]["event"], json(std::stoll(event)));
        QCOMPARE(status(db, "job-old")["state"], json("rejected"));
        QCOMPARE(status(db, "job-old")["evidence"]["reason"], json("STALE_GENERATION"));

        // The plain output says the same in words.
        const RunResult words = relctl(db, {"status", "--job", "job-4"});
        QVERIFY2(words.out.find("state: ended-unpublished") != std::string::npos &&
                     words.out.find("next: ") != std::string::npos,
                 words.out.c_str());
    }

    // Bad input: one clear message, exit 2, for the command and the functions.
    void badInputIsRefused()
    {
        TestDatabase db;
        const RunResult empty = relctl(db, {"status", "--job", ""});
        QCOMPARE(empty.exitCode, 2);
        const RunResult missing = relctl(db, {"status"});
        QCOMPARE(missing.exitCode, 2);
        QCOMPARE(sqlState(db.dsn(), "SELECT relctl.job_state(NULL)"), std::string("RC002"));
        QCOMPARE(sqlState(db.dsn(), "SELECT relctl.op_state(repeat('x', 201))"), std::string("RC002"));
        // op show of an op id no operation could have is not found, not an error.
        QCOMPARE(db.scalar("SELECT relctl.op_show(NULL) ->> 'status'"), std::string("not-found"));
    }

    // A candidate that left the queue without a grant is not "unknown": it
    // waited, never held the environment and published nothing.
    void waitThatRanOutEndedUnpublished()
    {
        TestDatabase db;
        QCOMPARE(relctl(db, {"env", "add", "prod"}).exitCode, 0);
        acquire(db, "job-1", 1, "job-1-acquire");
        const RunResult waited =
            relctl(db, {"lease", "acquire", "--env", "prod", "--job", "job-2", "--release", "v2",
                        "--generation", "2", "--wait", "1s", "--op-id", "job-2-acquire"});
        QCOMPARE(waited.exitCode, 3);
        for (const json& s : {status(db, "job-2"), opShow(db, "job-2-acquire")}) {
            QCOMPARE(s["state"], json("ended-unpublished"));
            QCOMPARE(s["evidence"]["ending"], json("wait-ran-out"));
            QVERIFY(s["summary"].get<std::string>().find("its --wait ran out") != std::string::npos);
            QVERIFY(s["next"].get<std::string>().find("queues it again") != std::string::npos);
        }
        // A later lease of the same job is what its status then tells.
        QCOMPARE(relctl(db, {"lease", "revoke", "--env", "prod", "--by", "alice", "--reason", "make room"})
                     .exitCode,
                 0);
        acquire(db, "job-2", 2, "job-2-again");
        QCOMPARE(status(db, "job-2")["state"], json("accepted-running"));
    }

    // The stop report a release may carry is an API of its own: a CI job's
    // login calling relctl.release directly can neither write free-form JSON
    // into the audit trail through it nor record a stop on a lease it does
    // not hold the credentials of.
    void stopReportsAreChecked()
    {
        TestDatabase db;
        QCOMPARE(relctl(db, {"env", "add", "prod"}).exitCode, 0);
        const std::string handle = acquire(db, "job-1", 1, "job-1-acquire");
        const std::string token = handle.substr(5, handle.find(':', 5) - 5);
        const std::string leaseId = handle.substr(handle.rfind(':') + 1);
        const auto release = [&](const std::string& lease, const std::string& stopped) {
            return "SELECT relctl.release('prod', " + token + ", '" + lease + "', '{}', NULL, " + stopped +
                   ")";
        };
        const auto before = db.footprint();
        for (const char* bad : {"'[]'", "'{}'", "'{\"cause\": \"bored\"}'", "'{\"cause\": null}'",
                                "'{\"cause\": \"cancelled\", \"comment\": \"<script>\"}'",
                                "'{\"cause\": \"cancelled\", \"signal\": \"TERM; DROP\"}'",
                                "'{\"cause\": \"cancelled\", \"process_group\": -1}'",
                                "'{\"cause\": \"cancelled\", \"process_group\": \"12\"}'",
                                "'{\"cause\": \"cancelled\", \"exit_code\": 256}'",
                                "'{\"cause\": \"cancelled\", \"exit_code\": 1.5}'",
                                "'{\"cause\": \"lease-lost\", \"escalated\": \"yes\"}'"}) {
            QCOMPARE(sqlState(db.jobDsn(), release(leaseId, std::string(bad) + "::jsonb")),
                     std::string("RC002"));
        }
        QVERIFY(db.footprint() == before);

        // Someone else's lease (a wrong lease id): refused, and no stop recorded.
        const json refused =
            db.write(release("00000000000000000000000000000000", "'{\"cause\": \"cancelled\"}'::jsonb"));
        QCOMPARE(refused["reason"], json("BAD_LEASE_ID"));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE detail ? 'stopped'"), 0LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases WHERE ended_at IS NULL"), 1LL);

        // The holder's own report is recorded once, with the caveat, even
        // when the release is retried.
        const std::string good = "'{\"cause\": \"cancelled\", \"signal\": \"SIGTERM\", \"process_group\": "
                                 "4242, \"command_started\": true, \"exit_code\": 143, \"killed_by\": "
                                 "\"SIGTERM\", \"escalated\": false}'::jsonb";
        QCOMPARE(sqlState(db.jobDsn(), release(leaseId, good)), std::string());
        QCOMPARE(sqlState(db.jobDsn(), release(leaseId, good)), std::string());
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE detail ? 'stopped'"), 1LL);
        const json s = status(db, "job-1");
        QCOMPARE(s["state"], json("cancelled"));
        QVERIFY(s["summary"].get<std::string>().find(
                    "relctl run stopped the command (process group 4242, SIGTERM, exit 143)") !=
                std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestStatus)
#include "test_status.moc"
