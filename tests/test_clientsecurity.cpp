// The client's side of relctl's security, as an attacker review found it
// wanting: what relctl sends to the server, what it trusts on the machine and
// what it prints must hand no secret to another job or user, and a connection
// that drops under a call is "unavailable, try again" (exit 9) on every path.
// relctl runs as a separate process against the test cluster (through a
// fault-injecting proxy where a connection is cut); the HMAC and the
// password masking are also checked in-process against known answers.

#define RELCTL_TEST_NO_SHORT_NAME
#include "faultproxy.h"
#include "relctl/database.h"
#include "relctl/protocol.h"
#include "relctl/state.h"
#include "relctlprocess.h"
#include "testdatabase.h"

#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

std::string readAll(const fs::path& path, std::uintmax_t from = 0)
{
    std::ifstream in(path, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(from));
    return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeFile(const fs::path& path, const std::string& text, mode_t mode)
{
    std::ofstream(path, std::ios::binary) << text;
    if (chmod(path.c_str(), mode) != 0)
        qFatal("cannot chmod %s", path.c_str());
}

mode_t modeOf(const fs::path& path)
{
    struct stat st;
    if (lstat(path.c_str(), &st) != 0)
        qFatal("cannot stat %s", path.c_str());
    return st.st_mode & 07777;
}

// An account that is not the test's (nobody): the refusals of someone
// else's files.
constexpr uid_t kOtherUser = 65534;

void giveAway(const fs::path& path)
{
    if (chown(path.c_str(), kOtherUser, kOtherUser) != 0)
        qFatal("cannot chown %s", path.c_str());
}

Args acquireArgs(const std::string& env, const std::string& opId)
{
    return {"--json", "lease",        "acquire", "--env", env,   "--job",   opId, "--release",
            "r1",     "--generation", "1",       "--ttl", "10m", "--op-id", opId};
}

// A state directory as an attacker left it for one op id's acquire; returns
// the path relctl must refuse. Runs as the test's user: "another user" is
// made with chown, so those cases need root.
using Planting = std::function<fs::path(const fs::path& state, const std::string& secretFile)>;

fs::path plantSecret(const fs::path& requests, const std::string& secretFile)
{
    writeFile(requests / secretFile, "planted-secret-that-the-attacker-knows\n", 0600);
    return requests;
}

fs::path privateRequests(const fs::path& state)
{
    fs::create_directories(state / "requests");
    chmod(state.c_str(), 0700);
    chmod((state / "requests").c_str(), 0700);
    return state / "requests";
}

} // namespace

class TestClientSecurity final : public QObject
{
    Q_OBJECT

private:
    std::unique_ptr<TestDatabase> m_db;
    std::string m_handle; // a live lease on "cut", for the publish that is cut
    QTemporaryDir m_dir;

    // The rows an acquire of opId on env would write: its op, its lease, its
    // events (one statement: these tests stay quick).
    long long traces(const std::string& env, const std::string& opId) const
    {
        return m_db->count(
            "SELECT (SELECT count(*) FROM relctl.operations WHERE op_id = " + sqlLiteral(opId) +
            ") + (SELECT count(*) FROM relctl.leases WHERE env = " + sqlLiteral(env) +
            ") + (SELECT count(*) FROM relctl.events WHERE env = " + sqlLiteral(env) + ")");
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_db = std::make_unique<TestDatabase>();
        for (const char* env : {"prod", "cut"})
            QCOMPARE(runRelctl(*m_db, {"env", "add", env}).exitCode, 0);
        const Env state{{"RELCTL_STATE_DIR", m_dir.filePath(QStringLiteral("setup")).toStdString()}};
        const RunResult prod = runRelctl(*m_db, acquireArgs("prod", "setup-prod"), {}, state);
        QVERIFY2(prod.exitCode == 0, failure(prod));
        const RunResult published = runRelctl(*m_db, {"publish", "--op-id", "setup-publish"}, {},
                                              {{"RELCTL_LEASE", prod.json()["handle"].get<std::string>()}});
        QVERIFY2(published.exitCode == 0, failure(published));
        const RunResult cut = runRelctl(*m_db, acquireArgs("cut", "setup-cut"), {}, state);
        QVERIFY2(cut.exitCode == 0, failure(cut));
        m_handle = cut.json()["handle"].get<std::string>();
    }

    void cleanupTestCase() { m_db.reset(); }

    // RFC 4231's test cases 1, 2 (the key shorter than the hash) and 6 (a key
    // longer than SHA-256's block, hashed first).
    void hmacSha256_data()
    {
        QTest::addColumn<QByteArray>("key");
        QTest::addColumn<QByteArray>("data");
        QTest::addColumn<QString>("expected");
        QTest::addRow("RFC 4231 case 1")
            << QByteArray(20, '\x0b') << QByteArray("Hi There")
            << QStringLiteral("b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
        QTest::addRow("RFC 4231 case 2")
            << QByteArray("Jefe") << QByteArray("what do ya want for nothing?")
            << QStringLiteral("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
        QTest::addRow("RFC 4231 case 6")
            << QByteArray(131, '\xaa') << QByteArray("Test Using Larger Than Block-Size Key - Hash Key First")
            << QStringLiteral("60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    }

    void hmacSha256()
    {
        QFETCH(QByteArray, key);
        QFETCH(QByteArray, data);
        QFETCH(QString, expected);
        const std::string digest =
            relctl::hmacSha256Hex(std::string_view(key.constData(), static_cast<std::size_t>(key.size())),
                                  std::string_view(data.constData(), static_cast<std::size_t>(data.size())));
        QCOMPARE(qstr(digest), expected);
    }

    // RELCTL_OP_KEY stays in the job: with every statement and its parameters
    // in the server's log, the log shows the request secret (a keyed digest
    // of the op id) and never the key. The digest still proves a re-run on
    // another machine with the same key, and not one with another key.
    void theOpKeyStaysOffTheServer()
    {
        const char* pgDir = std::getenv("RELCTL_PG_DIR");
        if (pgDir == nullptr || !fs::exists(fs::path(pgDir) / "log"))
            QSKIP("RELCTL_PG_DIR/log is not at hand: the server's log cannot be read");
        const fs::path log = fs::path(pgDir) / "log";
        TestDatabase db;
        db.exec("ALTER DATABASE " + db.name() + " SET log_statement = 'all'");
        QCOMPARE(runRelctl(db, {"env", "add", "prod"}).exitCode, 0);
        const std::string key = "op-key-" + relctl::newOperationId();
        const std::string opId = "gh-31-acquire";
        const std::uintmax_t logged = fs::file_size(log);

        QTemporaryDir first, second;
        const RunResult acquired =
            runRelctl(db, acquireArgs("prod", opId), {},
                      {{"RELCTL_STATE_DIR", first.path().toStdString()}, {"RELCTL_OP_KEY", key}});
        QVERIFY2(acquired.exitCode == 0, failure(acquired));
        const RunResult rerun =
            runRelctl(db, acquireArgs("prod", opId), {},
                      {{"RELCTL_STATE_DIR", second.path().toStdString()}, {"RELCTL_OP_KEY", key}});
        QVERIFY2(rerun.exitCode == 0, failure(rerun));
        QCOMPARE(rerun.json()["replayed"], json(true));
        QCOMPARE(rerun.json()["handle"], acquired.json()["handle"]);
        const RunResult otherKey =
            runRelctl(db, acquireArgs("prod", opId), {},
                      {{"RELCTL_STATE_DIR", second.path().toStdString()}, {"RELCTL_OP_KEY", key + "-other"}});
        QVERIFY2(otherKey.exitCode == 7, failure(otherKey));

        const std::string written = readAll(log, logged);
        QVERIFY2(!contains(written, key), "the server's log shows RELCTL_OP_KEY");
        // Not vacuous: the log does show the parameters, the secret among them.
        QVERIFY2(contains(written, relctl::hmacSha256Hex(key, opId)), "the log shows no request secret");
        QCOMPARE(relctl::hmacSha256Hex(key, opId).size(), std::size_t{64});
    }

    // A state directory anyone else could have written to is not trusted: the
    // acquire is refused as invalid input (exit 2, one line naming the path
    // and why), before any request is sent, and a secret planted there is
    // neither used nor touched.
    void untrustedStateIsRefused_data()
    {
        QTest::addColumn<QString>("planting");
        QTest::addColumn<QString>("why");
        QTest::addColumn<bool>("needsRoot");
        QTest::addRow("requests/ writable by all")
            << QStringLiteral("requests 0777")
            << QStringLiteral("group or others may write to it (mode 0777)") << false;
        QTest::addRow("requests/ writable by the group")
            << QStringLiteral("requests 0770") << QStringLiteral("group or others may write to it") << false;
        QTest::addRow("the state directory writable by all")
            << QStringLiteral("state 0777") << QStringLiteral("group or others may write to it") << false;
        QTest::addRow("requests/ a symbolic link")
            << QStringLiteral("requests link") << QStringLiteral("it is a symbolic link") << false;
        QTest::addRow("the secret a symbolic link")
            << QStringLiteral("secret link") << QStringLiteral("it is a symbolic link") << false;
        QTest::addRow("the secret readable by others")
            << QStringLiteral("secret 0644") << QStringLiteral("group or others may read or write it")
            << false;
        QTest::addRow("requests/ of another user")
            << QStringLiteral("requests other") << QStringLiteral("it belongs to uid 65534") << true;
        QTest::addRow("the secret of another user")
            << QStringLiteral("secret other") << QStringLiteral("it belongs to uid 65534") << true;
    }

    void untrustedStateIsRefused()
    {
        QFETCH(QString, planting);
        QFETCH(QString, why);
        QFETCH(bool, needsRoot);
        if (needsRoot && geteuid() != 0)
            QSKIP("another user's files are made with chown, which needs root");
        static int n = 0;
        const std::string opId = "planted-" + std::to_string(++n);
        const std::string secretFile = relctl::state::requestFileName(opId);
        const fs::path state = m_dir.filePath(QStringLiteral("untrusted-%1").arg(n)).toStdString();
        const fs::path elsewhere = m_dir.filePath(QStringLiteral("elsewhere-%1").arg(n)).toStdString();
        fs::create_directories(elsewhere);
        const std::map<QString, Planting> plantings{
            {QStringLiteral("requests 0777"),
             [&](const fs::path& s, const std::string& f) {
                 const fs::path r = privateRequests(s);
                 chmod(r.c_str(), 0777);
                 return plantSecret(r, f);
             }},
            {QStringLiteral("requests 0770"),
             [&](const fs::path& s, const std::string& f) {
                 const fs::path r = privateRequests(s);
                 chmod(r.c_str(), 0770);
                 return plantSecret(r, f);
             }},
            {QStringLiteral("state 0777"),
             [&](const fs::path& s, const std::string& f) {
                 plantSecret(privateRequests(s), f);
                 chmod(s.c_str(), 0777);
                 return s;
             }},
            {QStringLiteral("requests link"),
             [&](const fs::path& s, const std::string& f) {
                 fs::create_directories(s);
                 chmod(s.c_str(), 0700);
                 chmod(elsewhere.c_str(), 0700);
                 plantSecret(elsewhere, f);
                 fs::create_directory_symlink(elsewhere, s / "requests");
                 return s / "requests";
             }},
            {QStringLiteral("secret link"),
             [&](const fs::path& s, const std::string& f) {
                 plantSecret(elsewhere, "target");
                 fs::create_symlink(elsewhere / "target", privateRequests(s) / f);
                 return s / "requests" / f;
             }},
            {QStringLiteral("secret 0644"),
             [&](const fs::path& s, const std::string& f) {
                 plantSecret(privateRequests(s), f);
                 chmod((s / "requests" / f).c_str(), 0644);
                 return s / "requests" / f;
             }},
            {QStringLiteral("requests other"),
             [&](const fs::path& s, const std::string& f) {
                 fs::path r = plantSecret(privateRequests(s), f);
                 giveAway(r);
                 return r;
             }},
            {QStringLiteral("secret other"),
             [&](const fs::path& s, const std::string& f) {
                 plantSecret(privateRequests(s), f);
                 giveAway(s / "requests" / f);
                 return s / "requests" / f;
             }},
        };
        const fs::path refused = plantings.at(planting)(state, secretFile);
        const std::string env = "untrusted-" + std::to_string(n); // each case its own: a defect shows in each
        QCOMPARE(runRelctl(*m_db, {"env", "add", env}).exitCode, 0);
        const fs::path planted = fs::is_regular_file(state / "requests" / secretFile)
                                     ? state / "requests" / secretFile
                                     : elsewhere / (fs::exists(elsewhere / "target") ? "target" : secretFile);
        const std::string before = readAll(planted);
        const long long written = traces(env, opId);

        const RunResult r =
            runRelctl(*m_db, acquireArgs(env, opId), {}, {{"RELCTL_STATE_DIR", state.string()}});
        QVERIFY2(r.exitCode == 2, failure(r));
        QCOMPARE(r.json()["error"], json("usage"));
        QVERIFY2(
            contains(r.err, "refusing " + refused.string() + " for request secrets: " + why.toStdString()),
            failure(r));
        QCOMPARE(std::count(r.err.begin(), r.err.end(), '\n'), 1L);
        QCOMPARE(traces(env, opId), written); // nothing was sent
        QCOMPARE(qstr(readAll(planted)), qstr(before));
    }

    // Directories relctl creates for its state are the user's alone (0700),
    // and so are its secrets, whatever the umask of the job.
    void createdStateIsPrivate_data()
    {
        QTest::addColumn<int>("mask");
        QTest::addRow("umask 000") << 0;
        QTest::addRow("umask 002") << 02;
        QTest::addRow("umask 022") << 022;
    }

    void createdStateIsPrivate()
    {
        QFETCH(int, mask);
        static int n = 0;
        const std::string opId = "private-" + std::to_string(++n);
        const fs::path top = m_dir.filePath(QStringLiteral("made-%1").arg(n)).toStdString();
        const fs::path state = top / "a" / "state";
        const std::string env = "made-" + std::to_string(n);
        QCOMPARE(runRelctl(*m_db, {"env", "add", env}).exitCode, 0);
        const mode_t previous = umask(static_cast<mode_t>(mask)); // relctl inherits it
        const RunResult r =
            runRelctl(*m_db, acquireArgs(env, opId), {}, {{"RELCTL_STATE_DIR", state.string()}});
        umask(previous);
        QVERIFY2(r.exitCode == 0, failure(r));
        for (const fs::path& dir : {top, top / "a", state, state / "requests"})
            QCOMPARE(modeOf(dir), mode_t{0700});
        QCOMPARE(modeOf(state / "requests" / relctl::state::requestFileName(opId)), mode_t{0600});
    }

    // Masking on its own: every form a password takes in a connection string,
    // as written and as decoded, and in a message that quotes one.
    void redactPasswords_data()
    {
        QTest::addColumn<QString>("message");
        QTest::addColumn<QString>("conninfo");
        QTest::addColumn<QString>("expected");
        QTest::addRow("percent-encoding in the password")
            << QStringLiteral("invalid percent-encoded token: \"Sw0rd%zzfish\"")
            << QStringLiteral("postgresql://u:Sw0rd%zzfish@h/db")
            << QStringLiteral("invalid percent-encoded token: \"***\"");
        QTest::addRow("a decoded password")
            << QStringLiteral("password Sw0rd fish rejected")
            << QStringLiteral("postgresql://u:Sw0rd%20fish@h/db") << QStringLiteral("password *** rejected");
        QTest::addRow("a query parameter")
            << QStringLiteral("invalid percent-encoded token: \"Sw0rd%zz\"")
            << QStringLiteral("postgresql://u@h/db?sslmode=disable&password=Sw0rd%zz")
            << QStringLiteral("invalid percent-encoded token: \"***\"");
        QTest::addRow("a URI quoted whole")
            << QStringLiteral("bad URI: \"postgresql://u:Sw0rdfish@[::1/db\"") << QString()
            << QStringLiteral("bad URI: \"postgresql://u:***@[::1/db\"");
        QTest::addRow("keyword form, quoted")
            << QStringLiteral("conninfo: host=h password='Sw0 rd\\'fish' dbname=d")
            << QStringLiteral("host=h password='Sw0 rd\\'fish' dbname=d")
            << QStringLiteral("conninfo: host=h password=*** dbname=d");
        QTest::addRow("keyword form, its value elsewhere")
            << QStringLiteral("failed for \"Sw0rdfish\"") << QStringLiteral("host=h password = Sw0rdfish")
            << QStringLiteral("failed for \"***\"");
        QTest::addRow("a short password only as a word")
            << QStringLiteral("database d: pw \"ab\" wrong") << QStringLiteral("host=h password=ab dbname=d")
            << QStringLiteral("database d: pw \"***\" wrong");
        QTest::addRow("nothing to mask") << QStringLiteral("server closed the connection unexpectedly")
                                         << QStringLiteral("host=h dbname=d")
                                         << QStringLiteral("server closed the connection unexpectedly");
    }

    void redactPasswords()
    {
        QFETCH(QString, message);
        QFETCH(QString, conninfo);
        QFETCH(QString, expected);
        QCOMPARE(qstr(relctl::redactPasswords(message.toStdString(), conninfo.toStdString())), expected);
    }

    // A connection string relctl cannot use is reported with its documented
    // exit code, on stderr and in --json, and the password in it is never
    // shown: libpq quotes what it could not parse.
    void aBadConnectionStringKeepsItsPassword_data()
    {
        QTest::addColumn<QString>("dsn");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("says");
        QTest::addRow("the password's percent-encoding")
            << QStringLiteral("postgresql://u:Sw0rdfish%zz@localhost/db") << 2
            << QStringLiteral("invalid connection string: invalid percent-encoded token");
        QTest::addRow("a password parameter's percent-encoding")
            << QStringLiteral("postgresql://u@localhost/db?password=Sw0rdfish%zz") << 2
            << QStringLiteral("invalid connection string: invalid percent-encoded token");
        QTest::addRow("another parameter's percent-encoding")
            << QStringLiteral("postgresql://u:Sw0rdfish@localhost/db?x=%zz") << 2
            << QStringLiteral("invalid connection string: invalid percent-encoded token");
        QTest::addRow("an unterminated IPv6 host")
            << QStringLiteral("postgresql://u:Sw0rdfish@[::1/db") << 2
            << QStringLiteral("invalid connection string: end of string reached");
        QTest::addRow("keyword form, no server")
            << QStringLiteral("host=/nonexistent-relctl-socket user=u password=Sw0rdfish dbname=d") << 9
            << QStringLiteral("database unavailable");
    }

    void aBadConnectionStringKeepsItsPassword()
    {
        QFETCH(QString, dsn);
        QFETCH(int, exitCode);
        QFETCH(QString, says);
        for (const bool option : {true, false}) {
            const RunResult r = option
                                    ? relctlWithDsn("", {"--json", "--dsn", dsn.toStdString(), "env", "list"})
                                    : relctlWithDsn(dsn.toStdString(), {"--json", "env", "list"});
            QVERIFY2(r.exitCode == exitCode, failure(r));
            QVERIFY2(contains(r.err, says.toStdString()), failure(r));
            QVERIFY2(!contains(r.err, "Sw0rdfish") && !contains(r.out, "Sw0rdfish"), failure(r));
            QVERIFY2(r.json()["message"].is_string(), failure(r));
        }
    }

    // The server goes away under a call: the proxy closes both ends when the
    // call's statement arrives, as a crashing server does, or answers it with
    // libpq's words for that and no SQLSTATE. A read reports the database
    // unavailable, exit 9, in either form. A write's outcome is unknown: with
    // the reconnect window off, exit 9 naming the op id that settles it; with
    // it, relctl connects again and settles it (tests/test_indoubt.cpp).
    void aLostServerIsUnavailable_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("pattern");
        QTest::addColumn<bool>("cut"); // else answered without a SQLSTATE
        QTest::addColumn<QString>("window");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("says");
        const QStringList manifest{QStringLiteral("manifest"), QStringLiteral("show"),
                                   QStringLiteral("--env"), QStringLiteral("prod")};
        const QStringList env{QStringLiteral("env"), QStringLiteral("show"), QStringLiteral("prod")};
        const auto publish = [](const char* opId) {
            return QStringList{QStringLiteral("publish"), QStringLiteral("--op-id"), QString::fromUtf8(opId)};
        };
        // A read transaction's BEGIN is its first statement.
        const QString begin = QStringLiteral("SET TRANSACTION READ ONLY");
        const QString published = QStringLiteral("relctl.publish(");
        const QString unavailable =
            QStringLiteral("database unavailable: server closed the connection unexpectedly");
        QTest::addRow("manifest show, cut")
            << manifest << begin << true << "0" << 9 << QStringLiteral("database unavailable");
        QTest::addRow("env show, cut")
            << env << begin << true << "0" << 9 << QStringLiteral("database unavailable");
        QTest::addRow("publish, cut") << publish("cut-1") << published << true << "0" << 9
                                      << QStringLiteral("`relctl op show cut-1` says what became of it");
        QTest::addRow("manifest show, no SQLSTATE") << manifest << begin << false << "0" << 9 << unavailable;
        QTest::addRow("env show, no SQLSTATE") << env << begin << false << "0" << 9 << unavailable;
        QTest::addRow("publish, no SQLSTATE")
            << publish("cut-2") << published << false << "0" << 9
            << QStringLiteral("`relctl op show cut-2` says what became of it");
        QTest::addRow("publish, no SQLSTATE, settled")
            << publish("cut-3") << published << false << "5s" << 0
            << QStringLiteral(
                   "the database had no record of op id cut-3: the first attempt never took effect, "
                   "and it was sent again");
    }

    void aLostServerIsUnavailable()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, pattern);
        QFETCH(bool, cut);
        QFETCH(QString, window);
        QFETCH(int, exitCode);
        QFETCH(QString, says);
        FaultProxy proxy(TestDatabase::clusterDsn());
        if (cut)
            proxy.loseRequest(pattern.toStdString());
        else
            proxy.answerServerGone(pattern.toStdString());
        Args words{"--json"};
        for (const QString& a : args)
            words.push_back(a.toStdString());
        const long long manifests = m_db->count("SELECT count(*) FROM relctl.manifests");
        const RunResult r =
            relctlWithDsn(proxy.dsn(m_db->name()), words,
                          {{"RELCTL_LEASE", m_handle}, {"RELCTL_RECONNECT_TIMEOUT", window.toStdString()}});
        QCOMPARE(proxy.struck(), 1);
        QVERIFY2(r.exitCode == exitCode, failure(r));
        QVERIFY2(contains(r.err, says.toStdString()), failure(r));
        // Nothing reached the server but the settling write, once.
        QCOMPARE(m_db->count("SELECT count(*) FROM relctl.manifests"), manifests + (exitCode == 0 ? 1 : 0));
        if (exitCode != 0)
            QCOMPARE(r.json()["error"], json("unavailable"));
        else
            QCOMPARE(r.json()["reply_lost"]["confirmed_from_record"], json(false));
    }
};

QTEST_GUILESS_MAIN(TestClientSecurity)
#include "test_clientsecurity.moc"
