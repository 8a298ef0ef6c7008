// relctl behind a connection pooler: PgBouncer in session mode, as
// docs/operations.md advises for fleets of waiting jobs, in front of the test
// cluster. PgBouncer refuses the `options` startup parameter, so relctl puts
// its session bounds on with SET as its first statement; these tests prove
// that jobs work through the pooler (a run, a waiter handed the lease at a
// release), that the bounds are in force on the server session they used, and
// that a job the pooler cannot serve gives up within its call bound.

#include "relctlprocess.h"
#include "testdatabase.h"

#include <QtTest>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <pqxx/pqxx>
#include <pwd.h>
#include <regex>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

// The login a test DSN names (the last user= wins, as in libpq).
std::string loginOf(const std::string& dsn)
{
    static const std::regex user(R"(user=(\S+))");
    std::string login;
    for (std::sregex_iterator it(dsn.begin(), dsn.end(), user), end; it != end; ++it)
        login = (*it)[1].str();
    return login;
}

// One PgBouncer of the test's own, on a unix socket in a directory of its
// own, pooling the test database under two names: `bounded` with one server
// connection and no reset between clients (so the next client of the pool
// finds the server session exactly as the last one left it), and `pooled`
// with room for several jobs at once. It runs as postgres when the test runs
// as root (PgBouncer refuses root) and is stopped with the test.
class PgBouncer final
{
public:
    // Pools the test database for the login its dsn() names.
    explicit PgBouncer(const TestDatabase& db) : m_login(loginOf(db.dsn()))
    {
        const char* binary = "/usr/sbin/pgbouncer";
        if (!fs::exists(binary))
            throw std::runtime_error("pgbouncer is not installed (the test command installs it)");
        std::smatch host;
        const std::string cluster = TestDatabase::clusterDsn();
        if (!std::regex_search(cluster, host, std::regex(R"(host=(\S+))")))
            throw std::runtime_error("the test cluster's DSN names no host: " + cluster);
        char tmpl[] = "/tmp/relctl-pgbouncer.XXXXXX";
        if (mkdtemp(tmpl) == nullptr)
            throw std::runtime_error("cannot create a directory for pgbouncer");
        m_dir = tmpl;
        std::ofstream(m_dir / "pgbouncer.ini")
            << "[databases]\n"
            << "bounded = host=" << host[1] << " dbname=" << db.name() << " pool_size=1\n"
            << "pooled = host=" << host[1] << " dbname=" << db.name() << "\n"
            << "[pgbouncer]\n"
            << "listen_addr =\n"
            << "unix_socket_dir = " << m_dir.string() << "\n"
            << "listen_port = 6432\n"
            << "auth_type = trust\n"
            << "auth_file = " << (m_dir / "users.txt").string() << "\n"
            << "pool_mode = session\n"
            << "server_reset_query =\n"
            << "default_pool_size = 10\n"
            << "max_client_conn = 100\n"
            << "logfile = " << (m_dir / "pgbouncer.log").string() << "\n"
            << "pidfile = " << (m_dir / "pgbouncer.pid").string() << "\n";
        std::ofstream(m_dir / "users.txt") << '"' << m_login << "\" \"\"\n";
        std::string command = std::string(binary) + " -d " + (m_dir / "pgbouncer.ini").string();
        if (geteuid() == 0) {
            const passwd* pg = getpwnam("postgres");
            if (pg == nullptr)
                throw std::runtime_error("running as root and there is no postgres user to run pgbouncer as");
            for (const auto& entry : fs::recursive_directory_iterator(m_dir))
                (void)chown(entry.path().c_str(), pg->pw_uid, pg->pw_gid);
            (void)chown(m_dir.c_str(), pg->pw_uid, pg->pw_gid);
            command = "runuser -u postgres -- " + command;
        }
        if (std::system(command.c_str()) != 0)
            throw std::runtime_error("pgbouncer did not start: " + log());
        for (int i = 0; i < 100 && !fs::exists(m_dir / ".s.PGSQL.6432"); ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (!fs::exists(m_dir / ".s.PGSQL.6432"))
            throw std::runtime_error("pgbouncer is not listening: " + log());
    }

    ~PgBouncer()
    {
        std::ifstream pidFile(m_dir / "pgbouncer.pid");
        pid_t pid = 0;
        if (pidFile >> pid && pid > 0) {
            ::kill(pid, SIGTERM);
            for (int i = 0; i < 100 && ::kill(pid, 0) == 0; ++i)
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        std::error_code ignored;
        fs::remove_all(m_dir, ignored);
    }

    PgBouncer(const PgBouncer&) = delete;
    PgBouncer& operator=(const PgBouncer&) = delete;

    // `pool`: "bounded" or "pooled".
    std::string dsn(const std::string& pool) const
    {
        return "host=" + m_dir.string() + " port=6432 dbname=" + pool + " user=" + m_login;
    }

    std::string log() const
    {
        std::ifstream in(m_dir / "pgbouncer.log");
        return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    }

private:
    std::string m_login;
    fs::path m_dir;
};

std::string show(const std::string& dsn, const std::string& setting)
{
    pqxx::connection conn(dsn);
    pqxx::nontransaction tx(conn);
    return tx.exec1("SHOW " + setting)[0].c_str();
}

} // namespace

class TestPooler final : public QObject
{
    Q_OBJECT

private slots:
    // The server session a relctl command used through the pooler carries
    // relctl's bounds: the next client of the one-connection pool, which
    // sets nothing itself, finds them there. Before relctl's first
    // command, the same pool's session has the server's defaults.
    void theBoundsHoldThroughThePooler()
    {
        TestDatabase db;
        PgBouncer pooler(db);
        const std::string bounded = pooler.dsn("bounded");
        QCOMPARE(show(bounded, "statement_timeout"), std::string("0"));

        const RunResult added = relctlWithDsn(bounded, {"env", "add", "prod"});
        QVERIFY2(added.exitCode == 0, (added.err + pooler.log()).c_str());
        QCOMPARE(show(bounded, "statement_timeout"), std::string("30s"));
        QCOMPARE(show(bounded, "lock_timeout"), std::string("10s"));
        QCOMPARE(show(bounded, "idle_in_transaction_session_timeout"), std::string("15s"));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.environments WHERE name = 'prod'"), 1LL);
    }

    // A job the pooler cannot give a server connection (the pool's one
    // connection is taken) waits no longer than its call bound: its first
    // statement is bounded like any call. Exit 9, said in one line, nothing
    // written.
    void aJobThePoolerCannotServeExitsWithinItsBound()
    {
        TestDatabase db;
        PgBouncer pooler(db);
        const std::string bounded = pooler.dsn("bounded");
        QCOMPARE(relctlWithDsn(bounded, {"env", "add", "prod"}).exitCode, 0);
        const auto before = db.footprint();
        pqxx::connection taken(bounded);
        pqxx::nontransaction(taken).exec("SELECT 1");
        const RunResult r = relctlWithDsn(
            bounded,
            {"lease", "acquire", "--env", "prod", "--job", "job-1", "--release", "r1", "--generation", "1"},
            {{"RELCTL_CALL_TIMEOUT", "2s"}});
        QCOMPARE(r.exitCode, 9);
        QVERIFY2(r.elapsedMs < 10000, r.err.c_str());
        QCOMPARE(r.err, std::string("relctl: database unavailable: no reply from the database within 2s\n"));
        QVERIFY(db.footprint() == before);
    }

    // Jobs through the pooler: a whole `relctl run`, and a waiter that the
    // holder's release hands the lease to, each on a pooled server session.
    void jobsRunAndWaitThroughThePooler()
    {
        TestDatabase db;
        PgBouncer pooler(db);
        const std::string dsn = pooler.dsn("pooled");
        QCOMPARE(relctlWithDsn(dsn, {"env", "add", "prod"}).exitCode, 0);

        const RunResult run = relctlWithDsn(dsn, {"run", "--env", "prod", "--job", "job-1", "--release", "r1",
                                                  "--generation", "1", "--", "true"});
        QVERIFY2(run.exitCode == 0, (run.err + pooler.log()).c_str());
        QCOMPARE(db.scalar("SELECT m.release FROM relctl.environments e "
                           "JOIN relctl.manifests m ON m.id = e.current_manifest_id WHERE e.name = 'prod'"),
                 std::string("r1"));

        const RunResult held = relctlWithDsn(dsn, {"--json", "lease", "acquire", "--env", "prod", "--job",
                                                   "job-2", "--release", "r2", "--generation", "2"});
        QVERIFY2(held.exitCode == 0, held.err.c_str());
        auto waiter =
            startRelctlWithDsn(dsn, {"--json", "lease", "acquire", "--env", "prod", "--job", "job-3",
                                     "--release", "r3", "--generation", "3", "--wait", "60s"});
        for (int i = 0;
             i < 200 && db.count("SELECT count(*) FROM relctl.candidates WHERE job = 'job-3'") == 0; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.candidates WHERE job = 'job-3'"), 1LL);
        QCOMPARE(relctlWithDsn(dsn, {"lease", "release", "--lease", held.json()["handle"].get<std::string>()})
                     .exitCode,
                 0);
        const RunResult waited = finish(*waiter, 60000);
        QVERIFY2(waited.exitCode == 0, (waited.err + pooler.log()).c_str());
        QCOMPARE(waited.json()["job"].get<std::string>(), std::string("job-3"));
        QCOMPARE(db.scalar("SELECT job FROM relctl.leases WHERE ended_at IS NULL"), std::string("job-3"));
    }
};

QTEST_GUILESS_MAIN(TestPooler)
#include "test_pooler.moc"
