// The embedded default database: with no DSN and no PG* variable, relctl
// creates, starts and migrates a private cluster in the user's data directory
// (a unix socket only), serialises concurrent first uses, restarts it after
// `db stop`, and says what to install when the server binaries are missing.
// Every relctl here is a separate process with an empty HOME of its own.

#define RELCTL_TEST_NO_SHORT_NAME
#include "relctl/embedded.h"
#include "relctl/error.h"
#include "relctlprocess.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QProcessEnvironment>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>
#include <chrono>
#include <functional>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

using nlohmann::json;

namespace {

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

// A fresh user as relctl sees it: an empty HOME, no XDG_DATA_HOME, no DSN and
// no PG* variable (relctlprocess's helpers always set RELCTL_DSN, so processes
// are started here). HOME is under /tmp and searchable by others, since as
// root the server runs as postgres, which must reach it. The destructor stops
// the cluster, so no server outlives its test.
class Home final
{
public:
    Home() : m_dir(QStringLiteral("/tmp/relctl-home-XXXXXX"))
    {
        if (!m_dir.isValid())
            qFatal("cannot create a temporary HOME");
        QFile::setPermissions(m_dir.path(), QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                                QFileDevice::ExeOwner | QFileDevice::ReadGroup |
                                                QFileDevice::ExeGroup | QFileDevice::ReadOther |
                                                QFileDevice::ExeOther);
        m_env = QProcessEnvironment::systemEnvironment();
        for (const char* name : {"RELCTL_DSN", "RELCTL_LEASE", "RELCTL_PG_BINDIR", "XDG_DATA_HOME", "PGHOST",
                                 "PGHOSTADDR", "PGPORT", "PGUSER", "PGDATABASE", "PGSERVICE"})
            m_env.remove(QLatin1String(name));
        m_env.insert(QStringLiteral("HOME"), m_dir.path());
        // As root the default is the machine's /var/lib/relctl: each test
        // gets a cluster of its own under its HOME through the override.
        if (geteuid() == 0)
            m_env.insert(QStringLiteral("XDG_DATA_HOME"), m_dir.path() + QStringLiteral("/.local/share"));
    }
    ~Home() { run({"db", "stop"}); }
    Home(const Home&) = delete;
    Home& operator=(const Home&) = delete;

    std::string path() const { return m_dir.path().toStdString(); }
    std::string defaultDirectory() const { return path() + "/.local/share/relctl"; }
    void set(const char* name, const std::string& value) { m_env.insert(QLatin1String(name), qstr(value)); }
    void unset(const char* name) { m_env.remove(QLatin1String(name)); }

    std::unique_ptr<QProcess> start(const Args& args) const
    {
        auto p = std::make_unique<QProcess>();
        QStringList list;
        for (const std::string& a : args)
            list << qstr(a);
        p->setProcessEnvironment(m_env);
        p->start(qstr(relctlBinary()), list);
        if (!p->waitForStarted())
            qFatal("cannot start relctl");
        p->closeWriteChannel();
        return p;
    }

    RunResult run(const Args& args) const
    {
        QElapsedTimer timer;
        timer.start();
        auto p = start(args);
        RunResult r = finish(*p, 120000);
        r.elapsedMs = timer.elapsed();
        return r;
    }

    json status() const
    {
        RunResult r = run({"--json", "db", "status"});
        if (r.exitCode != 0)
            qFatal("db status failed: %s", r.err.c_str());
        return r.json();
    }

    // One SQL statement through the cluster's socket, with psql as the tests'
    // own window on it; the output without the trailing newline.
    std::string psql(const std::string& sql) const
    {
        const QString program = QStandardPaths::findExecutable(QStringLiteral("psql"));
        if (program.isEmpty())
            qFatal("psql is not installed (Debian package postgresql-client)");
        QProcess p;
        p.setProcessEnvironment(m_env);
        p.start(program, {QStringLiteral("-X"), QStringLiteral("-At"), QStringLiteral("-d"),
                          qstr(status()["conninfo"].get<std::string>()), QStringLiteral("-c"), qstr(sql)});
        p.waitForStarted();
        RunResult r = finish(p, 60000);
        if (r.exitCode != 0)
            qFatal("psql failed: %s", r.err.c_str());
        return r.line();
    }

private:
    QTemporaryDir m_dir;
    QProcessEnvironment m_env;
};

std::vector<std::string> environmentNames(const Home& home)
{
    RunResult r = home.run({"--json", "env", "list"});
    if (r.exitCode != 0)
        qFatal("env list failed: %s", r.err.c_str());
    const json reply = r.json(); // kept alive: a range-for does not extend a temporary's member
    std::vector<std::string> names;
    for (const json& e : reply["environments"])
        names.push_back(e["name"].get<std::string>());
    std::sort(names.begin(), names.end());
    return names;
}

long long fileSize(const std::string& path)
{
    return QFileInfo(qstr(path)).size();
}

} // namespace

class TestEmbedded final : public QObject
{
    Q_OBJECT

private slots:
    void firstUseCreatesStartsAndMigrates()
    {
        Home home;
        RunResult first = home.run({"env", "add", "prod"});
        QVERIFY2(first.exitCode == 0, first.err.c_str());
        qInfo("first use (initdb, start, migrate, env add): %lld ms", first.elapsedMs);
        QCOMPARE(environmentNames(home), std::vector<std::string>{"prod"});

        json s = home.status();
        QCOMPARE(s["running"].get<bool>(), true);
        QCOMPARE(s["initialized"].get<bool>(), true);
        QCOMPARE(s["path"].get<std::string>(), home.defaultDirectory());
        QCOMPARE(s["socket_directory"].get<std::string>(), home.defaultDirectory());
        QVERIFY(QFileInfo::exists(qstr(home.defaultDirectory() + "/data/PG_VERSION")));
        if (geteuid() == 0) {
            // The server runs as postgres; relctl connects as root through peer authentication.
            QCOMPARE(QFileInfo(qstr(home.defaultDirectory())).owner(), QStringLiteral("postgres"));
            QCOMPARE(s["server_user"].get<std::string>(), std::string("postgres"));
        }

        // No TCP listener: the server listens on its socket only.
        QCOMPARE(home.psql("SHOW listen_addresses"), std::string());
        QCOMPARE(home.psql("SELECT inet_server_addr() IS NULL"), std::string("t"));
        // PL/pgSQL is loaded by the postmaster, not by each session on its
        // first call (the login may not SHOW the setting: read what the
        // server started with).
        QFile conf(qstr(home.defaultDirectory() + "/data/relctl.conf"));
        QVERIFY(conf.open(QIODevice::ReadOnly));
        QVERIFY(conf.readAll().contains("\nshared_preload_libraries = 'plpgsql'\n"));
        QCOMPARE(home.psql("SELECT count(*) > 0 FROM relctl.schema_migrations"), std::string("t"));
        // The OS user works as a login with the manager's group role, not as
        // the cluster's superuser (relctl_admin, used only to migrate).
        QCOMPARE(home.psql("SELECT rolsuper FROM pg_roles WHERE rolname = current_user"), std::string("f"));
        QCOMPARE(home.psql("SELECT pg_has_role(current_user, 'relctl_manager', 'MEMBER')"), std::string("t"));
        QCOMPARE(home.psql("SELECT has_table_privilege('relctl.leases', 'SELECT')"), std::string("f"));

        // Already running: returns at once, without pg_ctl (which would write to the log).
        const long long logSize = fileSize(s["log"].get<std::string>());
        RunResult again = home.run({"db", "start"});
        QVERIFY2(again.exitCode == 0, again.err.c_str());
        qInfo("db start when already running: %lld ms", again.elapsedMs);
        QCOMPARE(fileSize(s["log"].get<std::string>()), logSize);
        QVERIFY(contains(again.out, "dbname=relctl"));
    }

    void xdgDataHomeIsHonoured()
    {
        Home home;
        const std::string xdg = home.path() + "/xdg";
        home.set("XDG_DATA_HOME", xdg);
        RunResult r = home.run({"env", "add", "staging"});
        QVERIFY2(r.exitCode == 0, r.err.c_str());
        QCOMPARE(home.status()["path"].get<std::string>(), xdg + "/relctl");
        QCOMPARE(home.run({"db", "path"}).line(), xdg + "/relctl");
        QVERIFY(QFileInfo::exists(qstr(xdg + "/relctl/data/PG_VERSION")));
        QVERIFY(!QFileInfo::exists(qstr(home.defaultDirectory())));
    }

    void aLongPathPutsTheSocketInAShortDirectory()
    {
        // A unix socket path must stay under 107 bytes.
        Home home;
        const std::string xdg = home.path() + "/" + std::string(90, 'x');
        home.set("XDG_DATA_HOME", xdg);
        RunResult r = home.run({"env", "add", "test"});
        QVERIFY2(r.exitCode == 0, r.err.c_str());
        json s = home.status();
        const std::string socket = s["socket_directory"].get<std::string>();
        QVERIFY2(socket.rfind("/tmp/relctl-", 0) == 0, socket.c_str());
        QVERIFY(socket.size() < 64);
        QVERIFY(contains(s["conninfo"].get<std::string>(), "host=" + socket));
        QCOMPARE(QFileInfo(qstr(socket)).permissions() & (QFileDevice::ReadOther | QFileDevice::ExeOther |
                                                          QFileDevice::ReadGroup | QFileDevice::ExeGroup),
                 QFileDevice::Permissions());
        QCOMPARE(environmentNames(home), std::vector<std::string>{"test"});
        QCOMPARE(home.run({"db", "stop"}).exitCode, 0);
        QVERIFY(!QFileInfo::exists(qstr(socket))); // removed with the server
    }

    void concurrentFirstUsesAreSerialised()
    {
        Home home;
        const std::vector<std::string> names{"a", "b", "c", "d"};
        std::vector<std::unique_ptr<QProcess>> runs;
        runs.reserve(names.size());
        for (const std::string& name : names)
            runs.push_back(home.start({"env", "add", name}));
        for (auto& p : runs) {
            RunResult r = finish(*p, 120000);
            QVERIFY2(r.exitCode == 0, r.err.c_str());
        }
        QCOMPARE(environmentNames(home), names);
        // One initdb and one start: the others waited for the lock, then found it running.
        QFile log(qstr(home.status()["log"].get<std::string>()));
        QVERIFY(log.open(QIODevice::ReadOnly));
        const QByteArray text = log.readAll();
        QCOMPARE(text.count(": initdb =="), 1);
        QCOMPARE(text.count(": pg_ctl start =="), 1);
    }

    void stopThenAnyCommandRestartsIt()
    {
        Home home;
        QCOMPARE(home.run({"env", "add", "prod"}).exitCode, 0);
        RunResult stop = home.run({"--json", "db", "stop"});
        QVERIFY2(stop.exitCode == 0, stop.err.c_str());
        QCOMPARE(stop.json()["stopped"].get<bool>(), true);
        QCOMPARE(home.status()["running"].get<bool>(), false);
        QCOMPARE(home.run({"--json", "db", "stop"}).json()["stopped"].get<bool>(), false);

        QCOMPARE(environmentNames(home), std::vector<std::string>{"prod"});
        QCOMPARE(home.status()["running"].get<bool>(), true);

        RunResult path = home.run({"db", "path"});
        QCOMPARE(path.exitCode, 0);
        QCOMPARE(path.line(), home.defaultDirectory());
        RunResult plain = home.run({"db", "status"});
        QCOMPARE(plain.exitCode, 0);
        QVERIFY(contains(plain.out, "running: yes"));
    }

    // The server's log is bounded: past 10 MiB its last 10 MiB (from a line's
    // start) become server.log.1 on the next use, server.log starts again,
    // and the running server goes on writing at its start (it appends).
    void theServerLogIsBounded()
    {
        Home home;
        QCOMPARE(home.run({"env", "add", "prod"}).exitCode, 0);
        const std::string log = home.status()["log"].get<std::string>();
        {
            QFile f(qstr(log));
            QVERIFY(f.open(QIODevice::Append));
            const QByteArray line = QByteArray(99, 'x') + '\n';
            for (int i = 0; i < 110'000; ++i)
                f.write(line);
            f.write("the last line before the rotation\n");
        }
        const long long limit = 10LL * 1024 * 1024;
        QVERIFY(fileSize(log) > limit);
        QCOMPARE(environmentNames(home), std::vector<std::string>{"prod"}); // any use of the database
        QVERIFY2(fileSize(log) < 4096, qPrintable(QString::number(fileSize(log))));
        QFile previous(qstr(log + ".1"));
        QVERIFY(previous.open(QIODevice::ReadOnly));
        const QByteArray kept = previous.readAll();
        QVERIFY(kept.size() <= limit && kept.size() > limit - 200);
        QVERIFY(kept.endsWith("the last line before the rotation\n"));
        QCOMPARE(kept.indexOf('\n'), 99); // whole lines only
        QVERIFY(!QFileInfo::exists(qstr(log + ".1.new")));

        QCOMPARE(home.run({"db", "stop"}).exitCode, 0);
        QFile current(qstr(log));
        QVERIFY(current.open(QIODevice::ReadOnly));
        const QByteArray text = current.readAll();
        QVERIFY2(text.contains("database system is shut down"), text.constData());
        QVERIFY(!text.contains('\0')); // written at the start, not past a hole
    }

    void dbUsageErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addRow("unknown subcommand") << QStringList{QStringLiteral("db"), QStringLiteral("restart")};
        QTest::addRow("no subcommand") << QStringList{QStringLiteral("db")};
        QTest::addRow("stray argument")
            << QStringList{QStringLiteral("db"), QStringLiteral("status"), QStringLiteral("now")};
    }

    void dbUsageErrors()
    {
        QFETCH(QStringList, args);
        Home home;
        Args words;
        for (const QString& a : args)
            words.push_back(a.toStdString());
        QCOMPARE(home.run(words).exitCode, 2);
        QVERIFY(!QFileInfo::exists(qstr(home.defaultDirectory())));
    }

    void missingBinariesNameThePackage()
    {
        Home home;
        QTemporaryDir emptyPath;
        home.set("PATH", emptyPath.path().toStdString());
        home.set("RELCTL_PG_BINDIR", "/nonexistent");
        RunResult r = home.run({"--json", "env", "list"});
        QCOMPARE(r.exitCode, 9);
        QVERIFY2(contains(r.err, "postgresql"), r.err.c_str());
        QCOMPARE(r.json()["error"].get<std::string>(), std::string("unavailable"));
        QVERIFY(!QFileInfo::exists(qstr(home.defaultDirectory()))); // nothing was created
    }

    // A controlled clock (the demo's, through libfaketime) is only for a
    // demo cluster: relctl's default, or any directory not named *-demo, is
    // refused before anything is made, so a fabricated time never reaches a
    // real database. The demo's cluster is beside the default one.
    void aControlledClockIsOnlyForADemoCluster()
    {
        QTemporaryDir data(QStringLiteral("/tmp/relctl-clock-XXXXXX"));
        const QByteArray saved = qgetenv("XDG_DATA_HOME");
        qputenv("XDG_DATA_HOME", data.path().toLocal8Bit());
        const relctl::EmbeddedCluster own = relctl::EmbeddedCluster::forCurrentUser();
        const relctl::EmbeddedCluster demo = relctl::EmbeddedCluster::demoForCurrentUser();
        QCOMPARE(demo.directory().string(), data.path().toStdString() + "/relctl-demo");
        relctl::EmbeddedCluster other(data.path().toStdString() + "/staging");
        for (relctl::EmbeddedCluster* cluster : {const_cast<relctl::EmbeddedCluster*>(&own), &other}) {
            const auto refused = [&](const std::function<void()>& step) {
                try {
                    step();
                } catch (const relctl::Error& e) {
                    return e.code() == relctl::ExitCode::Usage && contains(e.what(), "not a demo cluster");
                }
                return false;
            };
            QVERIFY(refused([&] { cluster->startDemo({{"alice", "relctl_manager"}}); }));
            QVERIFY(refused([&] { cluster->setClock(std::chrono::system_clock::now()); }));
            QVERIFY(!QFileInfo::exists(QString::fromStdString(cluster->directory().string())));
        }
        if (saved.isNull())
            qunsetenv("XDG_DATA_HOME");
        else
            qputenv("XDG_DATA_HOME", saved);
    }

    // `relctl db status|stop|path --demo` reach release-console --demo's own
    // cluster, which the plain commands never touch; only the console starts
    // it (`db start --demo` is not a command).
    void theDemosClusterIsStoppedWithDbStopDemo()
    {
        Home home;
        const QByteArray saved = qgetenv("XDG_DATA_HOME");
        qputenv("XDG_DATA_HOME", QByteArray::fromStdString(home.path() + "/.local/share"));
        relctl::EmbeddedCluster demo = relctl::EmbeddedCluster::demoForCurrentUser();
        demo.startDemo({{"alice", "relctl_manager"}});
        // Stopped whatever fails below: no server outlives its test.
        const std::unique_ptr<relctl::EmbeddedCluster, void (*)(relctl::EmbeddedCluster*)> stopAfter(
            &demo, [](relctl::EmbeddedCluster* c) { c->stop(); });
        QVERIFY(demo.running());
        QCOMPARE(home.run({"db", "path", "--demo"}).out, demo.directory().string() + "\n");
        RunResult status = home.run({"--json", "db", "status", "--demo"});
        QCOMPARE(status.exitCode, 0);
        QVERIFY(status.json()["running"].get<bool>());
        // The plain commands are about the default cluster, which never started.
        QCOMPARE(home.run({"--json", "db", "stop"}).json()["stopped"].get<bool>(), false);
        QVERIFY(demo.running());
        QCOMPARE(home.run({"db", "start", "--demo"}).exitCode, 2);
        RunResult stop = home.run({"--json", "db", "stop", "--demo"});
        QCOMPARE(stop.exitCode, 0);
        QVERIFY(stop.json()["stopped"].get<bool>());
        QVERIFY(!demo.running());
        QVERIFY(!home.run({"--json", "db", "status", "--demo"}).json()["running"].get<bool>());
        QVERIFY(!QFileInfo::exists(qstr(home.defaultDirectory())));
        if (saved.isNull())
            qunsetenv("XDG_DATA_HOME");
        else
            qputenv("XDG_DATA_HOME", saved);
    }

    void aNamedServerDisablesTheDefault()
    {
        // PGHOST names a server: relctl goes there (and fails) instead of starting its own.
        Home home;
        home.set("PGHOST", home.path() + "/nowhere");
        RunResult r = home.run({"env", "list"});
        QCOMPARE(r.exitCode, 9);
        QVERIFY(!QFileInfo::exists(qstr(home.defaultDirectory())));
    }

    void asRootTheDefaultIsOneThePostgresUserReaches()
    {
        if (geteuid() != 0)
            QSKIP("only root hands the server to the postgres user");
        // Root's usual HOME, which postgres cannot enter, and no override:
        // the default is /var/lib/relctl, not a directory under HOME.
        Home home;
        home.unset("XDG_DATA_HOME");
        QVERIFY(chmod(home.path().c_str(), 0700) == 0); // like /root
        RunResult path = home.run({"db", "path"});
        QVERIFY2(path.exitCode == 0, path.err.c_str());
        QCOMPARE(path.line(), std::string("/var/lib/relctl"));
        RunResult asJson = home.run({"--json", "db", "path"});
        QCOMPARE(asJson.json()["path"].get<std::string>(), std::string("/var/lib/relctl"));
        QVERIFY(!QFileInfo::exists(qstr(home.path() + "/.local")));
        // Its destructor stops the cluster it names: not the machine's.
        home.set("XDG_DATA_HOME", home.path() + "/.local/share");
    }

    void asRootAnUnreachableHomeIsExplained()
    {
        if (geteuid() != 0)
            QSKIP("only root hands the server to the postgres user");
        // XDG_DATA_HOME still overrides root's default; under a 0700 HOME
        // the server could not reach it, and relctl says so.
        Home home;
        QVERIFY(chmod(home.path().c_str(), 0700) == 0); // like /root
        RunResult r = home.run({"env", "list"});
        QCOMPARE(r.exitCode, 9);
        QVERIFY2(contains(r.err, "XDG_DATA_HOME") && contains(r.err, home.path() + " (mode 0700)") &&
                     contains(r.err, "/var/lib/relctl"),
                 r.err.c_str());
        struct stat st
        {
        };
        QCOMPARE(stat(home.path().c_str(), &st), 0);
        QCOMPARE(st.st_mode & 07777, mode_t(0700)); // not opened up behind the user's back
    }
};

QTEST_GUILESS_MAIN(TestEmbedded)
#include "test_embedded.moc"
