// Rehearsals, end to end: every scenario through `relctl rehearse` and through
// the engine's API, against the test cluster, with real relctl processes as
// the jobs. The scratch databases must be gone afterwards, also after a
// cancelled run and after an actor was killed from outside; a rehearsal must
// refuse to run in a database that holds environments.

#define RELCTL_TEST_NO_SHORT_NAME
#include "relctl/rehearsal.h"
#include "relctlprocess.h"
#include "testdatabase.h"

#include <QtTest>
#include <atomic>
#include <csignal>
#include <functional>
#include <pqxx/pqxx>

using namespace relctl;

namespace {

// The scratch databases a rehearsal left on the test cluster.
long long scratchDatabases()
{
    pqxx::connection conn(TestDatabase::clusterDsn());
    pqxx::nontransaction tx(conn);
    return tx.exec1("SELECT count(*) FROM pg_database WHERE datname LIKE 'relctl\\_rehearsal\\_%'")[0]
        .as<long long>();
}

void dropScratchDatabases()
{
    pqxx::connection conn(TestDatabase::clusterDsn());
    pqxx::nontransaction tx(conn);
    for (const auto& row :
         tx.exec("SELECT datname FROM pg_database WHERE datname LIKE 'relctl\\_rehearsal\\_%'"))
        tx.exec("DROP DATABASE " + tx.quote_name(row[0].c_str()) + " WITH (FORCE)");
}

// The actors of a rehearsal still running on this machine (their job URL
// names the rehearsal).
int leftoverActors()
{
    QProcess pgrep;
    pgrep.start(QStringLiteral("pgrep"), {QStringLiteral("-f"), QStringLiteral("rehearsal://")});
    pgrep.waitForFinished();
    return static_cast<int>(pgrep.readAllStandardOutput().count('\n'));
}

// The scenarios' deploys still running: each runs in a process group of its
// own and polls for its go file in the rehearsal's directory.
int leftoverDeploys()
{
    QProcess pgrep;
    pgrep.start(QStringLiteral("pgrep"), {QStringLiteral("-f"), QStringLiteral("relctl-rehearsal-.*[.]go")});
    pgrep.waitForFinished();
    return static_cast<int>(pgrep.readAllStandardOutput().count('\n'));
}

class Recorder final : public rehearsal::Observer
{
public:
    std::function<void(const rehearsal::Step&)> onStep;
    std::vector<rehearsal::Step> steps;
    std::vector<std::string> started;
    int timelines = 0;
    std::size_t lastLeases = 0;

    void scenarioStarted(const rehearsal::Scenario& s, int, int) override { started.push_back(s.name); }
    void step(const rehearsal::Step& s) override
    {
        steps.push_back(s);
        if (onStep)
            onStep(s);
    }
    void timeline(const std::string&, const TimelineSlice& slice) override
    {
        ++timelines;
        lastLeases = slice.leases.size();
    }
};

rehearsal::Options optionsFor(std::vector<std::string> scenarios)
{
    rehearsal::Options o;
    o.scenarios = std::move(scenarios);
    o.server = TestDatabase::clusterDsn();
    o.relctl = relctlBinary();
    return o;
}

const history::Verdict* verdict(const rehearsal::ScenarioResult& s, const std::string& name)
{
    for (const history::Verdict& v : s.invariants)
        if (v.name == name)
            return &v;
    return nullptr;
}

} // namespace

class TestRehearse : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        dropScratchDatabases(); // what an aborted earlier run left
    }
    void init() { QCOMPARE(scratchDatabases(), 0LL); }
    void cleanup() { dropScratchDatabases(); }

    void everyScenarioPassesThroughTheCommandLine()
    {
        const RunResult r = relctlWithDsn(TestDatabase::clusterDsn(), {"--json", "rehearse", "all"});
        QVERIFY2(r.exitCode == 0, (r.out + r.err).c_str());
        const nlohmann::json report = r.json();
        QCOMPARE(report["passed"].get<bool>(), true);
        QCOMPARE(report["dropped"].get<bool>(), true);
        QCOMPARE(report["scenarios"].size(), rehearsal::scenarios().size());
        for (const auto& s : report["scenarios"]) {
            const std::string name = s["name"].get<std::string>();
            QVERIFY2(s["passed"].get<bool>(), name.c_str());
            QVERIFY2(!s["steps"].empty(), name.c_str());
            QVERIFY2(s["invariants"].size() >= 3, name.c_str());
            for (const auto& v : s["invariants"])
                QVERIFY2(v["passed"].get<bool>(), (name + ": " + v.dump()).c_str());
            QVERIFY(s["duration_ms"].get<long long>() > 0);
        }
        std::vector<std::string> names;
        for (const auto& s : report["scenarios"])
            names.push_back(s["name"].get<std::string>());
        QVERIFY(std::find(names.begin(), names.end(), "rollback") != names.end());
        // The live log went to stderr, one line per step.
        QVERIFY(r.err.find("== race (1/") != std::string::npos);
        QVERIFY(r.err.find("STALE_GENERATION") != std::string::npos);
        QCOMPARE(scratchDatabases(), 0LL);
        QCOMPARE(leftoverActors(), 0);
    }

    void scenariosPassThroughTheEngine()
    {
        Recorder recorder;
        std::atomic<bool> cancel{false};
        const rehearsal::Report report = rehearsal::run(optionsFor({"race", "crash"}), recorder, cancel);
        QVERIFY(report.passed());
        QCOMPARE(report.scenarios.size(), std::size_t{2});
        QCOMPARE(recorder.started, (std::vector<std::string>{"race", "crash"}));
        const rehearsal::ScenarioResult& race = report.scenarios[0];
        QVERIFY(verdict(race, "r8-exit-4") && verdict(race, "r8-exit-4")->passed);
        QVERIFY(verdict(race, "r8-traced-stale-generation"));
        // The race's timeline: r9's lease only (r8 never got one).
        QCOMPARE(race.timeline.leases.size(), std::size_t{1});
        QCOMPARE(race.timeline.leases[0].release, std::string("r9"));
        const rehearsal::ScenarioResult& crash = report.scenarios[1];
        QVERIFY(verdict(crash, "takeover-within-bound") && verdict(crash, "takeover-within-bound")->passed);
        // Events streamed as they happened, with the database's clock.
        const auto recorded = std::count_if(recorder.steps.begin(), recorder.steps.end(),
                                            [](const rehearsal::Step& s) { return s.serverAt.has_value(); });
        QVERIFY(recorded >= 6);
        QVERIFY(recorder.timelines >= 2);
        QCOMPARE(scratchDatabases(), 0LL);
    }

    // Cancelled mid-scenario: the actors are killed, the scratch database is
    // dropped, and the report says so.
    void aCancelledRunLeavesNothingBehind()
    {
        Recorder recorder;
        std::atomic<bool> cancel{false};
        recorder.onStep = [&](const rehearsal::Step& s) {
            if (s.action == "SIGSTOP r8's relctl run")
                cancel = true;
        };
        const rehearsal::Report report = rehearsal::run(optionsFor({"expiry", "race"}), recorder, cancel);
        QVERIFY(report.cancelled);
        QVERIFY(!report.passed());
        QCOMPARE(report.scenarios.size(), std::size_t{1}); // race never started
        QCOMPARE(report.scenarios[0].error, std::string("cancelled"));
        QVERIFY(report.dropped);
        QCOMPARE(scratchDatabases(), 0LL);
        QTRY_COMPARE(leftoverActors(), 0);
        QTRY_COMPARE(leftoverDeploys(), 0);
    }

    // An actor killed from outside (not by the scenario): the scenario fails
    // on its expectation, and still cleans up.
    void anActorKilledFromOutsideFailsTheScenario()
    {
        Recorder recorder;
        std::atomic<bool> cancel{false};
        recorder.onStep = [&](const rehearsal::Step& s) {
            if (s.actor == "r9" && s.outcome == "granted") {
                QProcess::execute(QStringLiteral("pkill"), {QStringLiteral("-KILL"), QStringLiteral("-f"),
                                                            QStringLiteral("rehearsal://race/r9")});
            }
        };
        const rehearsal::Report report = rehearsal::run(optionsFor({"race"}), recorder, cancel);
        QVERIFY(!report.passed());
        QVERIFY(!report.scenarios[0].passed);
        QVERIFY(report.dropped);
        QCOMPARE(scratchDatabases(), 0LL);
        QTRY_COMPARE(leftoverActors(), 0);
        // r9's deploy outlived its killed wrapper; the scenario's end stops it.
        QTRY_COMPARE(leftoverDeploys(), 0);
    }

    // The rollback scenario through the engine: its verdicts name the
    // rollback, the stale retries and the freeze; the history checker judged
    // the rollbacks. Then again with an intruder holding the lease when the
    // operator rolls back: the rollback is refused busy, and the scenario
    // fails instead of passing on the stale refusals alone.
    void theRollbackScenarioPassesAndFailsWithoutItsRollback()
    {
        Recorder recorder;
        std::atomic<bool> cancel{false};
        rehearsal::Report report = rehearsal::run(optionsFor({"rollback"}), recorder, cancel);
        QVERIFY(report.passed());
        const rehearsal::ScenarioResult& played = report.scenarios.at(0);
        for (const char* name :
             {"rolled-back-to-v1.8", "rollback-fences-older-leases", "rolled-back-while-frozen",
              "v1.9-acquire-again-exit-4", "v1.9-late-publish-exit-4", "v1.8-acquire-again-exit-4",
              "v1.10-exit-0", "v1.12-while-frozen-exit-6", "v1.9-traced-stale-generation",
              "generations-advance", "freshness-bar-kept", "expected-current-manifest"})
            QVERIFY2(verdict(played, name) && verdict(played, name)->passed, name);
        const std::string advance = verdict(played, "generations-advance")->detail;
        QVERIFY2(advance.find("2 rollbacks") != std::string::npos, advance.c_str());
        // Two rollback leases, each on the timeline.
        const auto rollbackLeases =
            std::count_if(played.timeline.leases.begin(), played.timeline.leases.end(),
                          [](const LeaseSpan& l) { return l.job == "rollback by oncall"; });
        QCOMPARE(rollbackLeases, 2L);
        QCOMPARE(scratchDatabases(), 0LL);

        TestDatabase db(TestDatabase::Schema::Empty);
        Recorder intruded;
        bool intruder = false;
        intruded.onStep = [&](const rehearsal::Step& s) {
            if (s.actor == "v1.9" && s.outcome == "exit 0" && s.action.rfind("relctl run", 0) == 0)
                intruder = relctlWithDsn(db.adminDsn(),
                                         {"lease", "acquire", "--env", "rollback", "--job", "intruder",
                                          "--release", "x", "--generation", "100", "--ttl", "3s"})
                               .exitCode == 0;
        };
        rehearsal::Options options = optionsFor({"rollback"});
        options.dsn = db.adminDsn();
        report = rehearsal::run(options, intruded, cancel);
        QVERIFY(intruder);
        QVERIFY(!report.passed());
        const rehearsal::ScenarioResult& failed = report.scenarios.at(0);
        QVERIFY(!failed.passed);
        QVERIFY(verdict(failed, "rolled-back-to-v1.8") && !verdict(failed, "rolled-back-to-v1.8")->passed);
        QVERIFY(verdict(failed, "rollback-fences-older-leases") &&
                !verdict(failed, "rollback-fences-older-leases")->passed);
        QCOMPARE(scratchDatabases(), 0LL);
    }

    void refusesADatabaseWithEnvironments()
    {
        TestDatabase db;
        QCOMPARE(runRelctl(db, {"env", "add", "prod"}).exitCode, 0);
        const auto before = db.footprint();
        const RunResult r =
            relctlWithDsn(TestDatabase::clusterDsn(), {"rehearse", "race", "--dsn", db.adminDsn()});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.find("holds 1 environment(s) (prod)") != std::string::npos, r.err.c_str());
        QCOMPARE(db.footprint(), before);
        QCOMPARE(scratchDatabases(), 0LL);
    }

    void rehearsesInAnEmptyDatabaseAndKeepsIt()
    {
        TestDatabase db(TestDatabase::Schema::Empty);
        const RunResult r = relctlWithDsn(TestDatabase::clusterDsn(),
                                          {"--json", "rehearse", "rollout", "--dsn", db.adminDsn()});
        QVERIFY2(r.exitCode == 0, (r.out + r.err).c_str());
        QCOMPARE(r.json()["dropped"].get<bool>(), false);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.environments WHERE name = 'rollout'"), 1LL);
        // What the rehearsal left there verifies clean, through relctl verify too.
        QCOMPARE(relctlWithDsn(db.adminDsn(), {"verify"}).exitCode, 0);
        QCOMPARE(scratchDatabases(), 0LL);
    }

    void likeCopiesTheEnvironmentsSettings()
    {
        TestDatabase db;
        QCOMPARE(runRelctl(db, {"env", "add", "prod"}).exitCode, 0);
        QCOMPARE(
            runRelctl(db, {"env", "set", "prod", "--policy", "newest", "--supersede", "approval"}).exitCode,
            0);
        const RunResult r = relctlWithDsn(db.dsn(), {"--json", "rehearse", "race", "--like", "prod"});
        // The relctl database's login may not create databases: the scratch
        // database needs CREATEDB, and the message says so.
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.find("CREATEDB") != std::string::npos, r.err.c_str());

        // As the administrator, with the settings read from the relctl database.
        const RunResult ok = relctlWithDsn(db.adminDsn(), {"--json", "rehearse", "race", "--like", "prod"});
        QVERIFY2(ok.exitCode == 0, (ok.out + ok.err).c_str());
        const nlohmann::json report = ok.json();
        // The scenario's first own step says which settings it plays with.
        std::string settings;
        for (const auto& step : report["scenarios"][0]["steps"])
            if (step["actor"] == "rehearsal" && step["action"] == "env add race")
                settings = step.value("detail", "");
        QVERIFY2(settings.find("policy newest, supersede approval") != std::string::npos &&
                     settings.find("(like prod)") != std::string::npos,
                 settings.c_str());
        QCOMPARE(scratchDatabases(), 0LL);
    }

    void badInputIsExitTwo()
    {
        TestDatabase db;
        const RunResult unknownLike = relctlWithDsn(db.adminDsn(), {"rehearse", "race", "--like", "nosuch"});
        QCOMPARE(unknownLike.exitCode, 2);
        QVERIFY2(unknownLike.err.find("nosuch") != std::string::npos, unknownLike.err.c_str());
        const RunResult unknownScenario = relctlWithDsn(db.adminDsn(), {"rehearse", "stampede"});
        QCOMPARE(unknownScenario.exitCode, 2);
        QVERIFY2(unknownScenario.err.find("unknown scenario \"stampede\"") != std::string::npos,
                 unknownScenario.err.c_str());
        QCOMPARE(relctlWithDsn(db.adminDsn(), {"rehearse", "race", "--ttl", "10ms"}).exitCode, 2);
        QCOMPARE(scratchDatabases(), 0LL);
    }

    void listsAndReports()
    {
        const RunResult list = relctlWithDsn(TestDatabase::clusterDsn(), {"--json", "rehearse", "--list"});
        QCOMPARE(list.exitCode, 0);
        QCOMPARE(list.json()["scenarios"].size(), rehearsal::scenarios().size());
        const RunResult help = relctlWithDsn(TestDatabase::clusterDsn(), {"rehearse", "--help"});
        QVERIFY(help.out.find("lost-reply") != std::string::npos);

        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("report.html")).toStdString();
        const RunResult r = relctlWithDsn(TestDatabase::clusterDsn(), {"rehearse", "race", "--report", path});
        QVERIFY2(r.exitCode == 0, r.err.c_str());
        QFile file(QString::fromStdString(path));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray page = file.readAll();
        QVERIFY(page.startsWith("<!DOCTYPE html>"));
        QVERIFY(page.contains("<svg"));
        QVERIFY(page.contains("STALE_GENERATION"));
        QVERIFY(page.contains("r8-exit-4"));
        // Self-contained: nothing is fetched from elsewhere.
        QVERIFY(!page.contains("src=") && !page.contains("<link") && !page.contains("<script"));
    }
};

QTEST_GUILESS_MAIN(TestRehearse)
#include "test_rehearse.moc"
