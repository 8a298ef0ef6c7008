// An organisation of many environments, through real relctl processes
// against PostgreSQL: groups (the default and a set one), env list's
// filters and natural order, status --attention with each of its reasons
// and their absence, freezing and unfreezing a group or a pattern at once
// (one event each, all or nothing, never without a confirmation), promotion
// paths set per group, and the new SQL functions called directly with the
// arguments a hostile login would pass.

#include "relctlprocess.h"
#include "testdatabase.h"

#include <QStandardPaths>
#include <QtTest>
#include <algorithm>

using nlohmann::json;

namespace {

void add(const TestDatabase& db, const std::vector<std::string>& envs)
{
    for (const std::string& e : envs) {
        const RunResult r = relctl(db, {"env", "add", e});
        if (r.exitCode != 0)
            qFatal("env add %s failed: %s", e.c_str(), r.describe().c_str());
    }
}

// The names of a listing's "environments", in the order given.
std::vector<std::string> names(const json& reply)
{
    std::vector<std::string> out;
    for (const json& e : reply.at("environments"))
        out.push_back(e.at("name").get<std::string>());
    return out;
}

// The first word of each line of a text listing.
std::vector<std::string> firstWords(const std::string& text)
{
    std::vector<std::string> out;
    std::size_t from = 0;
    while (from < text.size()) {
        const std::size_t end = text.find('\n', from);
        const std::string line = text.substr(from, end - from);
        out.push_back(line.substr(0, line.find(' ')));
        if (end == std::string::npos)
            break;
        from = end + 1;
    }
    return out;
}

using Names = std::vector<std::string>;

// The reasons status --attention gives for each environment it lists.
std::map<std::string, std::vector<std::string>> reasons(const TestDatabase& db)
{
    const RunResult r = relctl(db, {"--json", "status", "--attention"});
    if (r.exitCode != 0)
        qFatal("status --attention failed: %s", r.describe().c_str());
    std::map<std::string, std::vector<std::string>> out;
    const json reply = r.json(); // kept: a range-for over a temporary's member dangles
    for (const json& e : reply.at("environments"))
        for (const json& a : e.at("attention"))
            out[e.at("name").get<std::string>()].push_back(a.at("reason").get<std::string>());
    return out;
}

// The environments for which relctl.attention_now (every environment at
// once, set-based) and relctl.environment_attention (the definition, one
// environment) disagree, at one instant: a name one lists and the other
// does not, or other reasons.
constexpr const char* kAttentionDisagreements =
    "SELECT count(*) FROM relctl.environments e "
    "LEFT JOIN relctl.attention_now(now()) a ON a.name = e.name "
    "WHERE relctl.environment_attention(e, now()) IS DISTINCT FROM coalesce(a.attention, '[]') "
    "   OR a.\"group\" IS DISTINCT FROM CASE WHEN a.name IS NOT NULL THEN relctl.env_group(e) END";

long long events(const TestDatabase& db, const std::string& env, const std::string& operation)
{
    return db.count("SELECT count(*) FROM relctl.events WHERE env = " + sqlLiteral(env) +
                    " AND operation = " + sqlLiteral(operation));
}

long long frozenCount(const TestDatabase& db)
{
    return db.count("SELECT count(*) FROM relctl.environments WHERE frozen_at IS NOT NULL");
}

} // namespace

class TestOrganisation final : public QObject
{
    Q_OBJECT

private slots:
    void groupsAreTheNamesFirstPartUnlessSet()
    {
        TestDatabase db;
        add(db, {"svc1.prod", "svc1.test", "lonely"});
        json list = relctl(db, {"--json", "env", "list"}).json();
        std::map<std::string, std::string> groupOf;
        for (const json& e : list["environments"])
            groupOf[e["name"].get<std::string>()] = e["group"].get<std::string>();
        QCOMPARE(groupOf["svc1.prod"], std::string("svc1"));
        QCOMPARE(groupOf["svc1.test"], std::string("svc1"));
        QCOMPARE(groupOf["lonely"], std::string("lonely"));

        RunResult r = relctl(db, {"--json", "env", "set", "svc1.test", "--group", "team-a"});
        QVERIFY2(r.exitCode == 0, failure(r));
        QCOMPARE(r.json()["group"], json("team-a"));
        QCOMPARE(r.json()["changed"]["group"], json("team-a"));
        QCOMPARE(relctl(db, {"--json", "env", "show", "svc1.test"}).json()["group"], json("team-a"));
        QCOMPARE(db.scalar("SELECT detail->>'group' FROM relctl.events WHERE env = 'svc1.test' AND "
                           "operation = 'env-set' ORDER BY id DESC LIMIT 1"),
                 std::string("team-a"));
        // The same again changes nothing and records nothing.
        r = relctl(db, {"--json", "env", "set", "svc1.test", "--group", "team-a"});
        QCOMPARE(r.json()["changed"], json::object());
        QCOMPARE(events(db, "svc1.test", "env-set"), 1LL);

        // "" is back to the default, and recorded as "".
        r = relctl(db, {"--json", "env", "set", "svc1.test", "--group", ""});
        QVERIFY2(r.exitCode == 0, failure(r));
        QCOMPARE(r.json()["group"], json("svc1"));
        QCOMPARE(r.json()["changed"]["group"], json(""));
        QCOMPARE(db.scalar("SELECT coalesce(group_name, '<default>') FROM relctl.environments WHERE name = "
                           "'svc1.test'"),
                 std::string("<default>"));

        // A group is spelled like an environment: nothing written otherwise.
        const auto before = db.footprint();
        for (const std::string& bad : std::vector<std::string>{"Team A", "-x", std::string(64, 'a'), "a b"}) {
            r = relctl(db, {"env", "set", "svc1.test", "--group", bad});
            QVERIFY2(r.exitCode == 2, failure(r));
            QVERIFY2(r.err.find("invalid group name") != std::string::npos, failure(r));
        }
        QCOMPARE(db.footprint(), before);
        QCOMPARE(sqlState(db.dsn(), "SELECT relctl.env_set('svc1.test', NULL, NULL, NULL, '{}', NULL, NULL, "
                                    "NULL, NULL, 'Bad Group')"),
                 std::string("RC002"));
        QCOMPARE(db.footprint(), before);
    }

    void listFiltersAndNaturalOrder()
    {
        TestDatabase db;
        add(db, {"svc10.prod", "svc2.prod", "svc1.prod", "svc1.test", "svc11.test", "a_b.x", "axb.x"});
        QVERIFY(relctl(db, {"env", "set", "svc11.test", "--group", "team-a"}).exitCode == 0);

        RunResult r = relctl(db, {"env", "list"});
        QVERIFY2(r.exitCode == 0, failure(r));
        QCOMPARE(firstWords(r.out), (Names{"a_b.x", "axb.x", "svc1.prod", "svc1.test", "svc2.prod",
                                           "svc10.prod", "svc11.test"}));
        // The group is on each line.
        QVERIFY2(r.out.find("svc11.test  team-a") != std::string::npos, r.out.c_str());

        const auto listed = [&](const Args& filter) {
            Args args{"--json", "env", "list"};
            args.insert(args.end(), filter.begin(), filter.end());
            const RunResult l = relctl(db, args);
            if (l.exitCode != 0)
                qFatal("env list failed: %s", l.describe().c_str());
            Args text{"env", "list"};
            text.insert(text.end(), filter.begin(), filter.end());
            const Names plain = firstWords(relctl(db, text).out);
            Names asJson = names(l.json());
            if (plain != asJson && !(asJson.empty() && plain == Names{"no"}))
                qFatal("text and JSON listings differ");
            return asJson;
        };
        QCOMPARE(listed({"--group", "svc1"}), (Names{"svc1.prod", "svc1.test"}));
        QCOMPARE(listed({"--group", "team-a"}), (Names{"svc11.test"}));
        QCOMPARE(listed({"--match", "*.prod"}), (Names{"svc1.prod", "svc2.prod", "svc10.prod"}));
        QCOMPARE(listed({"--match", "svc1?.*"}), (Names{"svc10.prod", "svc11.test"}));
        QCOMPARE(listed({"--group", "svc1", "--match", "*.test"}), (Names{"svc1.test"}));
        // A set group is the group: svc11.test is no longer in svc11.
        QCOMPARE(listed({"--group", "svc11"}), Names{});
        // LIKE's own characters are plain characters in a pattern.
        QCOMPARE(listed({"--match", "a_b.*"}), (Names{"a_b.x"}));
        QCOMPARE(listed({"--match", "%"}), Names{});
        QCOMPARE(listed({"--match", "*"}).size(), std::size_t(7));
        QCOMPARE(relctl(db, {"env", "list", "--group", "nobody"}).out, std::string("no environments\n"));

        for (const Args& bad : {Args{"env", "list", "--group", "Bad"}, Args{"env", "list", "--match", ""},
                                Args{"env", "list", "--match", std::string(201, '*')}}) {
            r = relctl(db, bad);
            QVERIFY2(r.exitCode == 2, failure(r));
        }
    }

    void attentionGivesEachReasonAndNothingElse()
    {
        TestDatabase db;
        add(db, {"quiet", "held", "frozen", "refused", "decision", "waiting", "expiring", "up", "blocked"});
        QCOMPARE(reasons(db), (std::map<std::string, std::vector<std::string>>{}));
        QCOMPARE(relctl(db, {"status", "--attention"}).out, std::string("no environment needs attention\n"));

        // held for long: no reason (a lease is not a problem).
        QVERIFY(relctl(db, {"lease", "acquire", "--env", "held", "--job", "j-held", "--release", "v1",
                            "--generation", "1", "--ttl", "5m"})
                    .exitCode == 0);
        // frozen.
        QVERIFY(relctl(db, {"freeze", "--env", "frozen", "--by", "ops", "--reason", "incident"}).exitCode ==
                0);
        // refused in the last hour: an acquire on a frozen environment, then unfrozen.
        QVERIFY(relctl(db, {"freeze", "--env", "refused", "--by", "ops", "--reason", "r"}).exitCode == 0);
        QCOMPARE(relctl(db, {"lease", "acquire", "--env", "refused", "--job", "j-r", "--release", "v1",
                             "--generation", "1"})
                     .exitCode,
                 6);
        QVERIFY(relctl(db, {"unfreeze", "--env", "refused", "--by", "ops"}).exitCode == 0);
        // a decision pending: a promotion request where an approval is needed.
        QVERIFY(relctl(db, {"env", "set", "decision", "--approvals", "1"}).exitCode == 0);
        QVERIFY(relctl(db, {"promote", "request", "--env", "decision", "--release", "v1", "--generation", "1",
                            "--by", "dev"})
                    .exitCode == 0);
        // waiting: a candidate queued behind a holder (its waiter alive).
        QVERIFY(relctl(db, {"lease", "acquire", "--env", "waiting", "--job", "j-w1", "--release", "v1",
                            "--generation", "1", "--ttl", "5m"})
                    .exitCode == 0);
        auto waiter = startRelctl(db, {"lease", "acquire", "--env", "waiting", "--job", "j-w2", "--release",
                                       "v2", "--generation", "2", "--wait", "60s"});
        QTRY_VERIFY_WITH_TIMEOUT(db.count("SELECT count(*) FROM relctl.candidates WHERE env = 'waiting' AND "
                                          "state = 'waiting'") == 1,
                                 10000);
        // a promotion blocked: "up" does not have the release.
        QVERIFY(relctl(db, {"env", "set", "blocked", "--promote-from", "up", "--approvals", "1"}).exitCode ==
                0);
        QVERIFY(relctl(db, {"promote", "request", "--env", "blocked", "--release", "v9", "--generation", "9",
                            "--by", "dev"})
                    .exitCode == 0);
        // expiring: a lease with less than a quarter of the default TTL (60 s)
        // left; last, so that it has not run out by the time it is read.
        QVERIFY(relctl(db, {"lease", "acquire", "--env", "expiring", "--job", "j-exp", "--release", "v1",
                            "--generation", "1", "--ttl", "14s"})
                    .exitCode == 0);

        const auto got = reasons(db);
        std::string shown;
        for (const auto& [env, why] : got)
            for (const std::string& w : why)
                shown += env + ":" + w + " ";
        QVERIFY2(got == (std::map<std::string, std::vector<std::string>>{
                            {"frozen", {"frozen"}},
                            {"refused", {"refused"}},
                            {"decision", {"decision"}},
                            {"expiring", {"expiring"}},
                            {"waiting", {"waiting"}},
                            {"blocked", {"decision", "promotion_blocked"}},
                        }),
                 shown.c_str());
        // relctl.attention_now, set-based, says what the definition says of each.
        QCOMPARE(db.count(kAttentionDisagreements), 0LL);
        // The one definition: what relctl.environment_attention says of every environment.
        QCOMPARE(db.count("SELECT count(*) FROM relctl.environments e "
                          "WHERE relctl.environment_attention(e, clock_timestamp()) <> '[]'"),
                 6LL);

        // Text: one line each, natural order, reasons in words.
        RunResult r = relctl(db, {"status", "--attention"});
        QVERIFY2(r.exitCode == 0, failure(r));
        QCOMPARE(firstWords(r.out),
                 (Names{"blocked", "decision", "expiring", "frozen", "refused", "waiting"}));
        QVERIFY2(r.out.find("frozen (frozen): frozen by ops: incident") != std::string::npos, r.out.c_str());
        QVERIFY2(r.out.find("1 refusal in the last hour") != std::string::npos, r.out.c_str());
        QVERIFY2(r.out.find("1 candidate waiting") != std::string::npos, r.out.c_str());
        QVERIFY2(r.out.find("up does not have v9 (generation 9) accepted") != std::string::npos,
                 r.out.c_str());

        // Filters, as env list's.
        r = relctl(db, {"--json", "status", "--attention", "--match", "*e*"});
        QCOMPARE(names(r.json()), (Names{"blocked", "decision", "expiring", "frozen", "refused"}));
        r = relctl(db, {"--json", "status", "--attention", "--group", "waiting"});
        QCOMPARE(names(r.json()), (Names{"waiting"}));
        QVERIFY(r.json()["environments"][0]["group"] == json("waiting"));

        // The reasons end with what caused them.
        QVERIFY(relctl(db, {"unfreeze", "--env", "frozen", "--by", "ops"}).exitCode == 0);
        QVERIFY(!reasons(db).count("frozen"));

        // --job and --attention are one or the other.
        QCOMPARE(relctl(db, {"status", "--attention", "--job", "x"}).exitCode, 2);
        QCOMPARE(relctl(db, {"status"}).exitCode, 2);
        QCOMPARE(relctl(db, {"status", "--job", "x", "--group", "g"}).exitCode, 2);

        // A waiter whose job is gone (its candidate not yet marked as having
        // left: nothing wrote on the environment since) is not waiting, as
        // the console's queue does not show it.
        waiter->kill();
        finish(*waiter);
        QCOMPARE(
            db.count("SELECT count(*) FROM relctl.candidates WHERE env = 'waiting' AND state = 'waiting'"),
            1LL);
        QTRY_VERIFY_WITH_TIMEOUT(!reasons(db).count("waiting"), 10000);
        QCOMPARE(db.scalar("SELECT relctl.environment_attention(e, clock_timestamp())::text "
                           "FROM relctl.environments e WHERE e.name = 'waiting'"),
                 std::string("[]"));
        QCOMPARE(db.count(kAttentionDisagreements), 0LL);
    }

    void freezeManyOneEventEachNeverWithoutAConfirmation()
    {
        TestDatabase db;
        add(db, {"svc10.prod", "svc2.prod", "svc1.prod", "svc1.test"});
        const auto before = db.footprint();

        // stdin is not a terminal here: without --yes nothing happens, exit 2.
        RunResult r = relctl(db, {"freeze", "--match", "*.prod", "--by", "ops", "--reason", "holiday"});
        QVERIFY2(r.exitCode == 2, failure(r));
        QVERIFY2(r.err.find("--yes") != std::string::npos, failure(r));
        QCOMPARE(std::count(r.err.begin(), r.err.end(), '\n'), 1L);
        QCOMPARE(db.footprint(), before);
        // Even when "y" is piped in.
        r = relctl(db, {"freeze", "--match", "*.prod", "--by", "ops", "--reason", "holiday"}, "y\n");
        QCOMPARE(r.exitCode, 2);
        QCOMPARE(db.footprint(), before);

        // A dry run lists them, naturally ordered, and writes nothing.
        r = relctl(db, {"freeze", "--match", "*.prod", "--by", "ops", "--reason", "holiday", "--dry-run"});
        QVERIFY2(r.exitCode == 0, failure(r));
        QCOMPARE(r.out, std::string("svc1.prod\nsvc2.prod\nsvc10.prod\n"));
        QCOMPARE(db.footprint(), before);

        r = relctl(db,
                   {"--json", "freeze", "--match", "*.prod", "--by", "ops", "--reason", "holiday", "--yes"});
        QVERIFY2(r.exitCode == 0, failure(r));
        QCOMPARE(r.json()["changed"], json({"svc1.prod", "svc2.prod", "svc10.prod"}));
        QCOMPARE(r.json()["unchanged"], json::array());
        for (const std::string env : {"svc1.prod", "svc2.prod", "svc10.prod"}) {
            QCOMPARE(events(db, env, "freeze"), 1LL);
            QCOMPARE(db.scalar("SELECT actor || ': ' || (detail->>'reason') FROM relctl.events WHERE env = " +
                               sqlLiteral(env) + " AND operation = 'freeze'"),
                     std::string("ops: holiday"));
        }
        QCOMPARE(events(db, "svc1.test", "freeze"), 0LL);

        // A group: the one already frozen is left as it was.
        r = relctl(db, {"freeze", "--group", "svc1", "--by", "ops2", "--reason", "other", "--yes"});
        QVERIFY2(r.exitCode == 0, failure(r));
        QCOMPARE(r.out, std::string("svc1.test frozen\nsvc1.prod was frozen already\n"));
        QCOMPARE(db.scalar("SELECT frozen_by FROM relctl.environments WHERE name = 'svc1.prod'"),
                 std::string("ops"));
        QCOMPARE(events(db, "svc1.prod", "freeze"), 1LL);

        // Unfreeze the same way; the single-environment commands still work.
        r = relctl(db, {"unfreeze", "--match", "svc1*", "--by", "ops", "--yes"});
        QVERIFY2(r.exitCode == 0, failure(r));
        QCOMPARE(r.out, std::string("svc1.prod unfrozen\nsvc1.test unfrozen\nsvc10.prod unfrozen\n"));
        QCOMPARE(events(db, "svc10.prod", "unfreeze"), 1LL);
        QVERIFY(relctl(db, {"unfreeze", "--env", "svc2.prod", "--by", "ops"}).exitCode == 0);
        QCOMPARE(frozenCount(db), 0LL);
        QVERIFY(relctl(db, {"freeze", "--env", "svc2.prod", "--by", "ops", "--reason", "one"}).exitCode == 0);
        QCOMPARE(frozenCount(db), 1LL);

        // Nothing matches, both kinds of selection, --yes alone: exit 2, nothing written.
        const auto now = db.footprint();
        for (const Args& bad :
             {Args{"freeze", "--match", "nope*", "--by", "o", "--reason", "r", "--yes"},
              Args{"freeze", "--env", "svc1.prod", "--group", "svc1", "--by", "o", "--reason", "r"},
              Args{"freeze", "--env", "svc1.prod", "--by", "o", "--reason", "r", "--yes"},
              Args{"freeze", "--by", "o", "--reason", "r"},
              Args{"freeze", "--group", "svc1", "--by", "o", "--yes"}}) {
            r = relctl(db, bad);
            QVERIFY2(r.exitCode == 2, failure(r));
        }
        QCOMPARE(db.footprint(), now);
    }

    void aTerminalIsAskedFirst()
    {
        // script(1) gives relctl a terminal on stdin; the answer is typed into it.
        const QString script = QStandardPaths::findExecutable(QStringLiteral("script"));
        if (script.isEmpty())
            QSKIP("script(1) is not installed");
        TestDatabase db;
        add(db, {"a.prod", "b.prod"});
        const auto onTerminal = [&](const std::string& answer) {
            QProcess p;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("RELCTL_DSN"), qstr(db.dsn()));
            p.setProcessEnvironment(env);
            p.start(script, {QStringLiteral("-qec"),
                             qstr(relctlBinary() + " freeze --match '*.prod' --by ops --reason holiday"),
                             QStringLiteral("/dev/null")});
            p.waitForStarted();
            p.write(QByteArray::fromStdString(answer));
            p.closeWriteChannel();
            p.waitForFinished(60000);
            return std::make_pair(p.exitCode(), p.readAllStandardOutput().toStdString());
        };
        auto [code, out] = onTerminal("n\n");
        QCOMPARE(code, 2);
        QVERIFY2(out.find("a.prod\r\nb.prod\r\nfreeze these 2 environments? [y/N]") != std::string::npos,
                 out.c_str());
        QVERIFY2(out.find("not confirmed; nothing was changed") != std::string::npos, out.c_str());
        QCOMPARE(frozenCount(db), 0LL);
        std::tie(code, out) = onTerminal("y\n");
        QCOMPARE(code, 0);
        QCOMPARE(frozenCount(db), 2LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE operation = 'freeze'"), 2LL);
    }

    void freezeManyIsAllOrNothing()
    {
        TestDatabase db;
        add(db, {"a.prod", "b.prod"});
        const auto before = db.footprint();
        const std::string client = "'{}'::jsonb";
        // An unknown name refuses the whole call: a.prod stays as it was.
        for (const std::string& envs :
             {std::string("ARRAY['a.prod', 'nope']"), std::string("ARRAY['b.prod', 'a.prod', 'a.prod']"),
              std::string("ARRAY['a.prod', NULL]"), std::string("NULL::text[]"), std::string("'{}'::text[]"),
              std::string("ARRAY[ARRAY['a.prod'], ARRAY['b.prod']]"),
              std::string("ARRAY(SELECT 'x' || g FROM generate_series(1, 10001) g)"),
              std::string("ARRAY(SELECT 'a.prod' FROM generate_series(1, 10000) g)")}) {
            QCOMPARE(
                sqlState(db.dsn(), "SELECT relctl.freeze_many(" + envs + ", 'ops', 'r', " + client + ")"),
                std::string("RC002"));
            QCOMPARE(
                sqlState(db.dsn(), "SELECT relctl.unfreeze_many(" + envs + ", 'ops', NULL, " + client + ")"),
                std::string("RC002"));
        }
        // Who and why are required as for one environment.
        QCOMPARE(sqlState(db.dsn(), "SELECT relctl.freeze_many(ARRAY['a.prod'], NULL, 'r', '{}')"),
                 std::string("RC002"));
        QCOMPARE(sqlState(db.dsn(), "SELECT relctl.freeze_many(ARRAY['a.prod'], 'ops', NULL, '{}')"),
                 std::string("RC002"));
        QCOMPARE(sqlState(db.dsn(), "SELECT relctl.freeze_many(ARRAY['a.prod'], 'ops', '  ', '{}')"),
                 std::string("RC002"));
        // Only READ COMMITTED.
        for (const char* level : {"REPEATABLE READ", "SERIALIZABLE"})
            QCOMPARE(sqlState(db.dsn(), std::string("BEGIN ISOLATION LEVEL ") + level +
                                            "; SELECT relctl.freeze_many(ARRAY['a.prod'], 'ops', 'r', '{}')"),
                     std::string("RC002"));
        // A manager's call only.
        QCOMPARE(sqlState(db.jobDsn(), "SELECT relctl.freeze_many(ARRAY['a.prod'], 'ops', 'r', '{}')"),
                 std::string("42501"));
        QCOMPARE(
            sqlState(db.reviewerDsn(), "SELECT relctl.unfreeze_many(ARRAY['a.prod'], 'ops', NULL, '{}')"),
            std::string("42501"));
        QCOMPARE(db.footprint(), before);

        // The message names the fault.
        try {
            db.write("SELECT relctl.freeze_many(ARRAY['a.prod', 'nope', 'zz'], 'ops', 'r', '{}')::json");
            QFAIL("accepted unknown names");
        } catch (const std::exception& e) {
            QVERIFY2(std::string(e.what()).find("unknown environment \"nope\" (and 1 more unknown); nothing "
                                                "was changed") != std::string::npos,
                     e.what());
        }
        QCOMPARE(db.footprint(), before);

        // Two bulk calls in opposite orders end, both applied: the locks go in name order.
        QCOMPARE(sqlState(db.dsn(), "SELECT relctl.freeze_many(ARRAY['b.prod', 'a.prod'], 'ops', 'r', '{}')"),
                 std::string(""));
        QCOMPARE(frozenCount(db), 2LL);
    }

    void otherNewFunctionsRefuseBadInput()
    {
        TestDatabase db;
        add(db, {"svc1.test", "svc1.prod"});
        const auto before = db.footprint();
        for (const std::string& call :
             {std::string("relctl.env_list('Bad', NULL)"), std::string("relctl.env_list(NULL, '')"),
              "relctl.env_list(NULL, '" + std::string(201, '*') + "')",
              std::string("relctl.env_brief('a b', NULL)"), std::string("relctl.env_names(NULL, '')"),
              std::string("relctl.attention('-', NULL)"),
              std::string("relctl.env_paths(NULL, NULL, NULL, NULL, NULL, '{}')"),
              std::string("relctl.env_paths(ARRAY['test'], NULL, NULL, NULL, NULL, '{}')"),
              std::string("relctl.env_paths(ARRAY['test', 'test'], NULL, NULL, NULL, NULL, '{}')"),
              std::string("relctl.env_paths(ARRAY['test', NULL], NULL, NULL, NULL, NULL, '{}')"),
              std::string("relctl.env_paths(ARRAY['test', 'Prod'], NULL, NULL, NULL, NULL, '{}')"),
              std::string("relctl.env_paths(ARRAY[ARRAY['test', 'prod']], NULL, NULL, NULL, NULL, '{}')"),
              std::string("relctl.env_paths(ARRAY['test', 'prod'], NULL, NULL, -1, NULL, '{}')"),
              std::string("relctl.env_paths(ARRAY['test', 'prod'], NULL, NULL, NULL, 11, '{}')"),
              std::string("relctl.env_paths(ARRAY['test', 'nope'], NULL, NULL, NULL, NULL, '{}')"),
              std::string(
                  "relctl.env_paths(ARRAY(SELECT 's' || g FROM generate_series(1, 21) g), NULL, NULL, "
                  "NULL, NULL, '{}')")})
            QVERIFY2(sqlState(db.dsn(), "SELECT " + call) == "RC002", call.c_str());
        QCOMPARE(sqlState(db.jobDsn(),
                          "SELECT relctl.env_paths(ARRAY['test', 'prod'], NULL, NULL, NULL, NULL, '{}')"),
                 std::string("42501"));
        QCOMPARE(sqlState(db.jobDsn(), "SELECT relctl.attention(NULL, NULL)"), std::string("42501"));
        QCOMPARE(sqlState(db.reviewerDsn(), "SELECT relctl.attention(NULL, NULL)"), std::string(""));
        QCOMPARE(sqlState(db.dsn(),
                          "BEGIN ISOLATION LEVEL SERIALIZABLE; SELECT relctl.env_paths(ARRAY['test', "
                          "'prod'], NULL, NULL, NULL, NULL, '{}')"),
                 std::string("RC002"));
        QCOMPARE(db.footprint(), before);
    }

    void pathsPerGroupInOneCommand()
    {
        TestDatabase db;
        add(db, {"svc1.test", "svc1.staging", "svc1.prod", "svc2.test", "svc2.staging", "svc2.prod",
                 "svc3.test", "svc3.prod"});
        const auto before = db.footprint();
        // No group has them all: exit 2, nothing changed.
        RunResult r = relctl(db, {"env", "path", "--stages", "dev,test"});
        QVERIFY2(r.exitCode == 2, failure(r));
        QCOMPARE(db.footprint(), before);
        QCOMPARE(relctl(db, {"env", "path", "--stages", "test"}).exitCode, 2);
        QCOMPARE(relctl(db, {"env", "path", "--stages", "test,test"}).exitCode, 2);
        QCOMPARE(relctl(db, {"env", "path", "--stages", "test,,prod"}).exitCode, 2);
        QCOMPARE(db.footprint(), before);

        r = relctl(db, {"env", "path", "--stages", "test,staging,prod", "--soak", "1h"});
        QVERIFY2(r.exitCode == 0, failure(r));
        QVERIFY2(r.out.find("svc1.staging promoted from svc1.test") != std::string::npos, r.out.c_str());
        QVERIFY2(r.out.find("svc2.prod promoted from svc2.staging") != std::string::npos, r.out.c_str());
        QVERIFY2(r.out.find("group svc3 skipped: it has no svc3.staging") != std::string::npos,
                 r.out.c_str());
        QCOMPARE(
            db.rows(
                "SELECT name, coalesce(promote_from, '-'), soak_ms FROM relctl.environments ORDER BY name"),
            (std::vector<std::vector<std::string>>{{"svc1.prod", "svc1.staging", "3600000"},
                                                   {"svc1.staging", "svc1.test", "3600000"},
                                                   {"svc1.test", "-", "0"},
                                                   {"svc2.prod", "svc2.staging", "3600000"},
                                                   {"svc2.staging", "svc2.test", "3600000"},
                                                   {"svc2.test", "-", "0"},
                                                   {"svc3.prod", "-", "0"},
                                                   {"svc3.test", "-", "0"}}));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE operation = 'env-set'"), 4LL);

        // Again: already so, nothing recorded. One group with approvals.
        r = relctl(db, {"--json", "env", "path", "--stages", "test,staging,prod"});
        QVERIFY2(r.exitCode == 0, failure(r));
        QCOMPARE(r.json()["paths"].size(), std::size_t(4));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE operation = 'env-set'"), 4LL);
        r = relctl(db,
                   {"env", "path", "--stages", "test,staging,prod", "--group", "svc1", "--approvals", "2"});
        QVERIFY2(r.exitCode == 0, failure(r));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.environments WHERE approvals_required = 2"), 2LL);
        QCOMPARE(
            db.count("SELECT count(*) FROM relctl.environments WHERE approvals_required = 2 AND name LIKE "
                     "'svc1.%'"),
            2LL);

        // A path the other way would close cycles: refused as a whole.
        const auto set = db.footprint();
        r = relctl(db, {"env", "path", "--stages", "prod,staging"});
        QVERIFY2(r.exitCode == 2, failure(r));
        QVERIFY2(r.err.find("cycle") != std::string::npos, failure(r));
        QCOMPARE(db.footprint(), set);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.environments WHERE promote_from = 'svc1.prod'"), 0LL);
    }
};

QTEST_GUILESS_MAIN(TestOrganisation)
#include "test_organisation.moc"
