// relctl's contract for invalid input, end to end (one OS process per command,
// a real PostgreSQL): exit 2, exactly one "relctl: " line on stderr, with
// --json one {"error":"usage","message":...} object on stdout carrying the same
// message, and nothing written to the database. An unreachable database is
// exit 9 ("unavailable"), promptly.
//
// All rejection rows share one database prepared in initTestCase: since every
// row must leave it unchanged, they cannot disturb each other (unless one
// breaks, and then that row fails first).

#include "relctlprocess.h"
#include "testdatabase.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>

namespace {

Args toArgs(const QStringList& list)
{
    Args out;
    for (const QString& w : list)
        out.push_back(w.toStdString());
    return out;
}

QStringList toList(const Args& args)
{
    QStringList out;
    for (const std::string& a : args)
        out << qstr(a);
    return out;
}

Args concat(Args head, const Args& tail)
{
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
}

void row(const char* name, const Args& args)
{
    QTest::newRow(name) << toList(args);
}

// A valid acquire on "free" with one option replaced, added, or (without a
// value) left out: the row differs from an accepted command in that one place.
Args acquire(const std::string& option, std::optional<std::string> value)
{
    std::vector<std::pair<std::string, std::string>> options{
        {"--env", "free"}, {"--job", "deploy-43"}, {"--release", "v43"}, {"--generation", "43"}};
    auto it = std::find_if(options.begin(), options.end(), [&](const auto& o) { return o.first == option; });
    if (it == options.end())
        options.emplace_back(option, value.value_or(""));
    else if (value)
        it->second = *value;
    else
        options.erase(it);
    Args args{"lease", "acquire"};
    for (const auto& [name, v] : options)
        args.insert(args.end(), {name, v});
    return args;
}

// The footprint with names, so that a failing comparison says what was written.
QString describe(const std::vector<long long>& footprint)
{
    static const char* const names[] = {"environments", "leases",          "manifests",         "events",
                                        "operations",   "sum(last_token)", "sum(expires_at ms)"};
    QStringList parts;
    for (std::size_t i = 0; i < footprint.size(); ++i)
        parts << QStringLiteral("%1=%2")
                     .arg(i < std::size(names) ? QLatin1String(names[i]) : QLatin1String("?"))
                     .arg(footprint[i]);
    return parts.join(QLatin1Char(' '));
}

// stderr is one "relctl: " line; stdout is empty, or with --json one object
// {"error": error, "message": m} where m is that same line's message.
void checkErrorOutput(const RunResult& r, bool json, const std::string& error)
{
    // --lease in argv is warned about first, on a line of its own, whatever follows.
    static const std::string warning =
        "relctl: warning: --lease puts the lease secret in the process list; use "
        "RELCTL_LEASE or --lease-file\n";
    const std::string e = r.err.rfind(warning, 0) == 0 ? r.err.substr(warning.size()) : r.err;
    QVERIFY2(e.rfind("relctl: ", 0) == 0 && e.size() > 10 && e.back() == '\n' &&
                 std::count(e.begin(), e.end(), '\n') == 1,
             ("stderr is not one \"relctl: \" line: [" + e + "]").c_str());
    if (!json) {
        QVERIFY2(r.out.empty(), ("unexpected stdout: " + r.out).c_str());
        return;
    }
    const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    QVERIFY2(j.is_object() && std::count(r.out.begin(), r.out.end(), '\n') == 1 && j.contains("error") &&
                 j.contains("message") && j.at("message").is_string(),
             ("stdout is not one error object: [" + r.out + "]").c_str());
    QCOMPARE(qstr(j.at("error").dump()), qstr(nlohmann::json(error).dump()));
    QCOMPARE(qstr("relctl: " + j.at("message").get<std::string>() + "\n"), qstr(e));
}

// Runs args plainly and with a leading --json; both must be rejected as usage
// errors and leave every table of the database exactly as it was. (One
// footprint after both runs: each costs seven connections.)
void expectRejected(const TestDatabase& db, const Args& args, const Env& env = {})
{
    const QString before = describe(db.footprint());
    for (bool json : {false, true}) {
        const RunResult r = relctl(db, json ? concat({"--json"}, args) : args, {}, env);
        QVERIFY2(r.exitCode == 2, ("exit " + std::to_string(r.exitCode) + ", stderr: " + r.err).c_str());
        checkErrorOutput(r, json, "usage");
        if (QTest::currentTestFailed())
            return;
    }
    QCOMPARE(describe(db.footprint()), before);
}

// The state every rejection is checked against: "prod" (30s default, 10m max)
// is held by a live 10m lease, so that renew/release/publish with its real
// handle have something to damage; "staging" has a published manifest and no
// lease; "free" is free with prod's limits, so that an acquire slipping
// through would write a lease. Returns the prod handle ("" after a warning).
std::string prepare(const TestDatabase& db)
{
    bool ok = true;
    const auto run = [&](const Args& args, const std::string& input = std::string()) {
        const RunResult r = relctl(db, args, input);
        if (r.exitCode != 0) {
            qWarning("fixture step failed with exit %d: %s", r.exitCode, r.err.c_str());
            ok = false;
        }
        return r.line();
    };
    run({"env", "add", "prod", "--default-ttl", "30s", "--max-ttl", "10m"});
    run({"env", "add", "staging"});
    run({"env", "add", "free", "--default-ttl", "30s", "--max-ttl", "10m"});
    const std::string staging = run({"lease", "acquire", "--env", "staging", "--job", "deploy-41",
                                     "--release", "v41", "--generation", "41"});
    run({"publish", "--lease", staging, "--manifest", "-"}, R"({"image":"registry.example/app:v41"})");
    run({"lease", "release", "--lease", staging});
    const std::string prod = run({"lease", "acquire", "--env", "prod", "--job", "deploy-42", "--release",
                                  "v42", "--generation", "42", "--ttl", "10m"});
    return ok ? prod : std::string();
}

} // namespace

class TestInput final : public QObject
{
    Q_OBJECT

private:
    std::unique_ptr<TestDatabase> m_db;
    std::string m_lease; // the live prod lease: ENV:TOKEN:ID
    std::string m_token, m_id;
    QTemporaryDir m_dir;

    std::string file(const char* name) const { return m_dir.filePath(QLatin1String(name)).toStdString(); }

    void rejects()
    {
        QFETCH(QStringList, args);
        expectRejected(*m_db, toArgs(args));
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        const QByteArray oversized = QByteArray("{\"pad\":\"") + QByteArray(65527, 'x') + QByteArray("\"}");
        QCOMPARE(oversized.size(), 65537); // one byte above 64 KiB, and otherwise a valid object
        const std::pair<const char*, QByteArray> files[] = {
            {"empty.json", QByteArray()},         {"truncated.json", QByteArray("{\"image\": ")},
            {"array.json", QByteArray("[1, 2]")}, {"string.json", QByteArray("\"app:v42\"")},
            {"number.json", QByteArray("42")},    {"null.json", QByteArray("null")},
            {"oversized.json", oversized},        {"valid.json", QByteArray("{\"image\": \"app:v42\"}")}};
        for (const auto& [name, content] : files) {
            QFile f(m_dir.filePath(QLatin1String(name)));
            QVERIFY(f.open(QIODevice::WriteOnly));
            QCOMPARE(f.write(content), qint64(content.size()));
        }
        m_db = std::make_unique<TestDatabase>();
        m_lease = prepare(*m_db);
        QVERIFY(!m_lease.empty());
        const auto first = m_lease.find(':'), second = m_lease.find(':', first + 1);
        m_token = m_lease.substr(first + 1, second - first - 1);
        m_id = m_lease.substr(second + 1);
        QCOMPARE(m_id.size(), std::size_t(32));
    }

    void envAdd_data()
    {
        QTest::addColumn<QStringList>("args");
        row("upper case", {"env", "add", "Prod"});
        row("leading dash", {"env", "add", "-x"});
        row("colon", {"env", "add", "a:b"});
        row("64 characters", {"env", "add", std::string(64, 'a')});
        row("empty name", {"env", "add", ""});
        row("missing name", {"env", "add"});
        row("two names", {"env", "add", "qa", "uat"});
        row("default ttl 0", {"env", "add", "qa", "--default-ttl", "0"});
        row("default ttl abc", {"env", "add", "qa", "--default-ttl", "abc"});
        row("default ttl 1.5s", {"env", "add", "qa", "--default-ttl", "1.5s"});
        row("default ttl -5s", {"env", "add", "qa", "--default-ttl", "-5s"});
        row("default ttl empty", {"env", "add", "qa", "--default-ttl="});
        row("max ttl without value", {"env", "add", "qa", "--max-ttl"});
        row("default above max (server)", {"env", "add", "qa", "--default-ttl", "10m", "--max-ttl", "1m"});
        row("option given twice", {"env", "add", "qa", "--max-ttl", "1m", "--max-ttl", "2m"});
        row("unknown option", {"env", "add", "qa", "--foo"});
        row("existing, other settings (server)", {"env", "add", "prod", "--default-ttl", "1m"});
    }
    void envAdd() { rejects(); }

    void leaseAcquire_data()
    {
        QTest::addColumn<QStringList>("args");
        row("unknown environment (server)", acquire("--env", "nope"));
        row("invalid environment name", acquire("--env", "Free"));
        row("missing --env", acquire("--env", std::nullopt));
        row("missing --job", acquire("--job", std::nullopt));
        row("missing --release", acquire("--release", std::nullopt));
        row("missing --generation", acquire("--generation", std::nullopt));
        row("empty --job", acquire("--job", ""));
        row("empty --release", acquire("--release", ""));
        row("--job of 201 characters (server)", acquire("--job", std::string(201, 'j')));
        row("generation 0", acquire("--generation", "0"));
        row("generation -1", acquire("--generation", "-1"));
        row("generation abc", acquire("--generation", "abc"));
        row("generation above int64", acquire("--generation", "99999999999999999999"));
        row("generation 1.5", acquire("--generation", "1.5"));
        row("ttl 0", acquire("--ttl", "0"));
        row("ttl 2x", acquire("--ttl", "2x"));
        row("ttl -1s", acquire("--ttl", "-1s"));
        row("ttl 11m above the max of 10m (server)", acquire("--ttl", "11m"));
        row("empty --op-id", acquire("--op-id", ""));
        row("--op-id of 201 characters (server)", acquire("--op-id", std::string(201, 'o')));
        row("unknown option", acquire("--force", "yes"));
    }
    void leaseAcquire() { rejects(); }

    // Every handle is one defect away from the live lease's real handle, so a
    // parser that let the defect through would renew, release or publish.
    void leaseHandles_data()
    {
        QTest::addColumn<QStringList>("args");
        std::string upper = m_id;
        for (char& c : upper)
            c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        const std::string uuid = m_id.substr(0, 8) + "-" + m_id.substr(8, 4) + "-" + m_id.substr(12, 4) +
                                 "-" + m_id.substr(16, 4) + "-" + m_id.substr(20);
        const std::pair<const char*, std::string> handles[] = {
            {"env only", "prod"},
            {"no lease id", "prod:" + m_token},
            {"token not a number", "prod:x:" + m_id},
            {"token zero", "prod:0:" + m_id},
            {"short lease id", "prod:" + m_token + ":XYZ"},
            {"upper-case lease id", "prod:" + m_token + ":" + upper},
            {"lease id as a uuid", "prod:" + m_token + ":" + uuid},
            {"extra field", m_lease + ":x"},
            {"invalid environment name", "Prod:" + m_token + ":" + m_id},
            {"unknown environment (server)", "nope:1:" + m_id},
            {"empty", ""}};
        const std::pair<const char*, Args> commands[] = {
            {"renew", {"lease", "renew"}}, {"release", {"lease", "release"}}, {"publish", {"publish"}}};
        for (const auto& [command, prefix] : commands) {
            QTest::addRow("%s: no --lease, no RELCTL_LEASE", command) << toList(prefix);
            for (const auto& [name, handle] : handles) {
                Args args = prefix;
                args.insert(args.end(), {"--lease", handle});
                QTest::addRow("%s: %s", command, name) << toList(args);
            }
        }
        // The handle is right, one option is not; the footprint covers the lease's expiry.
        row("renew: ttl 0", {"lease", "renew", "--lease", m_lease, "--ttl", "0"});
        row("renew: ttl abc", {"lease", "renew", "--lease", m_lease, "--ttl", "abc"});
        row("renew: ttl 11m above the max (server)", {"lease", "renew", "--lease", m_lease, "--ttl", "11m"});
        row("release: unknown option --ttl", {"lease", "release", "--lease", m_lease, "--ttl", "1m"});
        row("publish: empty --op-id", {"publish", "--lease", m_lease, "--op-id", ""});
        row("publish: --op-id of 201 characters (server)",
            {"publish", "--lease", m_lease, "--op-id", std::string(201, 'o')});
    }
    void leaseHandles() { rejects(); }

    // RELCTL_LEASE stands in for --lease, and is held to the same rules.
    void leaseFromEnvironment_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("relctlLease");
        QTest::newRow("malformed") << toList({"lease", "renew"}) << qstr("prod:" + m_token);
        QTest::newRow("set but empty") << toList({"lease", "release"}) << QString();
        QTest::newRow("unknown environment (server)") << toList({"publish"}) << qstr("nope:1:" + m_id);
        // With a valid RELCTL_LEASE, the command itself must still be checked.
        QTest::newRow("--lease wins over it")
            << toList({"lease", "renew", "--lease", "prod"}) << qstr(m_lease);
        QTest::newRow("ttl 11m (server)") << toList({"lease", "renew", "--ttl", "11m"}) << qstr(m_lease);
        QTest::newRow("bad manifest")
            << toList({"publish", "--manifest", file("array.json")}) << qstr(m_lease);
    }
    void leaseFromEnvironment()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, relctlLease);
        expectRejected(*m_db, toArgs(args), {{"RELCTL_LEASE", relctlLease.toStdString()}});
    }

    // The live lease's real handle: only the manifest is wrong.
    void publishManifest_data()
    {
        QTest::addColumn<QStringList>("args");
        const std::pair<const char*, std::string> manifests[] = {
            {"missing file", file("missing.json")}, {"empty path", ""},
            {"empty file", file("empty.json")},     {"invalid JSON", file("truncated.json")},
            {"JSON array", file("array.json")},     {"JSON string", file("string.json")},
            {"JSON number", file("number.json")},   {"JSON null", file("null.json")},
            {"65537 bytes", file("oversized.json")}};
        for (const auto& [name, path] : manifests)
            row(name, {"publish", "--lease", m_lease, "--manifest", path});
    }
    void publishManifest() { rejects(); }

    void reads_data()
    {
        QTest::addColumn<QStringList>("args");
        row("audit: limit 0", {"audit", "--limit", "0"});
        row("audit: limit abc", {"audit", "--limit", "abc"});
        row("audit: limit above 1000000", {"audit", "--limit", "1000001"});
        row("audit: since not a time (server)", {"audit", "--since", "not a time"});
        row("audit: invalid env", {"audit", "--env", "Prod"});
        row("audit: unknown option", {"audit", "--tail"});
        row("manifest show: unknown env (server)", {"manifest", "show", "--env", "nope"});
        row("manifest show: invalid env", {"manifest", "show", "--env", "Staging"});
        row("manifest show: no env", {"manifest", "show"});
        row("lease show: unknown env (server)", {"lease", "show", "--env", "nope"});
        row("lease show: empty env", {"lease", "show", "--env", ""});
        row("env show: unknown env (server)", {"env", "show", "nope"});
        row("env show: invalid env", {"env", "show", "PROD"});
        row("env show: no env", {"env", "show"});
        row("trace: no --job", {"trace"});
        row("trace: empty --job", {"trace", "--job", ""});
        row("op show: no id", {"op", "show"});
        row("op show: two ids", {"op", "show", "a", "b"});
    }
    void reads() { rejects(); }

    // Queue policies and operator controls: the server or the CLI refuses
    // before anything changes.
    void operatorControls_data()
    {
        QTest::addColumn<QStringList>("args");
        row("env set: nothing to set", {"env", "set", "prod"});
        row("env set: unknown policy", {"env", "set", "prod", "--policy", "fifo"});
        row("env set: unknown supersede", {"env", "set", "prod", "--supersede", "sometimes"});
        row("env set: unknown serialization", {"env", "set", "prod", "--serialization", "maybe"});
        row("env set: unknown env (server)", {"env", "set", "nope", "--policy", "newest"});
        row("acquire: --wait not a duration", concat(acquire("--wait", "soon"), {}));
        row("acquire: --wait negative", concat(acquire("--wait", "-1s"), {}));
        row("revoke: no --by", {"lease", "revoke", "--env", "prod", "--reason", "stuck"});
        row("revoke: no --reason", {"lease", "revoke", "--env", "prod", "--by", "alice"});
        row("revoke: blank reason (server)",
            {"lease", "revoke", "--env", "prod", "--by", "alice", "--reason", " "});
        row("revoke: unknown env (server)",
            {"lease", "revoke", "--env", "nope", "--by", "a", "--reason", "r"});
        row("freeze: no --reason", {"freeze", "--env", "prod", "--by", "alice"});
        row("freeze: no --env", {"freeze", "--by", "alice", "--reason", "incident"});
        row("unfreeze: no --by", {"unfreeze", "--env", "prod"});
        row("unfreeze: blank reason (server)", {"unfreeze", "--env", "prod", "--by", "a", "--reason", " "});
        row("approve: no id", {"approve", "--by", "alice"});
        row("approve: id not a number", {"approve", "first", "--by", "alice"});
        row("approve: unknown request (server)", {"approve", "999", "--by", "alice"});
        row("deny: no reason", {"deny", "1", "--by", "alice"});
        row("approvals: unknown subcommand", {"approvals", "show"});
        row("approvals list: invalid env", {"approvals", "list", "--env", "Prod"});
        row("publish: --env and --lease",
            {"publish", "--env", "prod", "--lease", "prod:1:" + std::string(32, 'a'), "--job", "j",
             "--release", "r", "--generation", "1"});
        row("publish --env: no generation", {"publish", "--env", "prod", "--job", "j", "--release", "r"});
        row("publish --env: bad generation",
            {"publish", "--env", "prod", "--job", "j", "--release", "r", "--generation", "0"});
        row("publish: --job without --env", {"publish", "--job", "j"});
    }
    void operatorControls() { rejects(); }

    void global_data()
    {
        QTest::addColumn<QStringList>("args");
        row("unknown command", {"frobnicate"});
        row("unknown global option", {"--frobnicate", "env", "list"});
        row("global option after the command", {"env", "list", "--json"});
        row("--dsn without value", {"--dsn"});
        row("malformed --dsn", {"--dsn", "foo=bar", "env", "list"});
        row("--dsn with unterminated quote", {"--dsn", "host='/tmp", "env", "list"});
        row("missing subcommand", {"env"});
        row("unknown subcommand", {"lease", "steal"});
        row("extra argument", {"env", "list", "prod"});
    }
    void global() { rejects(); }

    // Without a command: one line and, with --json, an error object (not the usage text).
    void noCommand()
    {
        const QString before = describe(m_db->footprint());
        const RunResult r = relctl(*m_db, {"--json"});
        QCOMPARE(r.exitCode, 2);
        QCOMPARE(describe(m_db->footprint()), before);
        QVERIFY(nlohmann::json::parse(r.out, nullptr, false).is_object());
        expectRejected(*m_db, {});
    }

    // A directory as --manifest is invalid input, not an internal error.
    void manifestIsADirectory()
    {
        const Args args{"publish", "--lease", m_lease, "--manifest", m_dir.path().toStdString()};
        const QString before = describe(m_db->footprint());
        const RunResult r = relctl(*m_db, args);
        QCOMPARE(describe(m_db->footprint()), before);
        QCOMPARE(r.exitCode, 2);
        expectRejected(*m_db, args);
    }

    void databaseDown_data()
    {
        QTest::addColumn<QString>("dsn");
        QTest::newRow("no socket") << QStringLiteral("host=/nonexistent-relctl-dir user=x");
        QTest::newRow("refused") << QStringLiteral("host=127.0.0.1 port=1 user=x dbname=x connect_timeout=3");
    }

    void databaseDown()
    {
        QFETCH(QString, dsn);
        const std::string down = dsn.toStdString();
        const QString before = describe(m_db->footprint());
        // RELCTL_DSN names the live database, where this acquire would succeed:
        // --dsn must win over it. The last run has the dead RELCTL_DSN alone.
        const Args acquireFree = acquire("--env", "free");
        const std::pair<RunResult, bool> runs[] = {
            {relctl(*m_db, {"--dsn", down, "env", "list"}), false},
            {relctl(*m_db, concat({"--json", "--dsn", down}, acquireFree)), true},
            {relctlWithDsn(down, {"--json", "env", "list"}), true}};
        for (const auto& [r, json] : runs) {
            QVERIFY2(r.exitCode == 9, ("exit " + std::to_string(r.exitCode) + ", stderr: " + r.err).c_str());
            QVERIFY2(r.elapsedMs < 10000, std::to_string(r.elapsedMs).c_str());
            checkErrorOutput(r, json, "unavailable");
            if (QTest::currentTestFailed())
                return;
        }
        QCOMPARE(describe(m_db->footprint()), before);
        // Arguments are checked before connecting: invalid input stays exit 2.
        const RunResult invalid = relctlWithDsn(down, {"env", "add", "Prod"});
        QCOMPARE(invalid.exitCode, 2);
        checkErrorOutput(invalid, false, "usage");
    }

    // The control: the same fixture and the same footprint do see accepted
    // commands, including the boundary values next to the rejected ones.
    void validInputStillWorks()
    {
        TestDatabase db;
        const std::string lease = prepare(db);
        QVERIFY(!lease.empty());
        const Args accepted[] = {acquire("--ttl", "10m"),
                                 {"lease", "renew", "--lease", lease, "--ttl", "10m"},
                                 {"publish", "--lease", lease, "--manifest", file("valid.json")}};
        for (const Args& args : accepted) {
            const QString before = describe(db.footprint());
            const RunResult r = relctl(db, args);
            QVERIFY2(r.exitCode == 0, ("exit " + std::to_string(r.exitCode) + ", stderr: " + r.err).c_str());
            QVERIFY2(describe(db.footprint()) != before, qPrintable(before));
        }
    }
};

QTEST_GUILESS_MAIN(TestInput)
#include "test_input.moc"
