// The client's side of relctl's security, as an attacker review found it
// wanting: what relctl sends to the server must hand no secret to another job
// or to whoever reads the server's log. relctl runs as a separate process
// against the test cluster; the HMAC is also checked in-process against
// known answers.

#define RELCTL_TEST_NO_SHORT_NAME
#include "relctl/protocol.h"
#include "relctlprocess.h"
#include "testdatabase.h"

#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const char* failure(const RunResult& r)
{
    static std::string text;
    text = "exit " + std::to_string(r.exitCode) + "\nstdout: " + r.out + "\nstderr: " + r.err;
    return text.c_str();
}

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

Args acquireArgs(const std::string& env, const std::string& opId)
{
    return {"--json", "lease",        "acquire", "--env", env,   "--job",   opId, "--release",
            "r1",     "--generation", "1",       "--ttl", "10m", "--op-id", opId};
}

} // namespace

class TestClientSecurity final : public QObject
{
    Q_OBJECT

private slots:
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

};

QTEST_GUILESS_MAIN(TestClientSecurity)
#include "test_clientsecurity.moc"
