// Bounded local state: the request secrets relctl keeps in
// $RELCTL_STATE_DIR/requests, one file per op id, are kept for a retention
// after their last use and capped in number, pruned on use (bounded work per
// use) and by `relctl state prune`. Secrets are created in-process through
// requestSecret(), the core function every acquire calls, and aged with
// utimensat(); the retry and the commands run as separate relctl processes.

#define RELCTL_TEST_NO_SHORT_NAME
#include "faultproxy.h"
#include "relctl/protocol.h"
#include "relctl/state.h"
#include "relctlprocess.h"
#include "testdatabase.h"

#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <random>
#include <sys/stat.h>
#include <thread>

using nlohmann::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// The state directory of one test, for this process and the relctl processes it starts.
class StateDir final
{
public:
    StateDir()
    {
        if (!m_dir.isValid())
            qFatal("cannot create a temporary directory");
        setenv("RELCTL_STATE_DIR", path().c_str(), 1);
        for (const char* name : {"RELCTL_STATE_RETENTION", "RELCTL_STATE_MAX_FILES", "RELCTL_OP_KEY"})
            unsetenv(name);
    }
    ~StateDir()
    {
        for (const char* name : {"RELCTL_STATE_DIR", "RELCTL_STATE_RETENTION", "RELCTL_STATE_MAX_FILES"})
            unsetenv(name);
    }
    StateDir(const StateDir&) = delete;
    StateDir& operator=(const StateDir&) = delete;

    std::string path() const { return m_dir.path().toStdString(); }
    fs::path requests() const { return fs::path(path()) / "requests"; }
    Env env() const { return {{"RELCTL_STATE_DIR", path()}}; }

    // The request secrets' file names (sixteen hex digits).
    std::vector<std::string> secrets() const
    {
        std::vector<std::string> names;
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(requests(), ec)) {
            const std::string name = e.path().filename().string();
            if (name.size() == 16 && name.find('.') == std::string::npos)
                names.push_back(name);
        }
        return names;
    }
    long long count() const { return static_cast<long long>(secrets().size()); }

    // The next use prunes (the last prune is long ago).
    void makePruneDue() const { setAge(relctl::state::pruneStamp(requests()), 24h * 365); }
    // No use prunes for the next hour.
    void holdPrune() const
    {
        std::ofstream(relctl::state::pruneStamp(requests()), std::ios::app).close();
        setAge(relctl::state::pruneStamp(requests()), 0s);
    }
    bool pruneDue() const
    {
        struct stat st;
        return stat(relctl::state::pruneStamp(requests()).c_str(), &st) != 0 ||
               st.st_mtim.tv_sec < std::time(nullptr) - 3600;
    }

    static void setAge(const fs::path& file, std::chrono::seconds age)
    {
        const timespec at{std::time(nullptr) - static_cast<std::time_t>(age.count()), 0};
        const timespec times[2] = {at, at};
        if (utimensat(AT_FDCWD, file.c_str(), times, 0) != 0)
            qFatal("cannot age %s", file.c_str());
    }
    void ageAll(std::chrono::seconds age) const
    {
        for (const std::string& name : secrets())
            setAge(requests() / name, age);
    }
    // The file of the secret requestSecret() made last.
    static std::string newest(const std::vector<std::string>& before, const std::vector<std::string>& after)
    {
        for (const std::string& n : after)
            if (std::find(before.begin(), before.end(), n) == before.end())
                return n;
        return {};
    }

private:
    QTemporaryDir m_dir;
};

std::string readFile(const fs::path& path)
{
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

// The file of an op id's secret.
fs::path fileOf(const StateDir& dir, const std::string& opId)
{
    return dir.requests() / relctl::state::requestFileName(opId);
}

std::string handleOf(const TestDatabase& db, const std::string& job)
{
    return db.scalar(
        "SELECT env || ':' || token || ':' || replace(lease_id::text, '-', '') FROM relctl.leases "
        "WHERE job = " +
        sqlLiteral(job));
}

} // namespace

class TestState final : public QObject
{
    Q_OBJECT

private slots:
    // 10,000 op ids do not leave 10,000 files: past the retention every
    // secret goes, and beyond RELCTL_STATE_MAX_FILES the least recently used
    // ones that are at least an hour old. Pruning happens on use, at most
    // 1,000 removals per use; a secret used within the hour stays even over
    // the cap.
    void tenThousandOpIdsLeaveAtMostTheBound()
    {
        StateDir dir;
        setenv("RELCTL_STATE_MAX_FILES", "1000", 1);
        QElapsedTimer timer;
        timer.start();
        for (int i = 0; i < 10'000; ++i)
            relctl::requestSecret("ci-" + std::to_string(i) + "-acquire");
        qInfo("10,000 request secrets created in %lld ms", timer.elapsed());
        QCOMPARE(dir.count(), 10'000LL);

        // All used within the hour: none removed, even over the cap.
        dir.makePruneDue();
        relctl::requestSecret("young-1");
        QCOMPARE(dir.count(), 10'001LL);
        QVERIFY(!dir.pruneDue());

        // 5,000 unused for 8 days (past the default 7-day retention), the
        // others 2 hours ago; then jobs go on using op ids.
        const std::vector<std::string> names = dir.secrets();
        for (std::size_t i = 0; i < names.size(); ++i)
            StateDir::setAge(dir.requests() / names[i], i % 2 == 0 ? 8 * 24h : 2h);
        const long long eightDaysOld = static_cast<long long>((names.size() + 1) / 2);
        dir.makePruneDue();
        long long before = dir.count();
        int uses = 0, prunes = 0;
        while (true) {
            const bool due = dir.pruneDue();
            timer.restart();
            relctl::requestSecret("use-" + std::to_string(uses++));
            const long long elapsed = timer.elapsed();
            const long long now = dir.count();
            if (due) {
                ++prunes;
                qInfo("a use that pruned: %lld -> %lld secrets in %lld ms", before, now, elapsed);
                // Bounded work per use: at most 1,000 removals (and its own file).
                QVERIFY2(before + 1 - now <= static_cast<long long>(relctl::state::kRemoveLimitOnUse),
                         qPrintable(QString::number(before + 1 - now)));
            }
            before = now;
            if (!dir.pruneDue())
                break;
            QVERIFY(uses < 100);
        }
        // 9,001 removals take that many uses.
        QVERIFY2(prunes >= 9001 / static_cast<int>(relctl::state::kRemoveLimitOnUse),
                 qPrintable(QString::number(prunes)));
        // The bound: the cap, all of them from the most recent uses.
        QCOMPARE(dir.count(), 1000LL);
        for (const std::string& name : dir.secrets()) {
            struct stat st;
            QCOMPARE(stat((dir.requests() / name).c_str(), &st), 0);
            QVERIFY(st.st_mtim.tv_sec > std::time(nullptr) - 3 * 3600);
        }
        // A further use is not due: it does not prune (nor scan).
        relctl::requestSecret("use-after");
        QCOMPARE(dir.count(), 1001LL);
        Q_UNUSED(eightDaysOld);
    }

    // The retention counts from the last use: a use refreshes the secret, an
    // old secret that is used again survives the next prune.
    void aUseRefreshesTheSecret()
    {
        StateDir dir;
        const std::string secret = relctl::requestSecret("job-7-acquire");
        QCOMPARE(readFile(fileOf(dir, "job-7-acquire")), secret);
        StateDir::setAge(fileOf(dir, "job-7-acquire"), 6 * 24h);
        QCOMPARE(relctl::requestSecret("job-7-acquire"), secret);
        struct stat st;
        QCOMPARE(stat(fileOf(dir, "job-7-acquire").c_str(), &st), 0);
        QVERIFY(st.st_mtim.tv_sec >= std::time(nullptr) - 5);
        // Used 6 days ago, then again: 6 days on, it is still kept.
        StateDir::setAge(fileOf(dir, "job-7-acquire"), 6 * 24h);
        relctl::requestSecret("job-7-acquire");
        relctl::requestSecret("job-8-acquire");
        StateDir::setAge(fileOf(dir, "job-8-acquire"), 8 * 24h);
        dir.makePruneDue();
        relctl::requestSecret("job-9-acquire");
        QCOMPARE(readFile(fileOf(dir, "job-7-acquire")), secret);
        QVERIFY(!fs::exists(fileOf(dir, "job-8-acquire")));
    }

    // A prune and uses at once, over and over on a few secrets that are
    // past the retention whenever a use begins: a use either refreshes its
    // secret before the prune checks it (kept) or, coming second, makes a new
    // one; it never goes on with a secret the prune removed. After every use
    // the file holds the secret the use returned.
    void aConcurrentPruneNeverRemovesASecretInUse()
    {
        StateDir dir;
        const std::vector<std::string> ops{"race-1", "race-2", "race-3", "race-4"};
        for (const std::string& op : ops)
            relctl::requestSecret(op);
        dir.holdPrune(); // only the pruning thread prunes
        std::atomic<bool> done{false};
        std::atomic<int> passes{0}, removed{0};
        std::thread pruner([&] {
            const relctl::state::PruneOptions options; // the default 7-day retention
            while (!done) {
                removed += static_cast<int>(relctl::state::prune(dir.requests(), options).removed());
                ++passes;
            }
        });
        int lost = 0;
        const timespec old{std::time(nullptr) - 8 * 24 * 3600, 0};
        const timespec times[2] = {old, old};
        for (int i = 0; i < 20'000; ++i) {
            const std::string& op = ops[static_cast<std::size_t>(i) % ops.size()];
            utimensat(AT_FDCWD, fileOf(dir, op).c_str(), times, 0); // gone already: fine
            const std::string secret = relctl::requestSecret(op);
            if (readFile(fileOf(dir, op)) != secret)
                ++lost;
        }
        done = true;
        pruner.join();
        qInfo("%d prune passes removed %d secrets alongside 20,000 uses", passes.load(), removed.load());
        QVERIFY(removed > 0); // the two did meet
        QCOMPARE(lost, 0);
    }

    // An acquire is granted, its reply is lost and the database stays
    // unreachable: the job exits 9. Days later, inside the retention, after
    // other jobs pruned the directory, its retry with the same op id proves
    // itself and gets the lease's handle. Past the retention the secret is
    // gone, and a retry is refused REQUEST_SECRET_MISMATCH.
    void aRetryInsideTheRetentionProvesItself()
    {
        StateDir dir;
        TestDatabase db;
        QCOMPARE(runRelctl(db, {"env", "add", "prod"}).exitCode, 0);
        QCOMPARE(runRelctl(db, {"env", "add", "staging"}).exitCode, 0);
        const Args acquire{"--json", "lease",       "acquire",   "--env",   "prod",
                           "--job",  "gitlab-4711", "--release", "v1",      "--generation",
                           "1",      "--ttl",       "10m",       "--op-id", "gitlab-4711-acquire"};
        {
            FaultProxy proxy(TestDatabase::clusterDsn());
            proxy.loseReplyTo("relctl.acquire(", true);
            Env env = dir.env();
            env["RELCTL_RECONNECT_TIMEOUT"] = "1s";
            const RunResult lost = relctlWithDsn(proxy.dsn(db.name()), acquire, env);
            QVERIFY2(lost.exitCode == 9, failure(lost));
            QCOMPARE(proxy.struck(), 1);
        }
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases WHERE job = 'gitlab-4711'"), 1LL);
        const fs::path secret = fileOf(dir, "gitlab-4711-acquire");
        QVERIFY(fs::exists(secret));

        // Six days on; another op id is unused for eight. A job's use prunes.
        StateDir::setAge(secret, 6 * 24h);
        relctl::requestSecret("gitlab-4000-acquire");
        StateDir::setAge(fileOf(dir, "gitlab-4000-acquire"), 8 * 24h);
        dir.makePruneDue();
        const RunResult other =
            runRelctl(db,
                      {"lease", "acquire", "--env", "staging", "--job", "gitlab-4712", "--release", "v1",
                       "--generation", "1", "--op-id", "gitlab-4712-acquire"},
                      {}, dir.env());
        QVERIFY2(other.exitCode == 0, failure(other));
        QVERIFY(!dir.pruneDue());
        QVERIFY(!fs::exists(fileOf(dir, "gitlab-4000-acquire")));
        QVERIFY(fs::exists(secret));

        const RunResult retry = runRelctl(db, acquire, {}, dir.env());
        QVERIFY2(retry.exitCode == 0, failure(retry));
        QCOMPARE(retry.json()["replayed"], json(true));
        QCOMPARE(retry.json()["handle"].get<std::string>(), handleOf(db, "gitlab-4711"));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases WHERE job = 'gitlab-4711'"), 1LL);

        // Eight days after its last use `state prune` removes it; the retry
        // then has a new secret, which the database does not accept.
        StateDir::setAge(secret, 8 * 24h);
        const RunResult pruned = relctlWithDsn("", {"--json", "state", "prune"}, dir.env());
        QVERIFY2(pruned.exitCode == 0, failure(pruned));
        QCOMPARE(pruned.json()["removed_by_age"], json(1));
        QVERIFY(!fs::exists(secret));
        const RunResult late = runRelctl(db, acquire, {}, dir.env());
        QVERIFY2(late.exitCode == 7, failure(late));
        QCOMPARE(late.json()["error"], json("REQUEST_SECRET_MISMATCH"));
    }

    // relctl state show and prune: what is there, what a prune removes, and
    // that a dry run and a floor of one hour keep everything they promise to.
    void showAndPrune()
    {
        StateDir dir;
        RunResult shown = relctlWithDsn("", {"--json", "state", "show"}, dir.env());
        QVERIFY2(shown.exitCode == 0, failure(shown));
        QCOMPARE(shown.json()["exists"], json(false));
        QCOMPARE(shown.json()["secrets"], json(0));
        QCOMPARE(shown.json()["directory"], json(dir.requests().string()));
        QVERIFY(!fs::exists(dir.requests())); // showing writes nothing

        for (const char* op : {"a", "b", "c", "d"})
            relctl::requestSecret(op);
        StateDir::setAge(fileOf(dir, "a"), 8 * 24h);
        StateDir::setAge(fileOf(dir, "b"), 3h);
        StateDir::setAge(fileOf(dir, "c"), 2h);
        shown = relctlWithDsn("", {"--json", "state", "show"}, dir.env());
        QVERIFY2(shown.exitCode == 0, failure(shown));
        const json s = shown.json();
        QCOMPARE(s["exists"], json(true));
        QCOMPARE(s["secrets"], json(4));
        QCOMPARE(s["bytes"], json(4 * 65));
        QCOMPARE(s["retention_ms"], json(7LL * 24 * 3600 * 1000));
        QCOMPARE(s["max_files"], json(10000));
        QCOMPARE(s["minimum_age_ms"], json(3600 * 1000));
        QVERIFY(s["oldest_use"].is_string());
        QVERIFY(s["last_pruned"].is_string()); // the first use pruned
        const RunResult plain = relctlWithDsn("", {"state", "show"}, dir.env());
        QVERIFY2(plain.out.find("request secrets: 4 (260 bytes)") != std::string::npos, failure(plain));
        QVERIFY2(plain.out.find("retention: 168h after the last use") != std::string::npos, failure(plain));

        RunResult dry = relctlWithDsn("", {"--json", "state", "prune", "--dry-run"}, dir.env());
        QVERIFY2(dry.exitCode == 0, failure(dry));
        QCOMPARE(dry.json()["removed"], json(1));
        QCOMPARE(dry.json()["dry_run"], json(true));
        QCOMPARE(dir.count(), 4LL);

        RunResult pruned = relctlWithDsn("", {"--json", "state", "prune", "--max-files", "1"}, dir.env());
        QVERIFY2(pruned.exitCode == 0, failure(pruned));
        // a by age; then b and c over the cap; d, used just now, stays.
        QCOMPARE(pruned.json()["removed_by_age"], json(1));
        QCOMPARE(pruned.json()["removed_by_count"], json(2));
        QCOMPARE(pruned.json()["kept"], json(1));
        QCOMPARE(dir.secrets(), std::vector<std::string>{relctl::state::requestFileName("d")});

        relctl::requestSecret("e");
        StateDir::setAge(fileOf(dir, "e"), 2h);
        pruned = relctlWithDsn("", {"state", "prune", "--older-than", "1h"}, dir.env());
        QVERIFY2(pruned.exitCode == 0, failure(pruned));
        QVERIFY2(pruned.out.find("removed 1 request secrets") != std::string::npos, failure(pruned));
        QCOMPARE(dir.count(), 1LL);
    }

    void badInput_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("variable");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("message");
        const auto row = [](const char* name, const std::vector<const char*>& args, const char* variable,
                            const char* value, const char* message) {
            QStringList list;
            for (const char* a : args)
                list << QString::fromUtf8(a);
            QTest::newRow(name) << list << QString::fromUtf8(variable) << QString::fromUtf8(value)
                                << QString::fromUtf8(message);
        };
        row("older-than below an hour", {"state", "prune", "--older-than", "30m"}, "", "",
            "--older-than must be at least 1h");
        row("negative older-than", {"state", "prune", "--older-than", "-5s"}, "", "",
            "invalid duration \"-5s\"");
        row("garbage older-than", {"state", "prune", "--older-than", "soon"}, "", "",
            "invalid duration \"soon\"");
        row("zero max-files", {"state", "prune", "--max-files", "0"}, "", "",
            "expected a positive 64-bit integer");
        row("garbage retention", {"state", "prune"}, "RELCTL_STATE_RETENTION", "a week",
            "RELCTL_STATE_RETENTION: invalid duration \"a week\"");
        row("short retention", {"state", "show"}, "RELCTL_STATE_RETENTION", "10m",
            "RELCTL_STATE_RETENTION must be at least 1h");
        row("negative max files", {"state", "show"}, "RELCTL_STATE_MAX_FILES", "-3",
            "RELCTL_STATE_MAX_FILES: invalid value \"-3\"");
    }

    // Exit 2, one line naming the problem, a JSON error with --json, and
    // nothing removed or written.
    void badInput()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, variable);
        QFETCH(QString, value);
        QFETCH(QString, message);
        StateDir dir;
        relctl::requestSecret("kept");
        StateDir::setAge(fileOf(dir, "kept"), 30 * 24h);
        StateDir::setAge(relctl::state::pruneStamp(dir.requests()), 2h);
        Env env = dir.env();
        if (!variable.isEmpty())
            env[variable.toStdString()] = value.toStdString();
        Args words{"--json"};
        for (const QString& a : args)
            words.push_back(a.toStdString());
        const RunResult r = relctlWithDsn("", words, env);
        QVERIFY2(r.exitCode == 2, failure(r));
        QVERIFY2(r.err.find(message.toStdString()) != std::string::npos, failure(r));
        QCOMPARE(std::count(r.err.begin(), r.err.end(), '\n'), 1L);
        QCOMPARE(r.json()["error"], json("usage"));
        QCOMPARE(dir.count(), 1LL);
        struct stat st;
        QCOMPARE(stat(relctl::state::pruneStamp(dir.requests()).c_str(), &st), 0);
        QVERIFY(st.st_mtim.tv_sec < std::time(nullptr) - 3600);
    }

    // A bad setting is refused before an acquire creates anything.
    void aBadSettingWritesNothing()
    {
        StateDir dir;
        TestDatabase db;
        QCOMPARE(runRelctl(db, {"env", "add", "prod"}).exitCode, 0);
        Env env = dir.env();
        env["RELCTL_STATE_RETENTION"] = "-1h";
        const RunResult r = runRelctl(db,
                                      {"lease", "acquire", "--env", "prod", "--job", "j", "--release", "v1",
                                       "--generation", "1", "--op-id", "j-acquire"},
                                      {}, env);
        QVERIFY2(r.exitCode == 2, failure(r));
        QVERIFY2(r.err.find("RELCTL_STATE_RETENTION") != std::string::npos, failure(r));
        QVERIFY(!fs::exists(dir.requests()));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases"), 0LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.operations"), 0LL);
    }
};

QTEST_GUILESS_MAIN(TestState)
#include "test_state.moc"
