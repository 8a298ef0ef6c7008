// `relctl watch --decisions` against a real PostgreSQL, each watch a process
// of its own: which events are delivered, a failing hook retried without
// moving the position, kill -9 in the middle of a delivery and restarts
// (at least once, nothing acknowledged repeated, nothing lost), an event
// committed after a later id, and the refusals of bad input.

#define RELCTL_TEST_NO_SHORT_NAME // namespace relctl is used here too
#include "relctl/decisionwatch.h"
#include "relctlprocess.h"
#include "testdatabase.h"

#include <QtTest>
#include <fstream>
#include <map>
#include <pqxx/pqxx>
#include <sstream>
#include <thread>

using nlohmann::json;
using namespace std::chrono_literals;

namespace {

std::string readFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void writeFile(const std::string& path, const std::string& text)
{
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

std::vector<long long> idLines(const std::string& path)
{
    std::vector<long long> ids;
    std::istringstream in(readFile(path));
    for (std::string line; std::getline(in, line);)
        if (!line.empty())
            ids.push_back(std::stoll(line));
    return ids;
}

long long positionIn(const std::string& path)
{
    return std::stoll(readFile(path));
}

// The ids of the accepted events of an operation, oldest first.
std::vector<long long> eventIds(const TestDatabase& db, const std::string& operation)
{
    std::vector<long long> ids;
    for (const auto& row : db.rows("SELECT id FROM relctl.events WHERE operation = " + sqlLiteral(operation) +
                                   " AND outcome = 'accepted' ORDER BY id"))
        ids.push_back(std::stoll(row[0]));
    return ids;
}

std::string freezeSql(const std::string& env)
{
    return "SELECT relctl.freeze(" + sqlLiteral(env) + ", 'ops', 'incident', '{}')";
}

std::string unfreezeSql(const std::string& env)
{
    return "SELECT relctl.unfreeze(" + sqlLiteral(env) + ", 'ops', '{}')";
}

} // namespace

class TestWatch final : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::string path(const std::string& name) const { return m_dir.filePath(qstr(name)).toStdString(); }

private slots:
    void decisionKinds()
    {
        relctl::Event e;
        e.outcome = "accepted";
        for (const char* op : {"promotion-requested", "supersession-requested", "freeze", "rollback"}) {
            e.operation = op;
            QVERIFY2(relctl::decisionwatch::needsDecision(e), op);
        }
        for (const char* op : {"acquire", "renew", "release", "publish", "unfreeze", "approve", "deny",
                               "promotion-approve", "promotion-deny", "env-add", "env-set", "revoke"}) {
            e.operation = op;
            QVERIFY2(!relctl::decisionwatch::needsDecision(e), op);
        }
        e.operation = "freeze";
        e.outcome = "rejected";
        QVERIFY(!relctl::decisionwatch::needsDecision(e));
    }

    // Printed as JSON lines, and handed to a hook with its variables; the
    // events that need no decision (and refused ones) are passed over.
    void decisionsDeliveredOthersNot()
    {
        TestDatabase db;
        QCOMPARE(runRelctl(db, {"env", "add", "staging"}).exitCode, 0);
        QCOMPARE(runRelctl(db, {"env", "add", "prod"}).exitCode, 0);
        QCOMPARE(runRelctl(db, {"env", "set", "prod", "--approvals", "1"}).exitCode, 0);
        QCOMPARE(runRelctl(db, {"promote", "request", "--env", "prod", "--release", "r1", "--generation", "1",
                                "--by", "alice"})
                     .exitCode,
                 0);
        QCOMPARE(runRelctl(db, {"freeze", "--env", "prod", "--by", "ops", "--reason", "incident"}).exitCode,
                 0);
        // Refused while frozen: recorded, but it opened nothing.
        QCOMPARE(runRelctl(db, {"promote", "request", "--env", "prod", "--release", "r2", "--generation", "2",
                                "--by", "alice"})
                     .exitCode,
                 6);
        QCOMPARE(runRelctl(db, {"unfreeze", "--env", "prod", "--by", "ops"}).exitCode, 0);
        const RunResult lease = runRelctl(db, {"lease", "acquire", "--env", "staging", "--job", "j1",
                                               "--release", "r1", "--generation", "1"});
        QVERIFY2(lease.exitCode == 0, failure(lease));
        const long long last = db.count("SELECT max(id) FROM relctl.events");
        const std::vector<long long> expected = {eventIds(db, "promotion-requested")[0],
                                                 eventIds(db, "freeze")[0]};

        const std::string position = path("printed.position");
        const RunResult r =
            runRelctl(db, {"watch", "--decisions", "--position", position, "--from-start", "--once"});
        QVERIFY2(r.exitCode == 0, failure(r));
        std::vector<long long> printed;
        std::istringstream lines(r.out);
        std::vector<std::string> operations;
        for (std::string line; std::getline(lines, line);) {
            const json event = json::parse(line);
            printed.push_back(event.at("id").get<long long>());
            operations.push_back(event.at("operation").get<std::string>());
            QCOMPARE(event.at("outcome").get<std::string>(), std::string("accepted"));
            QCOMPARE(event.at("env").get<std::string>(), std::string("prod"));
        }
        QCOMPARE(printed, expected);
        QCOMPARE(operations, (std::vector<std::string>{"promotion-requested", "freeze"}));
        QCOMPARE(positionIn(position), last);

        // Again from the saved position: nothing.
        const RunResult again = runRelctl(db, {"watch", "--decisions", "--position", position, "--once"});
        QVERIFY2(again.exitCode == 0 && again.out.empty(), failure(again));

        // The hook: the event on stdin, its id, kind and environment in the environment.
        const std::string hook = "cat > " + path("hook-$RELCTL_EVENT_ID.json") +
                                 " && echo \"$RELCTL_EVENT_ID $RELCTL_EVENT_KIND $RELCTL_ENV\" >> " +
                                 path("hook.log");
        const RunResult h = runRelctl(db, {"watch", "--decisions", "--position", path("hook.position"),
                                           "--after", "0", "--once", "--exec", hook});
        QVERIFY2(h.exitCode == 0 && h.out.empty(), failure(h));
        QCOMPARE(readFile(path("hook.log")), std::to_string(expected[0]) + " promotion-requested prod\n" +
                                                 std::to_string(expected[1]) + " freeze prod\n");
        const json onStdin = json::parse(readFile(path("hook-" + std::to_string(expected[1]) + ".json")));
        QCOMPARE(onStdin.at("id").get<long long>(), expected[1]);
        QCOMPARE(onStdin.at("actor").get<std::string>(), std::string("ops"));
        QCOMPARE(positionIn(path("hook.position")), last);

        // A first start without --after begins at the trail's end.
        const RunResult fresh =
            runRelctl(db, {"watch", "--decisions", "--position", path("fresh.position"), "--once"});
        QVERIFY2(fresh.exitCode == 0 && fresh.out.empty(), failure(fresh));
        QCOMPARE(positionIn(path("fresh.position")), last);
        db.write(freezeSql("staging"));
        const RunResult next =
            runRelctl(db, {"watch", "--decisions", "--position", path("fresh.position"), "--once"});
        QVERIFY2(next.exitCode == 0, failure(next));
        QCOMPARE(json::parse(next.out).at("id").get<long long>(), eventIds(db, "freeze").back());
    }

    // A failing hook is run again on the same event, and the position stays
    // before it; SIGTERM stops the watch (exit 0) without moving it.
    void failingHookRetriedPositionKept()
    {
        TestDatabase db;
        QCOMPARE(runRelctl(db, {"env", "add", "staging"}).exitCode, 0);
        const long long before = db.count("SELECT max(id) FROM relctl.events");
        db.write(freezeSql("staging"));
        const long long freeze = eventIds(db, "freeze")[0];
        const std::string position = path("failing.position");
        writeFile(position, std::to_string(before) + "\n");

        const std::string failing =
            "cat >/dev/null; echo $RELCTL_EVENT_ID >> " + path("failing.log") + "; exit 3";
        auto watch =
            startRelctlWithDsn(db.dsn(), {"watch", "--decisions", "--position", position, "--exec", failing});
        QTRY_VERIFY_WITH_TIMEOUT(idLines(path("failing.log")).size() >= 2, 15000);
        QCOMPARE(positionIn(position), before);
        watch->terminate();
        const RunResult stopped = finish(*watch, 15000);
        QVERIFY2(stopped.exitCode == 0, failure(stopped));
        QVERIFY2(stopped.err.find("exited with status 3") != std::string::npos, failure(stopped));
        QVERIFY2(stopped.err.find("not moving past it") != std::string::npos, failure(stopped));
        QCOMPARE(positionIn(position), before);
        for (long long id : idLines(path("failing.log")))
            QCOMPARE(id, freeze);

        // --once (cron) gives up on a hook that keeps failing: exit 1, the
        // position where it was, the event first in line for the next run.
        const RunResult gaveUp =
            runRelctl(db, {"watch", "--decisions", "--position", position, "--once", "--exec", failing});
        QVERIFY2(gaveUp.exitCode == 1, failure(gaveUp));
        QVERIFY2(gaveUp.err.find("not acknowledged") != std::string::npos, failure(gaveUp));
        QCOMPARE(positionIn(position), before);

        // Fails twice, then succeeds: delivered, and only then the position moves.
        const std::string flaky = "cat >/dev/null; echo $RELCTL_EVENT_ID >> " + path("flaky.log") +
                                  "; [ $(wc -l < " + path("flaky.log") + ") -ge 3 ]";
        const RunResult r =
            runRelctl(db, {"watch", "--decisions", "--position", position, "--once", "--exec", flaky});
        QVERIFY2(r.exitCode == 0, failure(r));
        QCOMPARE(idLines(path("flaky.log")), (std::vector<long long>{freeze, freeze, freeze}));
        QCOMPARE(positionIn(position), freeze);
    }

    // kill -9 while the hook runs, over and over: the event in flight is
    // delivered again after the restart, no acknowledged one is, and every
    // one is delivered.
    void killedMidDeliveryResumes()
    {
        TestDatabase db;
        QCOMPARE(runRelctl(db, {"env", "add", "staging"}).exitCode, 0);
        for (int i = 0; i < 50; ++i) {
            db.write(freezeSql("staging"));
            db.write(unfreezeSql("staging"));
        }
        const std::vector<long long> freezes = eventIds(db, "freeze");
        QCOMPARE(freezes.size(), std::size_t{50});
        const std::string position = path("killed.position");
        const std::string started = path("killed.started");
        const std::string hook = "cat >/dev/null; echo $RELCTL_EVENT_ID >> " + started + "; sleep 0.3";
        const Args args = {"watch", "--decisions", "--position", position, "--from-start", "--exec", hook};

        struct Kill
        {
            std::size_t linesBefore; // started lines when it was killed
            long long inFlight;
            long long position;
        };
        std::vector<Kill> kills;
        for (int round = 0; round < 12; ++round) {
            const std::size_t have = idLines(started).size();
            const std::size_t want = have + 1 + static_cast<std::size_t>(round % 4);
            auto watch = startRelctlWithDsn(db.dsn(), args);
            QElapsedTimer t;
            t.start();
            while (idLines(started).size() < want && t.elapsed() < 30000)
                std::this_thread::sleep_for(2ms);
            watch->kill(); // SIGKILL, while the hook sleeps
            watch->waitForFinished(10000);
            const std::vector<long long> lines = idLines(started);
            QVERIFY(lines.size() >= want);
            kills.push_back({lines.size(), lines.back(), positionIn(position)});
            QVERIFY2(kills.back().position < kills.back().inFlight, "acknowledged before the hook ended");
            std::this_thread::sleep_for(350ms); // the orphaned hook ends
        }
        const RunResult rest = relctlWithDsn(
            db.dsn(), {"watch", "--decisions", "--position", position, "--once", "--exec", hook});
        QVERIFY2(rest.exitCode == 0, failure(rest));
        const std::vector<long long> lines = idLines(started);

        // Every freeze delivered: once, and once more for each kill while it was in flight.
        std::map<long long, int> times;
        for (long long id : lines)
            ++times[id];
        std::map<long long, int> killedInFlight; // a restart may be killed on the same event again
        for (const Kill& k : kills)
            ++killedInFlight[k.inFlight];
        QCOMPARE(times.size(), freezes.size());
        for (long long id : freezes) {
            QVERIFY2(times.count(id) == 1,
                     qPrintable(QStringLiteral("event %1 was never delivered").arg(id)));
            QVERIFY2(times[id] == 1 + killedInFlight[id],
                     qPrintable(QStringLiteral("event %1 was delivered %2 times").arg(id).arg(times[id])));
        }
        // After each restart: the event in flight first, then only events after the saved position.
        for (const Kill& k : kills) {
            QVERIFY(k.linesBefore < lines.size());
            QCOMPARE(lines[k.linesBefore], k.inFlight);
            for (std::size_t i = k.linesBefore; i < lines.size(); ++i)
                QVERIFY2(lines[i] > k.position, "an acknowledged event was delivered again");
        }
        QCOMPARE(positionIn(position), db.count("SELECT max(id) FROM relctl.events"));
    }

    // An event whose id was taken first but committed after a later one's is
    // not skipped: the watch holds the later one until it can tell.
    void eventCommittedOutOfOrderIsNotSkipped()
    {
        TestDatabase db;
        QCOMPARE(runRelctl(db, {"env", "add", "a"}).exitCode, 0);
        QCOMPARE(runRelctl(db, {"env", "add", "b"}).exitCode, 0);
        const long long start = db.count("SELECT max(id) FROM relctl.events");
        const std::string position = path("order.position");
        writeFile(position, std::to_string(start) + "\n");

        for (const bool commit : {true, false}) {
            const long long before = positionIn(position);
            pqxx::connection slow(db.adminDsn());
            pqxx::work tx(slow);
            tx.exec(freezeSql("a")); // takes the lower id, commits last
            QCOMPARE(runRelctl(db, {"freeze", "--env", "b", "--by", "ops", "--reason", "x"}).exitCode, 0);
            auto watch =
                startRelctlWithDsn(db.dsn(), {"watch", "--decisions", "--position", position, "--once"});
            QVERIFY(!watch->waitForFinished(2500)); // held behind the open transaction
            QCOMPARE(positionIn(position), before);
            if (commit)
                tx.commit();
            else
                tx.abort();
            const RunResult r = finish(*watch, 20000);
            QVERIFY2(r.exitCode == 0, failure(r));
            std::vector<std::string> envs;
            std::istringstream lines(r.out);
            for (std::string line; std::getline(lines, line);)
                envs.push_back(json::parse(line).at("env").get<std::string>());
            QCOMPARE(envs, commit ? (std::vector<std::string>{"a", "b"}) : (std::vector<std::string>{"b"}));
            QCOMPARE(positionIn(position), eventIds(db, "freeze").back());
            if (commit)
                QCOMPARE(runRelctl(db, {"unfreeze", "--env", "a", "--by", "ops"}).exitCode, 0);
            QCOMPARE(runRelctl(db, {"unfreeze", "--env", "b", "--by", "ops"}).exitCode, 0);
            writeFile(position, std::to_string(db.count("SELECT max(id) FROM relctl.events")) + "\n");
        }
    }

    // Woken by the announcement (the poll is a minute), and connected again
    // after the server ended its sessions.
    void listensAndReconnects()
    {
        TestDatabase db;
        QCOMPARE(runRelctl(db, {"env", "add", "staging"}).exitCode, 0);
        auto watch = startRelctlWithDsn(
            db.dsn(), {"watch", "--decisions", "--position", path("reconnect.position"), "--poll", "60s"});
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(qstr(path("reconnect.position"))), 10000);
        std::string out;
        const auto lines = [&] {
            out += watch->readAllStandardOutput().toStdString();
            return std::count(out.begin(), out.end(), '\n');
        };
        db.write(freezeSql("staging"));
        QTRY_COMPARE_WITH_TIMEOUT(lines(), 1L, 5000);
        db.write(unfreezeSql("staging"));
        QTRY_COMPARE_WITH_TIMEOUT(db.count("SELECT count(*) FROM pg_stat_activity WHERE datname = " +
                                           sqlLiteral(db.name()) + " AND application_name = 'relctl'"),
                                  2LL, 5000);
        db.exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = " +
                sqlLiteral(db.name()) + " AND application_name = 'relctl'");
        std::this_thread::sleep_for(500ms);
        db.write(freezeSql("staging"));
        QTRY_COMPARE_WITH_TIMEOUT(lines(), 2L, 15000);
        QCOMPARE(std::count(out.begin(), out.end(), '\n'), 2L);
        QCOMPARE(json::parse(out.substr(out.find('\n') + 1)).at("id").get<long long>(),
                 eventIds(db, "freeze").back());
        watch->terminate();
        const RunResult stopped = finish(*watch, 15000);
        QVERIFY2(stopped.exitCode == 0, failure(stopped));
        QVERIFY2(stopped.err.find("trying again") != std::string::npos, failure(stopped));
        QCOMPARE(positionIn(path("reconnect.position")), eventIds(db, "freeze").back());
    }

    // SIGTERM while the hook runs: the hook finishes, its event is
    // acknowledged, and the watch exits 0.
    void terminatedAfterTheDeliveryInProgress()
    {
        TestDatabase db;
        QCOMPARE(runRelctl(db, {"env", "add", "staging"}).exitCode, 0);
        db.write(freezeSql("staging"));
        db.write(unfreezeSql("staging"));
        db.write(freezeSql("staging"));
        const std::vector<long long> freezes = eventIds(db, "freeze");
        const std::string log = path("term.log");
        const std::string hook =
            "cat >/dev/null; echo start >> " + log + "; sleep 1; echo $RELCTL_EVENT_ID >> " + log;
        auto watch = startRelctlWithDsn(db.dsn(), {"watch", "--decisions", "--position",
                                                   path("term.position"), "--from-start", "--exec", hook});
        QTRY_VERIFY_WITH_TIMEOUT(readFile(log) == "start\n", 10000);
        watch->terminate();
        const RunResult stopped = finish(*watch, 15000);
        QVERIFY2(stopped.exitCode == 0, failure(stopped));
        QCOMPARE(readFile(log), "start\n" + std::to_string(freezes[0]) + "\n");
        QCOMPARE(positionIn(path("term.position")), freezes[0]);
    }

    void badInput()
    {
        TestDatabase db;
        const std::string position = path("damaged.position");
        writeFile(position, "not a position\n");
        const RunResult damaged = runRelctl(db, {"watch", "--decisions", "--position", position, "--once"});
        QCOMPARE(damaged.exitCode, 2);
        QVERIFY2(damaged.err.find(position) != std::string::npos, failure(damaged));
        QVERIFY2(damaged.err.find("damaged") != std::string::npos, failure(damaged));
        QCOMPARE(std::count(damaged.err.begin(), damaged.err.end(), '\n'), 1L);
        QCOMPARE(readFile(position), std::string("not a position\n"));

        QVERIFY(QDir().mkdir(qstr(path("a-directory.position"))));
        const RunResult directory =
            runRelctl(db, {"watch", "--decisions", "--position", path("a-directory.position"), "--once"});
        QVERIFY2(directory.exitCode == 2 && directory.err.find("not a regular file") != std::string::npos,
                 failure(directory));

        for (const Args& args : std::vector<Args>{{"watch", "--decisions", "--bogus"},
                                                  {"watch", "--decisions", "--exec"},
                                                  {"watch", "--decisions", "--exec", ""},
                                                  {"watch", "--once"},
                                                  {"watch", "--decisions", "--after", "-1"},
                                                  {"watch", "--decisions", "--after", "3", "--from-start"}}) {
            const RunResult r = runRelctl(db, args);
            QVERIFY2(r.exitCode == 2, failure(r));
            QCOMPARE(std::count(r.err.begin(), r.err.end(), '\n'), 1L);
        }
    }

    void needsTheReviewerRole()
    {
        TestDatabase db;
        const RunResult r = relctlWithDsn(
            db.jobDsn(), {"watch", "--decisions", "--position", path("job.position"), "--once"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.find("relctl_test_job") != std::string::npos, failure(r));
        QVERIFY2(r.err.find("relctl_reviewer") != std::string::npos, failure(r));
        QVERIFY(!QFile::exists(qstr(path("job.position"))));
        const RunResult reviewer = relctlWithDsn(
            db.reviewerDsn(), {"watch", "--decisions", "--position", path("rev.position"), "--once"});
        QVERIFY2(reviewer.exitCode == 0, failure(reviewer));
    }

    // Without --position: one file per database under $XDG_STATE_HOME.
    void defaultPositionUnderStateHome()
    {
        TestDatabase db;
        const std::string state = path("state");
        const RunResult r =
            runRelctl(db, {"watch", "--decisions", "--once"}, {}, {{"XDG_STATE_HOME", state}});
        QVERIFY2(r.exitCode == 0, failure(r));
        const QStringList files = QDir(qstr(state + "/relctl/watch")).entryList(QDir::Files);
        QCOMPARE(files.size(), 1);
        QVERIFY2(files[0].startsWith(qstr(db.name() + "-")) && files[0].endsWith(QStringLiteral(".position")),
                 qPrintable(files[0]));
    }
};

QTEST_GUILESS_MAIN(TestWatch)
#include "test_watch.moc"
