// Multi-process stress test: many separate relctl processes race for leases and
// publish on a few environments, with leases that run out mid-work, and then
// the protocol's invariants are checked from the database itself.
//
// The workload runs once (initTestCase); every invariant is its own test
// function, so a failure names the invariant as well as the offending row.
// Workers are bash scripts (tests/scripts/stress-worker.sh) so that the racing
// clients are real OS processes, each with its own connection, as in
// production; each reports every relctl call it made as one line on stdout.

#include "relctlprocess.h"
#include "testdatabase.h"

#include <QElapsedTimer>
#include <QRandomGenerator>
#include <QtTest>
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr int kWorkers = 8;
constexpr int kRounds = 10;
// The workload takes about 20 s on an idle 2-core machine, several times that
// when other tests share the cores (every relctl call is a process and a
// connection). A worker still running after this is a hang, not slowness.
constexpr int kWorkloadTimeoutMs = 240000;
const std::vector<std::string> kEnvironments{"stress-a", "stress-b", "stress-c"};

// One line a worker printed: "KIND key=value key=value ...".
struct Record
{
    std::string kind;
    std::map<std::string, std::string> fields;
    std::string text; // the line itself, for failure messages

    std::string get(const std::string& key) const
    {
        auto it = fields.find(key);
        return it == fields.end() ? std::string() : it->second;
    }
    int rc() const { return std::stoi(get("rc")); }
};

using Rows = std::vector<std::vector<std::string>>; // as TestDatabase::rows() returns them

std::string sqlString(const std::string& s)
{
    std::string out = "'";
    for (char c : s) {
        out += c;
        if (c == '\'')
            out += '\'';
    }
    return out + "'";
}

std::string join(const std::vector<std::string>& row)
{
    std::string out;
    for (const std::string& v : row)
        out += (out.empty() ? "" : " | ") + v;
    return out;
}

// The rows of a query that must return none, as a failure message.
std::string describe(const Rows& rows)
{
    std::string out;
    for (std::size_t i = 0; i < rows.size() && i < 20; ++i)
        out += "\n  " + join(rows[i]);
    if (rows.size() > 20)
        out += "\n  ... and " + std::to_string(rows.size() - 20) + " more";
    return out;
}

// Rows grouped by their first column (an op id).
std::map<std::string, Rows> byFirstColumn(Rows rows)
{
    std::map<std::string, Rows> out;
    for (auto& row : rows)
        out[row[0]].push_back(std::move(row));
    return out;
}

// The group of a key, empty when there is none (without inserting one).
const Rows& group(const std::map<std::string, Rows>& groups, const std::string& key)
{
    static const Rows none;
    auto it = groups.find(key);
    return it == groups.end() ? none : it->second;
}

bool isLeaseReason(const std::string& reason)
{
    return reason.rfind("LEASE_", 0) == 0;
}

} // namespace

class TestStress final : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        m_db = std::make_unique<TestDatabase>();
        for (const std::string& env : kEnvironments) {
            RunResult r = relctl(*m_db, {"env", "add", env, "--default-ttl", "1s", "--max-ttl", "10s"});
            QVERIFY2(r.exitCode == 0, ("env add " + env + ": " + r.err).c_str());
        }

        // RANDOM in each worker is seeded from here; RELCTL_STRESS_SEED replays
        // a run's choices (not its timing, which is the point of the test).
        bool fixed = false;
        const int seed = qEnvironmentVariableIntValue("RELCTL_STRESS_SEED", &fixed);
        m_seed = fixed ? seed : static_cast<int>(QRandomGenerator::global()->bounded(30000));
        qInfo("seed %d (set RELCTL_STRESS_SEED to reuse it)", m_seed);

        QElapsedTimer timer;
        timer.start();
        std::vector<std::unique_ptr<QProcess>> workers;
        for (int w = 0; w < kWorkers; ++w) {
            Args args{std::to_string(w), std::to_string(kRounds), std::to_string(m_seed + w)};
            args.insert(args.end(), kEnvironments.begin(), kEnvironments.end());
            workers.push_back(startScript(*m_db, "stress-worker.sh", args));
        }
        for (int w = 0; w < kWorkers; ++w) {
            const int left = std::max(1000, kWorkloadTimeoutMs - static_cast<int>(timer.elapsed()));
            RunResult r = finish(*workers[static_cast<std::size_t>(w)], left);
            QVERIFY2(r.exitCode == 0,
                     ("worker " + std::to_string(w) + " exited " + std::to_string(r.exitCode) + ": " + r.err)
                         .c_str());
            // A worker complains on stderr only about exit codes the protocol
            // does not allow; those are asserted below with the line at fault,
            // this shows relctl's own message.
            if (!r.err.empty())
                qWarning("worker %d stderr: %s", w, r.err.c_str());
            parse(r.out);
        }
        m_elapsedMs = timer.elapsed();
        if (QTest::currentTestFailed())
            return; // parse() already said which line was malformed

        for (const Record& r : m_records) {
            if (r.kind == "publish")
                m_publishes.push_back(r);
            else if (r.kind == "acquire")
                m_acquires.push_back(r);
            else if (r.kind == "release")
                m_releases.push_back(r);
            else if (r.kind == "round")
                m_rounds.push_back(r);
        }
        report();
    }

    void cleanupTestCase() { m_db.reset(); }

    // Every relctl call a worker made ended in an exit code the protocol
    // allows for it, and every worker played all its rounds.
    void workersSawOnlyProtocolOutcomes()
    {
        QCOMPARE(static_cast<int>(m_rounds.size()), kWorkers * kRounds);
        for (const Record& r : m_acquires)
            QVERIFY2(r.rc() == 0 || r.rc() == 3 || r.rc() == 4, ("acquire exit code: " + r.text).c_str());
        for (const Record& r : m_publishes)
            QVERIFY2(r.rc() == 0 || r.rc() == 4 || r.rc() == 5, ("publish exit code: " + r.text).c_str());
        for (const Record& r : m_releases)
            QVERIFY2(r.rc() == 0, ("release of the worker's own lease failed: " + r.text).c_str());
        for (const Record& r : m_rounds)
            QVERIFY2(r.get("result") != "error",
                     ("round went wrong (see the worker's stderr): " + r.text).c_str());
    }

    // (1) Per environment, the manifest history ordered by id has strictly
    // increasing tokens and strictly increasing generations.
    void historyIsMonotonic()
    {
        const auto rows =
            m_db->rows("SELECT env, id, token, generation, op_id FROM relctl.manifests ORDER BY env, id");
        for (std::size_t i = 1; i < rows.size(); ++i) {
            const auto& prev = rows[i - 1];
            const auto& cur = rows[i];
            if (cur[0] != prev[0])
                continue;
            const std::string where = "on " + cur[0] + ", manifest " + join(cur) + " follows " + join(prev) +
                                      " (env | id | token | generation | op_id)";
            QVERIFY2(std::stoll(cur[2]) > std::stoll(prev[2]), ("token did not increase " + where).c_str());
            QVERIFY2(std::stoll(cur[3]) > std::stoll(prev[3]),
                     ("generation did not increase " + where).c_str());
        }
    }

    // (2) Every acknowledged publish is in the history exactly once, under
    // the worker's own lease, and the history holds nothing else.
    void acknowledgedPublishesAreExactlyTheHistory()
    {
        const auto byOp =
            byFirstColumn(m_db->rows("SELECT op_id, env, token, job, id FROM relctl.manifests ORDER BY id"));

        long long acknowledged = 0;
        std::set<std::string> acknowledgedOps;
        for (const Record& r : m_publishes) {
            const std::string op = r.get("op");
            const Rows& found = group(byOp, op);
            if (r.rc() != 0) {
                QVERIFY2(found.empty(),
                         ("refused publish is in the history: " + r.text + describe(found)).c_str());
                continue;
            }
            ++acknowledged;
            acknowledgedOps.insert(op);
            QVERIFY2(found.size() == 1, ("acknowledged publish is in the history " +
                                         std::to_string(found.size()) + " times: " + r.text + describe(found))
                                            .c_str());
            const auto& m = found.front();
            const std::string job = "stress-w" + r.get("worker") + "-r" + r.get("round");
            QVERIFY2(m[1] == r.get("env") && m[2] == r.get("token") && m[3] == job,
                     ("manifest is not the publishing worker's (env | token | job " + job + "): " + r.text +
                      " vs " + join(m))
                         .c_str());
        }
        for (const auto& [op, found] : byOp)
            QVERIFY2(acknowledgedOps.count(op) == 1,
                     ("manifest no worker saw acknowledged: " + op + describe(found)).c_str());
        QCOMPARE(m_db->count("SELECT count(*) FROM relctl.manifests"), acknowledged);
    }

    // (3) Every publish left exactly one publish event under its op id:
    // accepted for exit 0, rejected with STALE_GENERATION for exit 4 and with
    // a LEASE_* reason for exit 5 (and the reason the worker was told).
    void everyPublishHasItsEvent()
    {
        const auto byOp =
            byFirstColumn(m_db->rows("SELECT op_id, outcome, coalesce(reason, '-'), env, token, id "
                                     "FROM relctl.events WHERE operation = 'publish' ORDER BY id"));
        for (const Record& r : m_publishes) {
            const Rows& found = group(byOp, r.get("op"));
            QVERIFY2(found.size() == 1, ("publish has " + std::to_string(found.size()) +
                                         " publish events (op_id | outcome | reason | env | token | id): " +
                                         r.text + describe(found))
                                            .c_str());
            const std::string outcome = found.front()[1];
            const std::string reason = found.front()[2];
            const std::string what = r.text + " vs event " + join(found.front());
            switch (r.rc()) {
            case 0:
                QVERIFY2(outcome == "accepted",
                         ("acknowledged publish has no accepted event: " + what).c_str());
                break;
            case 4:
                QVERIFY2(outcome == "rejected" && reason == "STALE_GENERATION",
                         ("exit 4 without a STALE_GENERATION event: " + what).c_str());
                break;
            case 5:
                QVERIFY2(outcome == "rejected" && isLeaseReason(reason),
                         ("exit 5 without a LEASE_* event: " + what).c_str());
                break;
            default:
                QFAIL(("publish exit code outside 0, 4, 5: " + r.text).c_str());
            }
            if (r.rc() != 0)
                QVERIFY2(r.get("reason") == reason, ("the worker was told another reason: " + what).c_str());
        }
        QCOMPARE(m_db->count("SELECT count(*) FROM relctl.events WHERE operation = 'publish'"),
                 static_cast<long long>(m_publishes.size()));
    }

    // Stale candidates are refused at acquire already (not only at publish),
    // and each such refusal is recorded once, whatever the busy retries before.
    void staleAcquiresAreRecorded()
    {
        const auto byOp =
            byFirstColumn(m_db->rows("SELECT op_id, outcome, coalesce(reason, '-'), env, generation, id "
                                     "FROM relctl.events WHERE operation = 'acquire' ORDER BY id"));
        for (const Record& r : m_acquires) {
            if (r.rc() != 4)
                continue;
            const Rows& found = group(byOp, r.get("op"));
            QVERIFY2(found.size() == 1 && found.front()[1] == "rejected" &&
                         found.front()[2] == "STALE_GENERATION" && found.front()[3] == r.get("env") &&
                         found.front()[4] == r.get("gen"),
                     ("stale acquire without exactly one STALE_GENERATION event "
                      "(op_id | outcome | reason | env | generation | id): " +
                      r.text + describe(found))
                         .c_str());
        }
    }

    // (4) Fencing tokens per environment are exactly 1..last_token, each
    // granted by exactly one accepted acquire, which a worker saw succeed.
    void tokensAreContiguousAndUnique()
    {
        for (const std::string& env : kEnvironments) {
            const long long last =
                m_db->count("SELECT last_token FROM relctl.environments WHERE name = " + sqlString(env));
            const auto tokens = m_db->rows("SELECT token FROM relctl.leases WHERE env = " + sqlString(env) +
                                           " ORDER BY token");
            QVERIFY2(static_cast<long long>(tokens.size()) == last,
                     (env + ": " + std::to_string(tokens.size()) + " leases but last_token " +
                      std::to_string(last))
                         .c_str());
            for (std::size_t i = 0; i < tokens.size(); ++i)
                QVERIFY2(std::stoll(tokens[i][0]) == static_cast<long long>(i + 1),
                         (env + ": lease #" + std::to_string(i + 1) + " has token " + tokens[i][0]).c_str());
        }

        const auto duplicated = m_db->rows(
            "SELECT env, token, count(*), string_agg(op_id, ',') FROM relctl.events "
            "WHERE operation = 'acquire' AND outcome = 'accepted' GROUP BY env, token HAVING count(*) > 1");
        QVERIFY2(duplicated.empty(),
                 ("tokens granted by several accepted acquires (env | token | count | op_ids):" +
                  describe(duplicated))
                     .c_str());
        const auto unmatched = m_db->rows(
            "SELECT e.id, e.env, e.token, e.op_id, l.op_id FROM relctl.events e "
            "LEFT JOIN relctl.leases l ON l.env = e.env AND l.token = e.token "
            "WHERE e.operation = 'acquire' AND e.outcome = 'accepted' AND l.op_id IS DISTINCT FROM e.op_id");
        QVERIFY2(unmatched.empty(),
                 ("accepted acquires that are not their lease (id | env | token | op_id | lease op_id):" +
                  describe(unmatched))
                     .c_str());

        long long granted = 0;
        for (const Record& r : m_acquires)
            granted += r.rc() == 0 ? 1 : 0;
        QCOMPARE(m_db->count("SELECT count(*) FROM relctl.leases"), granted);
        QCOMPARE(
            m_db->count(
                "SELECT count(*) FROM relctl.events WHERE operation = 'acquire' AND outcome = 'accepted'"),
            granted);
    }

    // (5) Mutual exclusion: ordered by token, each lease was acquired no
    // earlier than the previous one stopped being live (it expired or was
    // released, whichever came first).
    void leasesNeverOverlap()
    {
        const auto overlapping = m_db->rows(R"(
            SELECT env, token, acquired_at, prev_token, prev_live_until FROM (
                SELECT env, token, acquired_at,
                       lag(token) OVER w AS prev_token,
                       lag(least(expires_at, coalesce(ended_at, expires_at))) OVER w AS prev_live_until
                FROM relctl.leases
                WINDOW w AS (PARTITION BY env ORDER BY token)) s
            WHERE acquired_at < prev_live_until
            ORDER BY env, token)");
        QVERIFY2(overlapping.empty(), ("leases acquired while the previous one was live "
                                       "(env | token | acquired_at | previous token | previous live until):" +
                                       describe(overlapping))
                                          .c_str());
    }

    // (5b) Fencing: every manifest was written while its lease was the
    // environment's live lease: after its grant, before it expired or was
    // released, and before any newer token was granted.
    void manifestsWereWrittenUnderALiveLease()
    {
        const auto outside = m_db->rows(R"(
            SELECT m.env, m.id, m.token, m.published_at, l.acquired_at, l.expires_at, l.ended_at, newer.token
            FROM relctl.manifests m
            JOIN relctl.leases l ON l.env = m.env AND l.token = m.token
            LEFT JOIN LATERAL (SELECT min(n.token) AS token FROM relctl.leases n
                               WHERE n.env = m.env AND n.token > m.token AND n.acquired_at <= m.published_at) newer
                   ON true
            WHERE NOT (m.published_at >= l.acquired_at AND m.published_at < l.expires_at
                       AND (l.ended_at IS NULL OR m.published_at < l.ended_at)
                       AND newer.token IS NULL)
            ORDER BY m.env, m.id)");
        QVERIFY2(outside.empty(),
                 ("manifests written outside their lease (env | id | token | published_at | acquired_at | "
                  "expires_at | ended_at | newer token granted before):" +
                  describe(outside))
                     .c_str());
    }

    // (6) The current pointer is the history's highest generation.
    void currentIsTheNewestGeneration()
    {
        const auto rows = m_db->rows(R"(
            SELECT e.name, coalesce(e.current_manifest_id::text, 'none'),
                   coalesce((SELECT m.id::text FROM relctl.manifests m WHERE m.env = e.name
                             ORDER BY m.generation DESC LIMIT 1), 'none')
            FROM relctl.environments e ORDER BY e.name)");
        QCOMPARE(rows.size(), kEnvironments.size());
        for (const auto& row : rows)
            QVERIFY2(row[1] == row[2], (row[0] + ": current manifest " + row[1] +
                                        " is not the highest generation's, manifest " + row[2])
                                           .c_str());
    }

    // (6b) The history checker agrees with the checks above: `relctl verify`
    // finds every invariant intact on what the run recorded.
    void theHistoryVerifiesClean()
    {
        const RunResult r = relctl(*m_db, {"verify"});
        QVERIFY2(r.exitCode == 0, ("exit " + std::to_string(r.exitCode) + "\n" + r.out + r.err).c_str());
    }

    // (7) The run exercised both sides of the protocol; otherwise the checks
    // above would prove nothing.
    void workloadWasNotVacuous()
    {
        QVERIFY2(static_cast<int>(m_rounds.size()) >= kWorkers * kRounds, "fewer rounds than planned");
        QVERIFY2(m_accepted > 0, "no publish was accepted");
        QVERIFY2(m_stale + m_lost > 0, "no publish was refused");
        QVERIFY2(m_db->count("SELECT count(*) FROM relctl.leases") >
                     static_cast<long long>(kEnvironments.size()),
                 "too few leases to compare successive leases");
        // Wanted, but not guaranteed by any timing: say so rather than fail.
        if (m_stale == 0)
            qWarning("no publish was refused as STALE_GENERATION in this run");
        if (m_lost == 0)
            qWarning("no publish was refused for a lost lease in this run");
    }

private:
    void parse(const std::string& out)
    {
        std::istringstream lines(out);
        std::string line;
        while (std::getline(lines, line)) {
            if (line.empty())
                continue;
            Record r;
            r.text = line;
            std::istringstream words(line);
            words >> r.kind;
            std::string word;
            while (words >> word) {
                const auto eq = word.find('=');
                QVERIFY2(eq != std::string::npos, ("malformed worker line: " + line).c_str());
                r.fields[word.substr(0, eq)] = word.substr(eq + 1);
            }
            QVERIFY2(r.kind == "round" || r.fields.count("rc") == 1,
                     ("worker line without rc: " + line).c_str());
            m_records.push_back(std::move(r));
        }
    }

    void report()
    {
        std::map<std::string, int> reasons;
        for (const Record& r : m_publishes) {
            if (r.rc() == 0)
                ++m_accepted;
            else if (r.rc() == 4)
                ++m_stale;
            else if (r.rc() == 5)
                ++m_lost;
            if (r.rc() != 0)
                ++reasons[r.get("reason")];
        }
        std::map<std::string, int> results;
        for (const Record& r : m_rounds)
            ++results[r.get("result")];
        int busy = 0;
        for (const Record& r : m_acquires)
            busy += r.rc() == 3 ? 1 : 0;

        std::string summary;
        for (const auto& [result, n] : results)
            summary += " " + result + "=" + std::to_string(n);
        std::string refusals;
        for (const auto& [reason, n] : reasons)
            refusals += " " + reason + "=" + std::to_string(n);
        qInfo("%d workers x %d rounds in %lld ms; rounds:%s", kWorkers, kRounds, m_elapsedMs,
              summary.c_str());
        qInfo("acquire attempts %zu (busy %d); publishes %zu: accepted %d, refused %d (stale %d, lease lost "
              "%d):%s",
              m_acquires.size(), busy, m_publishes.size(), m_accepted, m_stale + m_lost, m_stale, m_lost,
              refusals.c_str());
    }

    std::unique_ptr<TestDatabase> m_db;
    int m_seed = 0;
    long long m_elapsedMs = 0;
    std::vector<Record> m_records;
    std::vector<Record> m_acquires;
    std::vector<Record> m_publishes;
    std::vector<Record> m_releases;
    std::vector<Record> m_rounds;
    int m_accepted = 0;
    int m_stale = 0;
    int m_lost = 0;
};

QTEST_GUILESS_MAIN(TestStress)
#include "test_stress.moc"
