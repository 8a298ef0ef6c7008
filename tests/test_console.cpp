// The release console's queries (relctl::ConsoleQueries) against a real
// PostgreSQL: the data is made by separate relctl processes, as CI jobs would
// make it, and read back through core the way the console reads it. Volume is
// seeded with one INSERT, since the trail's triggers forbid only changes.

// The short name relctl() would collide with namespace relctl.
#define RELCTL_TEST_NO_SHORT_NAME
#include "relctl/auditexport.h"
#include "relctl/console.h"
#include "relctl/database.h"
#include "relctlprocess.h"
#include "testdatabase.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <pqxx/pqxx>
#include <set>
#include <sstream>
#include <thread>

using namespace relctl;

namespace {

// The console's functions count time in epoch milliseconds; the oracles here too.
Timestamp ms(std::int64_t n)
{
    return Timestamp::fromMillis(n);
}

} // namespace

// Requests and filters name only the fields a case sets, with designated
// initializers; the rest keep their defaults, which is the point.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace {

RunResult cli(const TestDatabase& db, const Args& args)
{
    return runRelctl(db, args);
}

std::string acquire(const TestDatabase& db, const std::string& env, const std::string& job, int generation,
                    const std::string& ttl = "30s")
{
    RunResult r =
        cli(db, {"lease", "acquire", "--env", env, "--job", job, "--release",
                 "r" + std::to_string(generation), "--generation", std::to_string(generation), "--ttl", ttl});
    if (r.exitCode != 0)
        qFatal("acquire failed (%d): %s", r.exitCode, r.err.c_str());
    return r.line();
}

std::unique_ptr<QProcess> waiter(const TestDatabase& db, const std::string& env, const std::string& job,
                                 int generation)
{
    return startRelctl(db, {"lease", "acquire", "--env", env, "--job", job, "--release",
                            "r" + std::to_string(generation), "--generation", std::to_string(generation),
                            "--wait", "30s", "--op-id", job + "-acquire"});
}

void stop(QProcess& p)
{
    p.kill();
    p.waitForFinished();
}

const EnvironmentRow& row(const std::vector<EnvironmentRow>& rows, const std::string& name)
{
    auto it = std::find_if(rows.begin(), rows.end(), [&](const EnvironmentRow& r) { return r.name == name; });
    if (it == rows.end())
        qFatal("no environment %s", name.c_str());
    return *it;
}

// Polls until the environment's row satisfies `done` (a waiter queues, a
// supersession request opens), failing the test after 20 s.
template <typename F> EnvironmentRow awaitRow(ConsoleQueries& q, const std::string& env, F done)
{
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < 20000) {
        EnvironmentRow r = row(q.environments(), env);
        if (done(r))
            return r;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    qFatal("environment %s never reached the awaited state", env.c_str());
}

// n events over five environments, 10 ms apart, one in 37 refused with one
// of four reasons; ids and times increase together.
std::string insertEvents(long long n)
{
    return "INSERT INTO relctl.events (at, env, operation, outcome, reason, job, release, generation, token, "
           "op_id, host, pid, job_url) "
           "SELECT timestamptz '2024-01-01 00:00Z' + i * interval '10 milliseconds', "
           "(ARRAY['test', 'staging', 'prod', 'qa', 'perf'])[1 + i % 5], "
           "(ARRAY['acquire', 'renew', 'renew', 'renew', 'release', 'publish'])[1 + i % 6], "
           "CASE WHEN i % 37 = 0 THEN 'rejected' ELSE 'accepted' END, "
           "CASE WHEN i % 37 = 0 THEN (ARRAY['STALE_GENERATION', 'LEASE_EXPIRED', 'BAD_LEASE_ID', "
           "'DISPATCH_FROZEN'])[1 + (i / 37) % 4] END, "
           "'job-' || (i / 10), 'v' || (i / 100), i / 100 + 1, i / 10 + 1, 'op-' || i, 'runner-' || (i % "
           "13), "
           "1000 + i % 50000, 'https://ci.example/jobs/' || (i / 10) "
           "FROM generate_series(1, " +
           std::to_string(n) + ") AS i";
}

void seedEvents(const TestDatabase& db, long long n)
{
    db.exec(insertEvents(n));
    db.exec("ANALYZE relctl.events");
}

std::vector<std::int64_t> ids(const std::vector<Event>& events)
{
    std::vector<std::int64_t> out;
    out.reserve(events.size());
    for (const Event& e : events)
        out.push_back(e.id);
    return out;
}

std::vector<std::int64_t> idsWhere(const TestDatabase& db, const std::string& predicate)
{
    std::vector<std::int64_t> out;
    for (const auto& r : db.rows("SELECT id FROM relctl.events WHERE " + predicate + " ORDER BY id DESC"))
        out.push_back(std::stoll(r[0]));
    return out;
}

// Every page of a filter under a sort, following `more` and the cursor;
// `between` runs after each page (to change the trail while it is walked).
std::vector<Event> allPages(ConsoleQueries& q, AuditFilter filter, int limit, int* pages = nullptr,
                            AuditSort sort = {}, const std::function<void()>& between = {})
{
    std::vector<Event> all;
    AuditPageRequest request{.filter = std::move(filter), .sort = sort, .limit = limit};
    for (int n = 1;; ++n) {
        AuditPage page = q.auditPage(request);
        all.insert(all.end(), page.events.begin(), page.events.end());
        if (pages)
            *pages = n;
        if (!page.more || page.events.empty())
            return all;
        request.after = auditCursorAfter(page.events.back(), sort.column);
        if (between)
            between();
    }
}

// Events with NULL in every nullable sort column, in some mix, so that sorts
// meet NULL keys at page boundaries.
std::string insertNullKeys(int n)
{
    return "INSERT INTO relctl.events (env, operation, outcome, reason, job, release, generation, token, "
           "host, "
           "actor) SELECT CASE WHEN i % 3 = 0 THEN NULL ELSE 'prod' END, 'env-set', "
           "CASE WHEN i % 5 = 0 THEN 'rejected' ELSE 'accepted' END, "
           "CASE WHEN i % 5 = 0 THEN 'NO_LEASE' END, CASE WHEN i % 2 = 0 THEN NULL ELSE 'job-x' END, "
           "CASE WHEN i % 4 = 0 THEN NULL ELSE 'v-x' END, CASE WHEN i % 3 = 1 THEN NULL ELSE i % 7 END, "
           "CASE WHEN i % 2 = 1 THEN NULL ELSE i % 4 END, CASE WHEN i % 6 = 0 THEN NULL ELSE 'h' END, "
           "CASE WHEN i % 4 = 0 THEN 'alice' WHEN i % 4 = 1 THEN 'Bob' END "
           "FROM generate_series(1, " +
           std::to_string(n) + ") AS i";
}

void seedNullKeys(const TestDatabase& db, int n)
{
    db.exec(insertNullKeys(n));
}

// The ids a direct query orders the same way: the reference for every sort.
std::vector<std::int64_t> idsOrdered(const TestDatabase& db, const std::string& predicate,
                                     const std::string& column, bool descending)
{
    const std::string dir = descending ? " DESC" : " ASC";
    const std::string order = column == "id" ? "id" + dir : column + dir + ", id" + dir;
    std::vector<std::int64_t> out;
    for (const auto& r : db.rows("SELECT id FROM relctl.events WHERE " + predicate + " ORDER BY " + order))
        out.push_back(std::stoll(r[0]));
    return out;
}

const std::pair<AuditSort::Column, const char*> sortColumns[] = {
    {AuditSort::Column::Time, "id"},
    {AuditSort::Column::Environment, "env"},
    {AuditSort::Column::Operation, "operation"},
    {AuditSort::Column::Outcome, "outcome"},
    {AuditSort::Column::Reason, "reason"},
    {AuditSort::Column::Job, "job"},
    {AuditSort::Column::Release, "release"},
    {AuditSort::Column::Generation, "generation"},
    {AuditSort::Column::Token, "token"},
    {AuditSort::Column::Host, "host"},
    {AuditSort::Column::Actor, "actor"},
};

template <typename F> ExitCode errorOf(F f, std::string* message = nullptr)
{
    try {
        f();
    } catch (const Error& e) {
        if (message)
            *message = e.what();
        return e.code();
    }
    return ExitCode::Ok;
}

// RFC 4180 records, parsed strictly: quoted fields may hold commas, quotes
// (doubled) and line breaks; every record ends with CRLF. Empty on a
// malformed document.
std::vector<std::vector<std::string>> parseCsv(const std::string& text)
{
    std::vector<std::vector<std::string>> records;
    std::vector<std::string> record;
    std::string field;
    std::size_t i = 0;
    while (i < text.size()) {
        if (text[i] == '"') {
            for (++i;; ++i) {
                if (i >= text.size())
                    return {};
                if (text[i] == '"') {
                    if (i + 1 < text.size() && text[i + 1] == '"') {
                        field += '"';
                        ++i;
                        continue;
                    }
                    ++i;
                    break;
                }
                field += text[i];
            }
        } else {
            while (i < text.size() && text[i] != ',' && text[i] != '\r' && text[i] != '\n' && text[i] != '"')
                field += text[i++];
        }
        if (i < text.size() && text[i] == ',') {
            record.push_back(std::move(field));
            field.clear();
            ++i;
        } else if (text.compare(i, 2, "\r\n") == 0) {
            record.push_back(std::move(field));
            field.clear();
            records.push_back(std::move(record));
            record.clear();
            i += 2;
        } else {
            return {}; // a bare CR, LF or quote
        }
    }
    if (!record.empty() || !field.empty())
        return {}; // no CRLF after the last record
    return records;
}

std::string readFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

Event sampleEvent()
{
    Event e;
    e.id = 20;
    e.at = ms(1'700'000'000'020);
    e.env = "prod";
    e.operation = "publish";
    e.outcome = "rejected";
    e.reason = "stale_generation";
    e.job = "deploy-20";
    e.release = "1.4.3";
    e.generation = 6;
    e.token = 9'007'199'254'740'993; // above 2^53: must not pass through a double
    e.currentToken = 12;
    e.currentGeneration = 7;
    e.currentRelease = "1.4.2";
    e.opId = "0b6f7c1e-2f4e-4c1e-9d55-1d2b0c7c9a10";
    e.host = "ci-runner-3";
    e.pid = 4242;
    e.jobUrl = "https://ci.example/jobs/20";
    e.actor = "alice";
    e.dbUser = "relctl_manager";
    e.clientAddr = "10.0.0.7";
    e.detail = "{\"reason\":\"stuck, \\\"really\\\"\"}"; // a comma and quotes: CSV must quote it
    return e;
}

} // namespace

class TestConsole final : public QObject
{
    Q_OBJECT

private slots:
    void environmentsShowManifestLeaseQueueAndFreeze()
    {
        TestDatabase db;
        for (const char* env : {"test", "prod", "staging"})
            QCOMPARE(cli(db, {"env", "add", env}).exitCode, 0);
        Database conn(db.dsn());
        ConsoleQueries q(conn);
        const std::string h1 = acquire(db, "prod", "job-1", 1);
        QCOMPARE(cli(db, {"publish", "--lease", h1}).exitCode, 0);
        auto queued = waiter(db, "prod", "job-2", 2);
        awaitRow(q, "prod", [](const EnvironmentRow& r) { return r.queueLength == 1; });
        QCOMPARE(cli(db, {"freeze", "--env", "prod", "--by", "alice", "--reason", "incident 42"}).exitCode,
                 0);
        // Under approval, two waiters below a holder open one supersession request.
        QCOMPARE(cli(db, {"env", "set", "staging", "--policy", "newest", "--supersede", "approval"}).exitCode,
                 0);
        acquire(db, "staging", "holder", 1);
        auto low = waiter(db, "staging", "low", 2);
        auto high = waiter(db, "staging", "high", 3);
        awaitRow(q, "staging", [](const EnvironmentRow& r) { return r.pendingSupersessions == 1; });

        const std::vector<EnvironmentRow> rows = q.environments();
        QCOMPARE(rows.size(), std::size_t(3));
        QCOMPARE(rows[0].name, std::string("prod")); // lanes and rows in name order
        QCOMPARE(rows[1].name, std::string("staging"));
        QCOMPARE(rows[2].name, std::string("test"));
        const EnvironmentRow& prod = rows[0];
        QCOMPARE(prod.policy, std::string("ordered"));
        QCOMPARE(prod.supersede, std::string("auto"));
        QCOMPARE(prod.serialization, std::string("enforced"));
        QCOMPARE(prod.currentRelease.value_or("-"), std::string("r1"));
        QCOMPARE(prod.currentGeneration.value_or(0), std::int64_t(1));
        QCOMPARE(prod.publishedBy.value_or("-"), std::string("job-1"));
        QVERIFY(prod.publishedAt && *prod.publishedAt <= prod.serverNow &&
                prod.publishedAt->millis() > prod.serverNow.millis() - 60000);
        QCOMPARE(prod.holderJob.value_or("-"), std::string("job-1"));
        QCOMPARE(prod.holderRelease.value_or("-"), std::string("r1"));
        QCOMPARE(prod.holderToken.value_or(0), std::int64_t(1));
        QVERIFY(prod.leaseExpiresAt);
        QVERIFY(*prod.leaseExpiresAt > prod.serverNow &&
                prod.leaseExpiresAt->millis() <= prod.serverNow.millis() + 30000);
        QCOMPARE(prod.queueLength, std::int64_t(1));
        QCOMPARE(prod.pendingSupersessions, std::int64_t(0));
        QVERIFY(prod.frozen);
        QCOMPARE(prod.frozenBy.value_or("-"), std::string("alice"));
        QCOMPARE(prod.frozenReason.value_or("-"), std::string("incident 42"));
        // The server's clock, not the test's: the same reading the database used.
        QVERIFY(std::abs(prod.serverNow.millis() -
                         std::stoll(db.scalar("SELECT relctl.epoch_ms(clock_timestamp())"))) < 10000);

        const EnvironmentRow& staging = rows[1];
        QCOMPARE(staging.policy, std::string("newest"));
        QCOMPARE(staging.supersede, std::string("approval"));
        QCOMPARE(staging.queueLength, std::int64_t(2));
        QCOMPARE(staging.pendingSupersessions, std::int64_t(1));
        QVERIFY(!staging.frozen);
        // The queue in the order it is served: until the request is approved,
        // the lower generation goes first; the request names the higher one
        // the winner and the lower one as what it would skip.
        QCOMPARE(staging.queue.size(), std::size_t(2));
        const QueuedCandidate& first = staging.queue[0];
        const QueuedCandidate& second = staging.queue[1];
        QCOMPARE(first.position, std::int64_t(1));
        QCOMPARE(first.job, std::string("low"));
        QCOMPARE(first.generation, std::int64_t(2));
        QCOMPARE(second.position, std::int64_t(2));
        QCOMPARE(second.job, std::string("high"));
        QCOMPARE(second.release, std::string("r3"));
        QVERIFY(first.queuedAt <= staging.serverNow && second.queuedAt <= staging.serverNow);
        const std::string request =
            db.scalar("SELECT id FROM relctl.supersessions WHERE env = 'staging' AND state = 'pending'");
        QCOMPARE(first.skippedBy.value_or(0), std::stoll(request));
        QVERIFY(!first.wins);
        QCOMPARE(second.wins.value_or(0), std::stoll(request));
        QVERIFY(!second.skippedBy);
        QCOMPARE(staging.holderJob.value_or("-"), std::string("holder"));
        QCOMPARE(staging.holderGeneration.value_or(0), std::int64_t(1));
        QVERIFY(staging.holderAcquiredAt && *staging.holderAcquiredAt <= staging.serverNow);
        QCOMPARE(prod.queue.size(), std::size_t(1));
        QCOMPARE(prod.queue[0].job, std::string("job-2"));
        QVERIFY(prod.frozenAt && *prod.frozenAt <= prod.serverNow);
        // An operator's event carries the environment as it stood, release
        // and generation included, like every other event.
        QCOMPARE(db.scalar("SELECT concat_ws('/', current_release, current_generation, current_token) "
                           "FROM relctl.events WHERE operation = 'freeze' AND env = 'prod'"),
                 std::string("r1/1/1"));

        const EnvironmentRow& test = rows[2];
        QVERIFY(!test.currentRelease && !test.currentGeneration && !test.publishedBy && !test.publishedAt);
        QVERIFY(!test.holderJob && !test.holderToken && !test.leaseExpiresAt);
        QCOMPARE(test.queueLength, std::int64_t(0));
        QVERIFY(test.queue.empty());
        QCOMPARE(test.pendingPromotions, std::int64_t(0));
        QVERIFY(!test.frozen && !test.frozenBy && !test.frozenReason && !test.frozenAt);

        // Attention on a read of every environment (where the server runs the
        // definition only on its suspects) is what the definition says of
        // each, and what a read of the one environment by name says (where it
        // runs on that one). "expiring" moves with the clock between reads.
        const auto reasons = [](const std::vector<AttentionItem>& items) {
            std::string out;
            for (const AttentionItem& a : items)
                if (a.reason != "expiring")
                    out += (out.empty() ? "" : ",") + a.reason;
            return out;
        };
        for (const EnvironmentRow& r : rows) {
            const std::vector<EnvironmentRow> named = q.environments(std::vector<std::string>{r.name});
            QCOMPARE(named.size(), std::size_t(1));
            QCOMPARE(reasons(named[0].attention), reasons(r.attention));
            QCOMPARE(db.scalar("SELECT coalesce(string_agg(a->>'reason', ',' ORDER BY n), '') "
                               "FROM relctl.environments e, "
                               "jsonb_array_elements(relctl.environment_attention(e, clock_timestamp())) "
                               "WITH ORDINALITY AS x(a, n) WHERE e.name = '" +
                               r.name + "' AND a->>'reason' <> 'expiring'"),
                     reasons(r.attention));
        }
        QCOMPARE(reasons(prod.attention), std::string("frozen,waiting"));
        QCOMPARE(reasons(rows[1].attention), std::string("decision,waiting"));
        QCOMPARE(reasons(rows[2].attention), std::string());
        // Names that are not environments are absent, whatever else is asked.
        QCOMPARE(q.environments(std::vector<std::string>{"nowhere", "test", ""}).size(), std::size_t(1));
        QVERIFY(q.environments(std::vector<std::string>{}).empty());

        // A killed waiter's session ends and it stops counting, before any write notices.
        stop(*queued);
        awaitRow(q, "prod", [](const EnvironmentRow& r) { return r.queueLength == 0; });
        stop(*low);
        stop(*high);
    }

    void auditFiltersEachNarrowTheTrail()
    {
        TestDatabase db;
        cli(db, {"env", "add", "prod"});
        cli(db, {"env", "add", "staging"});
        const std::string h1 = acquire(db, "prod", "deploy_1", 1);
        QCOMPARE(cli(db, {"--job-url", "https://ci.example/Pipelines/77", "publish", "--lease", h1}).exitCode,
                 0);
        cli(db, {"lease", "release", "--lease", h1});
        QCOMPARE(cli(db, {"lease", "acquire", "--env", "prod", "--job", "deployx1", "--release", "r1",
                          "--generation", "1"})
                     .exitCode,
                 4); // not newer than the published generation: refused at once
        const std::string s1 = acquire(db, "staging", "stage-9", 9);
        QCOMPARE(cli(db, {"freeze", "--env", "staging", "--by", "Alice", "--reason", "audit"}).exitCode, 0);
        QCOMPARE(cli(db, {"publish", "--lease", s1}).exitCode, 6);
        QCOMPARE(cli(db, {"unfreeze", "--env", "staging", "--by", "bob"}).exitCode, 0);
        const long long total = db.count("SELECT count(*) FROM relctl.events");
        QVERIFY(total >= 10);

        Database conn(db.dsn());
        ConsoleQueries q(conn);
        const auto check = [&](const char* what, const AuditFilter& filter, const std::string& predicate) {
            const std::vector<std::int64_t> expected = idsWhere(db, predicate);
            const std::vector<std::int64_t> got = ids(allPages(q, filter, 5000));
            QVERIFY2(!expected.empty(), what);
            QVERIFY2(expected.size() < std::size_t(total) || predicate == "true", what); // it narrows
            QVERIFY2(got == expected, what);
        };
        check("none", {}, "true");
        check("env", {.env = "staging"}, "env = 'staging'");
        check("job", {.job = "deploy_1"}, "job = 'deploy_1'");
        // The job filter is a case-insensitive substring: part of a name finds every job with it.
        check("job substring", {.job = "DEPLOY"}, "strpos(lower(job), 'deploy') > 0");
        check("refused only", {.outcome = "rejected"}, "outcome = 'rejected'");
        check("refused on staging", {.env = "staging", .outcome = "rejected"},
              "env = 'staging' AND outcome = 'rejected'");
        QCOMPARE(errorOf([&] { q.auditPage({.filter = {.outcome = "maybe"}}); }), ExitCode::Usage);
        check("operation", {.operation = "publish"}, "operation = 'publish'");
        check("reason", {.reason = "STALE_GENERATION"}, "reason = 'STALE_GENERATION'");
        check("env and reason", {.env = "staging", .reason = "DISPATCH_FROZEN"},
              "env = 'staging' AND reason = 'DISPATCH_FROZEN'");
        // Free text: case-insensitive, over job, release, op id, host, reason, actor, job url,
        // login and the detail's values (bob's unfreeze names the freeze by Alice it lifted).
        check("text actor", {.text = "ALICE"}, "actor = 'Alice' OR detail->>'frozen_by' = 'Alice'");
        check("text detail", {.text = "AUDIT"},
              "detail->>'reason' = 'audit' OR detail->>'frozen_reason' = 'audit'");
        check("text url", {.text = "pipelines/77"}, "job_url LIKE '%Pipelines/77'");
        check("text reason", {.text = "frozen"}, "reason = 'DISPATCH_FROZEN'");
        check("text job", {.text = "stage-"}, "job = 'stage-9'");
        // _ and % are literal characters, not wildcards.
        check("text underscore", {.text = "y_1"}, "job = 'deploy_1'");
        QVERIFY(q.auditPage({.filter = {.text = "%"}}).events.empty());
        QCOMPARE(q.auditPage({.filter = {.text = ""}}).events.size(), std::size_t(total)); // empty: no filter

        // A time window, at millisecond precision and inclusive at both ends.
        const auto times = db.rows("SELECT relctl.epoch_ms(at) FROM relctl.events ORDER BY id");
        const std::int64_t from = std::stoll(times[2][0]);
        const std::int64_t to = std::stoll(times[times.size() - 3][0]);
        const std::string window =
            "relctl.epoch_ms(at) BETWEEN " + std::to_string(from) + " AND " + std::to_string(to);
        check("from/to", {.from = ms(from), .to = ms(to)}, window);
        check("from", {.from = ms(to)}, "relctl.epoch_ms(at) >= " + std::to_string(to));
        check("to", {.to = ms(from)}, "relctl.epoch_ms(at) <= " + std::to_string(from));

        for (const Event& e :
             q.auditPage({.filter = {.env = "staging", .reason = "DISPATCH_FROZEN"}}).events) {
            QCOMPARE(e.outcome, std::string("rejected"));
            QCOMPARE(e.job.value_or("-"), std::string("stage-9"));
            QCOMPARE(e.operation, std::string("publish"));
        }
        const Event frozen = q.auditPage({.filter = {.operation = "freeze"}}).events.at(0);
        QCOMPARE(frozen.actor.value_or("-"), std::string("Alice"));
        QVERIFY(frozen.host && frozen.pid);

        // The drop-downs list what the trail holds, sorted.
        std::vector<std::string> operations, reasons;
        for (const auto& r : db.rows("SELECT DISTINCT operation FROM relctl.events ORDER BY 1"))
            operations.push_back(r[0]);
        for (const auto& r :
             db.rows("SELECT DISTINCT reason FROM relctl.events WHERE reason IS NOT NULL ORDER BY 1"))
            reasons.push_back(r[0]);
        QCOMPARE(q.operations(), operations);
        QCOMPARE(q.reasons(), reasons);
        QCOMPARE(reasons, (std::vector<std::string>{"DISPATCH_FROZEN", "STALE_GENERATION"}));

        // Invalid input is refused as such.
        QCOMPARE(errorOf([&] { q.auditPage({.limit = 0}); }), ExitCode::Usage);
        QCOMPARE(errorOf([&] { q.auditPage({.limit = 5001}); }), ExitCode::Usage);
        QCOMPARE(errorOf([&] { q.auditPage({.filter = {.from = ms(to), .to = ms(from)}}); }),
                 ExitCode::Usage);
        QCOMPARE(q.auditPage({.limit = 5000}).events.size(), std::size_t(total));
    }

    void keysetPagesConcatenateWithoutGapsOrDuplicates()
    {
        TestDatabase db;
        seedEvents(db, 5000);
        Database conn(db.dsn());
        ConsoleQueries q(conn);
        const std::vector<std::int64_t> expected = idsWhere(db, "env = 'prod'");
        QCOMPARE(expected.size(), std::size_t(1000));
        int pages = 0;
        const std::vector<std::int64_t> got = ids(allPages(q, {.env = "prod"}, 97, &pages));
        QCOMPARE(pages, 11); // 10 full pages and 30 events
        QCOMPARE(got, expected);
        QCOMPARE(std::set<std::int64_t>(got.begin(), got.end()).size(), got.size());

        // `more` at the boundary: exactly a page left is the last page.
        AuditPage exact = q.auditPage({.filter = {.env = "prod"}, .limit = 1000});
        QCOMPARE(exact.events.size(), std::size_t(1000));
        QVERIFY(!exact.more);
        AuditPage oneShort = q.auditPage({.filter = {.env = "prod"}, .limit = 999});
        QVERIFY(oneShort.more);
        AuditPage rest = q.auditPage({.filter = {.env = "prod"},
                                      .after = AuditCursor{std::nullopt, oneShort.events.back().id},
                                      .limit = 1});
        QCOMPARE(rest.events.size(), std::size_t(1));
        QCOMPARE(rest.events[0].id, expected.back());
        QVERIFY(!rest.more);
        QVERIFY(q.auditPage({.filter = {.env = "prod"}, .after = AuditCursor{std::nullopt, expected.back()}})
                    .events.empty());
    }

    // Each sort column in both directions, walked page by page with the
    // cursor, gives exactly the order of ORDER BY (column, id) over a direct
    // query: every row once, NULL keys last ascending and first descending.
    void sortedPagesMatchOrderBy_data()
    {
        QTest::addColumn<int>("column");
        QTest::addColumn<QString>("sql");
        QTest::addColumn<bool>("descending");
        QTest::addColumn<bool>("filtered");
        for (const auto& [column, sql] : sortColumns)
            for (const bool descending : {false, true})
                for (const bool filtered : {false, true})
                    QTest::addRow("%s %s%s", sql, descending ? "desc" : "asc", filtered ? " prod" : "")
                        << int(column) << QString::fromLatin1(sql) << descending << filtered;
    }

    void sortedPagesMatchOrderBy()
    {
        QFETCH(int, column);
        QFETCH(QString, sql);
        QFETCH(bool, descending);
        QFETCH(bool, filtered);
        if (!m_sortDb) { // seeded once for all rows of the table, dropped with the test object
            m_sortDb = std::make_unique<TestDatabase>();
            seedEvents(*m_sortDb, 600);
            seedNullKeys(*m_sortDb, 60);
            m_sortDb->exec("ANALYZE relctl.events");
        }
        const TestDatabase* db = m_sortDb.get();
        Database conn(db->dsn());
        ConsoleQueries q(conn);
        const AuditSort sort{AuditSort::Column(column), descending};
        const AuditFilter filter = filtered ? AuditFilter{.env = "prod"} : AuditFilter{};
        const std::string predicate = filtered ? "env = 'prod'" : "true";
        const std::vector<std::int64_t> expected = idsOrdered(*db, predicate, sql.toStdString(), descending);
        // 23 does not divide any group of equal keys: pages end inside runs of
        // equal keys and between NULL and non-NULL keys.
        const std::vector<std::int64_t> got = ids(allPages(q, filter, 23, nullptr, sort));
        QCOMPARE(got.size(), expected.size());
        QCOMPARE(got, expected);
        // One page of all of them agrees with the walk.
        QCOMPARE(ids(q.auditPage({.filter = filter, .sort = sort, .limit = 5000}).events), expected);
    }

    // An event may name the environment '' (a refusal records the name a
    // job gave). It reaches the client as an event without an environment
    // does (Event::env is ""), yet sorts as the smallest name, not as
    // NULL: a walk sorted by environment reads each event once and ends,
    // with and without a filter on ''.
    void anEmptyEnvironmentNameSortsAsAName_data()
    {
        QTest::addColumn<bool>("descending");
        QTest::addColumn<bool>("filtered");
        for (const bool descending : {false, true})
            for (const bool filtered : {false, true})
                QTest::addRow("%s%s", descending ? "desc" : "asc", filtered ? " env=''" : "")
                    << descending << filtered;
    }

    void anEmptyEnvironmentNameSortsAsAName()
    {
        QFETCH(bool, descending);
        QFETCH(bool, filtered);
        TestDatabase db;
        db.exec("INSERT INTO relctl.events (env, operation, outcome) "
                "SELECT (ARRAY['', NULL, 'prod', '', 'staging'])[1 + i % 5], 'renew', 'accepted' "
                "FROM generate_series(1, 60) AS i");
        Database conn(db.dsn());
        ConsoleQueries q(conn);
        const AuditSort sort{AuditSort::Column::Environment, descending};
        const AuditFilter filter = filtered ? AuditFilter{.env = ""} : AuditFilter{};
        const std::vector<std::int64_t> expected =
            idsOrdered(db, filtered ? "env = ''" : "true", "env", descending);
        QVERIFY(expected.size() >= 24);
        // Pages of 7 end on events named '' (and their cursors follow one);
        // a walk that starts over is cut off rather than left to loop.
        std::vector<std::int64_t> got;
        AuditPageRequest request{.filter = filter, .sort = sort, .limit = 7};
        for (std::size_t pages = 0; pages <= expected.size(); ++pages) {
            const AuditPage page = q.auditPage(request);
            for (const Event& e : page.events)
                got.push_back(e.id);
            if (!page.more || page.events.empty())
                break;
            request.after = auditCursorAfter(page.events.back(), sort.column);
        }
        QCOMPARE(got, expected);
    }

    // NULL sorts as the largest key: last ascending, first descending.
    void nullKeysSortLargest()
    {
        TestDatabase db;
        seedEvents(db, 40);
        seedNullKeys(db, 12);
        Database conn(db.dsn());
        ConsoleQueries q(conn);
        const auto asc = allPages(q, {}, 5, nullptr, {AuditSort::Column::Actor, false});
        const auto desc = allPages(q, {}, 5, nullptr, {AuditSort::Column::Actor, true});
        const long long nulls = db.count("SELECT count(*) FROM relctl.events WHERE actor IS NULL");
        QVERIFY(nulls > 5 && nulls < static_cast<long long>(asc.size()));
        for (std::size_t i = 0; i < asc.size(); ++i) {
            QCOMPARE(!asc[i].actor, i >= asc.size() - std::size_t(nulls));
            QCOMPARE(!desc[i].actor, i < std::size_t(nulls));
        }
        // A cursor on a NULL key continues within the NULLs, by id.
        const Event& firstNull = desc.front();
        const AuditPage next = q.auditPage({.sort = {AuditSort::Column::Actor, true},
                                            .after = auditCursorAfter(firstNull, AuditSort::Column::Actor),
                                            .limit = 1});
        QCOMPARE(next.events.at(0).id, desc.at(1).id);
        QVERIFY(!next.events[0].actor && next.events[0].id < firstNull.id);
    }

    // Another connection inserting events while the pages are walked: every
    // event that existed before the walk is read exactly once, nothing twice.
    void pagesStayExactWhileEventsAreInserted_data()
    {
        QTest::addColumn<int>("column");
        QTest::addColumn<bool>("descending");
        QTest::addRow("time desc") << int(AuditSort::Column::Time) << true;
        QTest::addRow("time asc") << int(AuditSort::Column::Time) << false;
        QTest::addRow("job asc") << int(AuditSort::Column::Job) << false;
        QTest::addRow("generation desc") << int(AuditSort::Column::Generation) << true;
        QTest::addRow("actor asc") << int(AuditSort::Column::Actor) << false;
    }

    void pagesStayExactWhileEventsAreInserted()
    {
        QFETCH(int, column);
        QFETCH(bool, descending);
        TestDatabase db;
        seedEvents(db, 3000);
        seedNullKeys(db, 100);
        const std::vector<std::int64_t> before = idsWhere(db, "true");
        Database conn(db.dsn());
        ConsoleQueries q(conn);
        // Another session inserts between every two pages: keys all over the
        // range, NULLs included, on both sides of the cursor. In step with the
        // walk, so that every page boundary meets new rows, in one statement
        // without ANALYZE (a free-running writer that analysed every batch
        // made each sort take 20 s).
        int batches = 0;
        int walked = 0;
        const auto got =
            ids(allPages(q, {.text = ""}, 41, &walked, {AuditSort::Column(column), descending}, [&] {
                db.exec(insertNullKeys(7) + "; " + insertEvents(11));
                ++batches;
            }));
        QVERIFY(walked > 50 && batches > 10);
        const std::set<std::int64_t> unique(got.begin(), got.end());
        QCOMPARE(unique.size(), got.size()); // no duplicates
        for (const std::int64_t id : before)
            QVERIFY2(unique.count(id), qPrintable(QStringLiteral("event %1 was skipped").arg(id)));
    }

    // "Newer than": exactly the events after the horizon that match the
    // filter, oldest first, page by page.
    void newerThanReturnsExactlyTheNewEvents()
    {
        TestDatabase db;
        seedEvents(db, 500);
        Database conn(db.dsn());
        ConsoleQueries q(conn);
        const AuditFilter filter{.env = "prod"};
        const AuditPage first = q.auditPage({.filter = filter, .limit = 10});
        QCOMPARE(first.horizon, std::int64_t(500));
        QVERIFY(q.auditPage({.filter = filter, .newerThan = first.horizon}).events.empty());
        seedEvents(db, 250); // 50 of them in prod
        const std::vector<std::int64_t> expected = [&] {
            auto v = idsWhere(db, "env = 'prod' AND id > 500");
            std::reverse(v.begin(), v.end());
            return v;
        }();
        QCOMPARE(expected.size(), std::size_t(50));
        std::vector<std::int64_t> got;
        std::int64_t horizon = first.horizon;
        for (int pages = 1;; ++pages) {
            // Sort and cursor do not matter for live updates.
            const AuditPage page = q.auditPage({.filter = filter,
                                                .sort = {AuditSort::Column::Host, false},
                                                .after = AuditCursor{"zzz", 1},
                                                .newerThan = horizon,
                                                .limit = 15});
            for (const Event& e : page.events)
                got.push_back(e.id);
            if (!page.more) {
                QCOMPARE(pages, 4);
                QCOMPARE(page.horizon, std::int64_t(750));
                break;
            }
            horizon = page.events.back().id;
        }
        QCOMPARE(got, expected);
        // A time filter that ended before the new events sees none of them:
        // the server's filter decides what is new, not the client.
        db.exec("INSERT INTO relctl.events (env, operation, outcome) VALUES ('prod', 'renew', 'accepted')");
        const std::int64_t end =
            std::stoll(db.scalar("SELECT relctl.epoch_ms(at) FROM relctl.events WHERE id = 750"));
        QVERIFY(q.auditPage({.filter = {.env = "prod", .to = ms(end)}, .newerThan = 750}).events.empty());
        QCOMPARE(q.auditPage({.filter = {.env = "prod"}, .newerThan = 750}).events.size(), std::size_t(1));
    }

    // Sort names are whitelisted on the server: a column name from anywhere
    // else is refused, never spliced into SQL.
    void unknownSortIsRefused()
    {
        TestDatabase db;
        seedEvents(db, 10);
        for (const char* bad : {"detail", "id; DROP TABLE relctl.events", "client_addr"}) {
            bool refused = false;
            try {
                db.exec(
                    std::string("SELECT relctl.console_audit(NULL, NULL, NULL, NULL, NULL, NULL, NULL, '") +
                    bad + "', true, NULL, NULL, NULL, 10)");
            } catch (const std::exception& e) {
                refused = std::string(e.what()).find("cannot be sorted") != std::string::npos;
            }
            QVERIFY2(refused, bad);
        }
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events"), 10LL);
    }

    void aPageIsFastOnAVolumeOfEvents()
    {
        // RELCTL_CONSOLE_EVENTS=1000000 measures at production scale.
        const long long n = qEnvironmentVariableIsSet("RELCTL_CONSOLE_EVENTS")
                                ? qEnvironmentVariableIntValue("RELCTL_CONSOLE_EVENTS")
                                : 100000;
        TestDatabase db;
        seedEvents(db, n);
        Database conn(db.dsn());
        ConsoleQueries q(conn);
        q.operations(); // the connection and the catalogue are warm, as in a running console
        // Each page holds what the same filter finds in SQL, up to the limit of 500.
        // (QCOMPARE returns from the lambda: the page is handed out through `page`.)
        const auto timed = [&](const char* what, const AuditPageRequest& request,
                               const std::string& predicate, AuditPage& page) {
            // The first read of freshly inserted rows also sets their hint bits
            // (a write); repeats show the steady state of an aged trail.
            qint64 ms[3];
            for (qint64& t : ms) {
                QElapsedTimer timer;
                timer.start();
                page = q.auditPage(request);
                t = timer.elapsed();
            }
            qInfo("%lld events, %s: %zu events in %lld ms, then %lld and %lld ms", n, what,
                  page.events.size(), static_cast<long long>(ms[0]), static_cast<long long>(ms[1]),
                  static_cast<long long>(ms[2]));
            const long long matching = db.count("SELECT count(*) FROM relctl.events WHERE " + predicate);
            QCOMPARE(page.events.size(), std::size_t(std::min(matching, 500LL)));
            QCOMPARE(page.more, matching > 500);
            QVERIFY2(ms[0] < 2000, what); // a sanity bound only; see the figures printed
        };
        AuditPage first, filtered, other;
        timed("first page", {}, "true", first);
        QCOMPARE(first.events.at(0).id, std::int64_t(n));
        timed("env + reason", {.filter = {.env = "prod", .reason = "STALE_GENERATION"}},
              "env = 'prod' AND reason = 'STALE_GENERATION'", filtered);
        for (const Event& e : filtered.events)
            QVERIFY(e.env == "prod" && e.reason == "STALE_GENERATION");
        timed("env + reason, from the middle",
              {.filter = {.env = "prod", .reason = "STALE_GENERATION"},
               .after = AuditCursor{std::nullopt, n / 2}},
              "env = 'prod' AND reason = 'STALE_GENERATION' AND id < " + std::to_string(n / 2), other);
        timed("operation", {.filter = {.operation = "publish"}}, "operation = 'publish'", other);
        QElapsedTimer timer;
        timer.start();
        QCOMPARE(q.reasons().size(), std::size_t(4));
        qInfo("%lld events, reasons(): %lld ms", n, static_cast<long long>(timer.elapsed()));
    }

    void timelineShowsOverlappingLeasesAndMarkers()
    {
        TestDatabase db;
        cli(db, {"env", "add", "prod"});
        cli(db, {"env", "add", "staging"});
        cli(db, {"env", "add", "test"});
        Database conn(db.dsn());
        ConsoleQueries q(conn);
        const std::int64_t start = q.environments().at(0).serverNow.millis();
        const std::string released = acquire(db, "prod", "job-a", 1);
        cli(db, {"lease", "release", "--lease", released});
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        const std::int64_t afterFirst = q.environments().at(0).serverNow.millis();
        const std::string expired = acquire(db, "prod", "job-b", 2, "1s");
        std::this_thread::sleep_for(std::chrono::milliseconds(1200));
        acquire(db, "prod", "job-c", 3);
        QCOMPARE(cli(db, {"lease", "revoke", "--env", "prod", "--by", "ops", "--reason", "stuck"}).exitCode,
                 0);
        QCOMPARE(cli(db, {"publish", "--lease", expired}).exitCode, 5); // LEASE_SUPERSEDED
        const std::string live = acquire(db, "prod", "job-d", 4);
        QCOMPARE(cli(db, {"publish", "--lease", live}).exitCode, 0);
        // Policy newest: of two waiters, the lower is superseded at once.
        cli(db, {"env", "set", "staging", "--policy", "newest"});
        acquire(db, "staging", "holder", 1);
        auto low = waiter(db, "staging", "low", 2);
        awaitRow(q, "staging", [](const EnvironmentRow& r) { return r.queueLength == 1; });
        auto high = waiter(db, "staging", "high", 3);
        QVERIFY(low->waitForFinished(20000));
        QCOMPARE(low->exitCode(), 4);
        const std::int64_t end = q.environments().at(0).serverNow.millis();

        TimelineSlice all = q.timeline(ms(start), ms(end));
        QCOMPARE(all.environments, (std::vector<std::string>{"prod", "staging", "test"}));
        QVERIFY(all.serverNow.millis() >= end);
        std::vector<std::string> endings;
        for (const LeaseSpan& l : all.leases)
            endings.push_back(l.env + ":" + l.job + ":" + l.ending);
        QCOMPARE(endings,
                 (std::vector<std::string>{"prod:job-a:released", "prod:job-b:expired", "prod:job-c:revoked",
                                           "prod:job-d:live", "staging:holder:live"}));
        const LeaseSpan& b = all.leases[1];
        QCOMPARE(b.token, std::int64_t(2));
        QCOMPARE(b.generation, std::int64_t(2));
        QCOMPARE(b.release, std::string("r2"));
        QVERIFY(b.endsAt.millis() - b.acquiredAt.millis() >= 999 &&
                b.endsAt.millis() - b.acquiredAt.millis() <= 1001); // its expiry: a 1 s TTL

        std::set<std::string> kinds;
        std::string previous;
        std::int64_t previousAt = 0;
        for (const TimelineMarker& m : all.markers) {
            kinds.insert(m.kind);
            QVERIFY(m.at.millis() >= start && m.at.millis() <= end);
            QVERIFY(m.env > previous ||
                    (m.env == previous && m.at.millis() >= previousAt)); // by env, then at
            previous = m.env;
            previousAt = m.at.millis();
            QVERIFY((m.kind == "queued") == (m.eventId == 0));
        }
        QCOMPARE(kinds, (std::set<std::string>{"operator", "publish", "queued", "refusal", "superseded"}));
        const auto has = [&](const std::string& kind, const std::string& label) {
            return std::any_of(all.markers.begin(), all.markers.end(), [&](const TimelineMarker& m) {
                return m.kind == kind && m.label.find(label) != std::string::npos;
            });
        };
        QVERIFY(has("refusal", "LEASE_SUPERSEDED job-b"));
        // Each marker names its job, for the timeline's list of a group of markers.
        QVERIFY(std::any_of(all.markers.begin(), all.markers.end(),
                            [](const TimelineMarker& m) { return m.kind == "refusal" && m.job == "job-b"; }));
        QVERIFY(std::any_of(all.markers.begin(), all.markers.end(),
                            [](const TimelineMarker& m) { return m.kind == "queued" && m.job == "high"; }));
        QVERIFY(has("publish", "r4 job-d"));
        QVERIFY(has("operator", "revoke ops"));
        QVERIFY(has("operator", "env-set"));
        QVERIFY(has("superseded", "SUPERSEDED low"));
        QVERIFY(has("queued", "high"));
        QVERIFY(has("queued", "low"));

        // A window after the first lease ended leaves it out; one before everything holds nothing.
        TimelineSlice later = q.timeline(ms(afterFirst), ms(end));
        QCOMPARE(later.leases.size(), std::size_t(4));
        QCOMPARE(later.leases[0].job, std::string("job-b"));
        TimelineSlice before = q.timeline(ms(start - 60000), ms(start - 1000));
        QVERIFY(before.leases.empty() && before.markers.empty());
        QCOMPARE(before.environments.size(), std::size_t(3));
        QCOMPARE(errorOf([&] { q.timeline(ms(end), ms(start)); }), ExitCode::Usage);
        stop(*high);
    }

    void timelineShadesFreezesBeforeAndStillInForce()
    {
        TestDatabase db;
        for (const char* env : {"prod", "staging", "test"})
            QCOMPARE(cli(db, {"env", "add", env}).exitCode, 0);
        Database conn(db.dsn());
        ConsoleQueries q(conn);
        const auto pause = [] { std::this_thread::sleep_for(std::chrono::milliseconds(30)); };
        const auto freeze = [&](const char* env, const char* by, const char* reason) {
            QCOMPARE(cli(db, {"freeze", "--env", env, "--by", by, "--reason", reason}).exitCode, 0);
        };
        const auto unfreeze = [&](const char* env) {
            QCOMPARE(cli(db, {"unfreeze", "--env", env, "--by", "ops"}).exitCode, 0);
        };
        // Over before the window: not shaded in it.
        freeze("test", "carol", "long over");
        unfreeze("test");
        // Begun before the window: prod's ends inside it, staging's is still in force.
        freeze("prod", "alice", "incident 41");
        freeze("staging", "bob", "quarter end");
        pause();
        const std::int64_t start = q.environments().at(0).serverNow.millis();
        pause();
        unfreeze("prod");
        freeze("prod", "alice", "incident 42"); // begun and ended inside the window
        pause();
        unfreeze("prod");
        pause();
        const std::int64_t end = q.environments().at(0).serverNow.millis();

        // The oracle: the freeze and unfreeze events' own times, in order.
        const auto times = [&](const std::string& env, const std::string& operation) {
            std::vector<std::int64_t> out;
            for (const auto& row : db.rows("SELECT relctl.epoch_ms(at) FROM relctl.events WHERE env = '" +
                                           env + "' AND operation = '" + operation + "' ORDER BY id"))
                out.push_back(std::stoll(row.at(0)));
            return out;
        };
        const std::vector<std::int64_t> prodFrozen = times("prod", "freeze");
        const std::vector<std::int64_t> prodUnfrozen = times("prod", "unfreeze");
        QCOMPARE(prodFrozen.size(), std::size_t(2));
        QCOMPARE(prodUnfrozen.size(), std::size_t(2));
        QVERIFY(prodFrozen[0] < start && start < prodUnfrozen[0]); // the case the test is about

        const TimelineSlice slice = q.timeline(ms(start), ms(end));
        std::vector<std::string> spans;
        for (const FrozenSpan& f : slice.freezes)
            spans.push_back(f.env + ":" + f.by + ":" + f.reason + ":" + (f.to ? "closed" : "open"));
        QCOMPARE(spans,
                 (std::vector<std::string>{"prod:alice:incident 41:closed", "prod:alice:incident 42:closed",
                                           "staging:bob:quarter end:open"}));
        QCOMPARE(slice.freezes[0].from.millis(), prodFrozen[0]);
        QCOMPARE(slice.freezes[0].to.value_or(Timestamp()).millis(), prodUnfrozen[0]);
        QCOMPARE(slice.freezes[1].from.millis(), prodFrozen[1]);
        QCOMPARE(slice.freezes[1].to.value_or(Timestamp()).millis(), prodUnfrozen[1]);
        // The freeze in force is the environment's own, begun before the window.
        QCOMPARE(slice.freezes[2].from.millis(),
                 std::stoll(db.scalar("SELECT relctl.epoch_ms(frozen_at) FROM relctl.environments "
                                      "WHERE name = 'staging'")));
        QVERIFY(slice.freezes[2].from.millis() < start);

        // Zoomed in after prod's freezes: only the one still in force; far
        // before everything: none.
        const TimelineSlice later = q.timeline(ms(prodUnfrozen[1] + 1), ms(end));
        QCOMPARE(later.freezes.size(), std::size_t(1));
        QCOMPARE(later.freezes[0].env, std::string("staging"));
        QVERIFY(q.timeline(ms(start - 3'600'000), ms(start - 3'000'000)).freezes.empty());

        // The history's extent: the trail's first and last events.
        QCOMPARE(slice.historyFirst.value_or(Timestamp()).millis(),
                 std::stoll(db.scalar("SELECT relctl.epoch_ms(at) FROM relctl.events ORDER BY id LIMIT 1")));
        QCOMPARE(
            slice.historyLast.value_or(Timestamp()).millis(),
            std::stoll(db.scalar("SELECT relctl.epoch_ms(at) FROM relctl.events ORDER BY id DESC LIMIT 1")));

        // A reviewer's login with any arguments: no error, and no window
        // means no items, though the lanes and the extent still come back.
        for (const char* args :
             {"NULL, NULL", "NULL, 0", "0, NULL", "-9223372036854775808, 9223372036854775807",
              "9223372036854775807, 9223372036854775807"})
            QVERIFY2(sqlState(db.reviewerDsn(), std::string("SELECT relctl.console_timeline(") + args + ")")
                         .empty(),
                     args);
        const nlohmann::json none = db.json("SELECT relctl.console_timeline(NULL, NULL)");
        QVERIFY(none.at("leases").empty() && none.at("markers").empty() && none.at("freezes").empty());
        QCOMPARE(none.at("environments").size(), std::size_t(3));
        QCOMPARE(none.at("history_first").get<std::int64_t>(), slice.historyFirst->millis());
        // The whole range a timestamp holds: every freeze, clamped, not an overflow.
        const nlohmann::json everything =
            db.json("SELECT relctl.console_timeline(-9223372036854775808, 9223372036854775807)");
        QCOMPARE(everything.at("freezes").size(), std::size_t(4));
        // A job's login still cannot read the console's window (the grants are unchanged).
        QCOMPARE(sqlState(db.jobDsn(), "SELECT relctl.console_timeline(NULL, NULL)"), std::string("42501"));
    }

    // The Promotions view's read carries of each environment only what the
    // view shows (console.h), read by one join: every member it carries must
    // say what relctl.environment_json says, the environments must be exactly
    // those on a path or with a gate, the requests every open one and the
    // newest decided, and a partial read must cover what the SQL says.
    void promotionsReadCarriesWhatTheViewNeeds()
    {
        TestDatabase db;
        for (const char* env : {"a.test", "a.staging", "a.prod", "b.dev", "c.solo"})
            QCOMPARE(cli(db, {"env", "add", env}).exitCode, 0);
        db.exec("CREATE ROLE release_leads NOLOGIN");
        QCOMPARE(cli(db, {"env", "set", "a.staging", "--promote-from", "a.test"}).exitCode, 0);
        QCOMPARE(cli(db, {"env", "set", "a.prod", "--promote-from", "a.staging", "--soak", "1h",
                          "--approvals", "2", "--approver-role", "release_leads"})
                     .exitCode,
                 0);
        QCOMPARE(cli(db, {"env", "set", "c.solo", "--approvals", "1"}).exitCode, 0);
        // Something current on a.test, a live lease on a.staging (r1, accepted
        // upstream), one request open on a.prod, then a.prod frozen.
        QCOMPARE(cli(db, {"run", "--env", "a.test", "--job", "t-1", "--release", "r1", "--generation", "1",
                          "--", "true"})
                     .exitCode,
                 0);
        acquire(db, "a.staging", "s-1", 1, "120s");
        QCOMPARE(cli(db, {"promote", "request", "--env", "a.prod", "--release", "r1", "--generation", "1",
                          "--by", "pipeline"})
                     .exitCode,
                 0);
        QCOMPARE(cli(db, {"freeze", "--env", "a.prod", "--by", "alice", "--reason", "incident 7"}).exitCode,
                 0);
        // Two decided on c.solo: approved, then denied.
        const auto request = [&](const char* release, const char* generation) {
            const RunResult r = cli(db, {"promote", "request", "--env", "c.solo", "--release", release,
                                         "--generation", generation, "--by", "pipeline"});
            if (r.exitCode != 0)
                qFatal("promote request failed (%d): %s", r.exitCode, r.err.c_str());
            return db.scalar("SELECT max(id) FROM relctl.promotions");
        };
        const std::string approved = request("r8", "8");
        QCOMPARE(
            relctlWithDsn(db.loginDsn("alice"), {"promote", "approve", approved, "--by", "alice"}).exitCode,
            0);
        const std::string denied = request("r9", "9");
        QCOMPARE(relctlWithDsn(db.loginDsn("bob"),
                               {"promote", "deny", denied, "--by", "bob", "--reason", "not now"})
                     .exitCode,
                 0);

        Database conn(db.dsn());
        ConsoleQueries q(conn);
        const PromotionsRead all = q.promotions();
        QVERIFY(!all.covers);
        std::vector<std::string> names;
        for (const Environment& e : all.environments)
            names.push_back(e.name);
        QCOMPARE(names, (std::vector<std::string>{"a.prod", "a.staging", "a.test", "c.solo"}));
        for (const Environment& e : all.environments) {
            const Environment full =
                db.json("SELECT relctl.environment_json('" + e.name + "')").get<Environment>();
            QCOMPARE(e.promoteFrom, full.promoteFrom);
            QCOMPARE(e.soakMs, full.soakMs);
            QCOMPARE(e.approvalsRequired, full.approvalsRequired);
            QCOMPARE(e.approverRole, full.approverRole);
            QCOMPARE(e.frozen.has_value(), full.frozen.has_value());
            if (e.frozen) {
                QCOMPARE(e.frozen->at.micros(), full.frozen->at.micros());
                QCOMPARE(e.frozen->by, full.frozen->by);
                QCOMPARE(e.frozen->reason, full.frozen->reason);
            }
            QCOMPARE(e.current.has_value(), full.current.has_value());
            if (e.current) {
                QCOMPARE(e.current->id, full.current->id);
                QCOMPARE(e.current->release, full.current->release);
                QCOMPARE(e.current->generation, full.current->generation);
            }
        }
        // The cases the test is about are there.
        const auto env = [&](const std::string& name) {
            return *std::find_if(all.environments.begin(), all.environments.end(),
                                 [&](const Environment& e) { return e.name == name; });
        };
        QCOMPARE(env("a.prod").soakMs, std::int64_t(3'600'000));
        QCOMPARE(env("a.prod").approverRole, std::optional<std::string>("release_leads"));
        QCOMPARE(env("a.prod").frozen.value_or(Frozen{}).reason, std::string("incident 7"));
        QCOMPARE(env("a.test").current.value_or(Manifest{}).release, std::string("r1"));
        QCOMPARE(env("c.solo").approvalsRequired, std::int64_t(1));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.leases WHERE env = 'a.staging' AND ended_at IS NULL"),
                 1LL);

        // The requests: every open one and the newest decided, in id order,
        // each as relctl.promotions holds it.
        const auto requests = [](const PromotionsRead& read) {
            std::vector<std::string> out;
            for (const Promotion& p : read.promotions)
                out.push_back(std::to_string(p.id) + ":" + p.env + ":" + p.release + ":" + p.state);
            return out;
        };
        const auto rows = [&](const std::string& where) {
            std::vector<std::string> out;
            for (const auto& r : db.rows("SELECT id || ':' || env || ':' || release || ':' || state "
                                         "FROM relctl.promotions WHERE " +
                                         where + " ORDER BY id"))
                out.push_back(r.at(0));
            return out;
        };
        QCOMPARE(requests(all), rows("true"));
        QCOMPARE(requests(q.promotions(std::nullopt, 1)), rows("state = 'open' OR id = " + denied));
        for (const Promotion& p : all.promotions) {
            QCOMPARE(p.approvalsRequired, env(p.env).approvalsRequired);
            QCOMPARE(p.approverRole, env(p.env).approverRole);
            QCOMPARE(
                std::int64_t(p.approvals.size()),
                db.count("SELECT count(*) FROM relctl.promotion_decisions WHERE approve AND promotion = " +
                         std::to_string(p.id)));
            QCOMPARE(p.denial.has_value(), std::to_string(p.id) == denied);
        }

        // A live update of a.staging covers a.prod (promoted from it): both
        // environments as the full read has them, and a.prod's request.
        const PromotionsRead part = q.promotions(std::vector<std::string>{"a.staging", "nowhere"});
        QCOMPARE(part.covers.value_or(std::vector<std::string>{}),
                 (std::vector<std::string>{"a.prod", "a.staging", "nowhere"}));
        names.clear();
        for (const Environment& e : part.environments) {
            names.push_back(e.name);
            QCOMPARE(e.frozen.has_value(), env(e.name).frozen.has_value());
            QCOMPARE(e.promoteFrom, env(e.name).promoteFrom);
        }
        QCOMPARE(names, (std::vector<std::string>{"a.prod", "a.staging"}));
        QCOMPARE(requests(part), rows("env IN ('a.prod', 'a.staging')"));
        // b.dev is on no path: covered, and absent.
        const PromotionsRead off = q.promotions(std::vector<std::string>{"b.dev"});
        QCOMPARE(off.covers.value_or(std::vector<std::string>{}), std::vector<std::string>{"b.dev"});
        QVERIFY(off.environments.empty() && off.promotions.empty());
    }

    void traceNamesTheLeaseThatBeatAStaleWrite()
    {
        TestDatabase db;
        cli(db, {"env", "add", "prod"});
        const std::string h8 = acquire(db, "prod", "job-8", 8, "1s");
        std::this_thread::sleep_for(std::chrono::milliseconds(1200));
        const std::string h9 = acquire(db, "prod", "job-9", 9);
        QCOMPARE(cli(db, {"--job-url", "https://ci.example/9", "publish", "--lease", h9}).exitCode, 0);
        QCOMPARE(cli(db, {"publish", "--lease", h8}).exitCode, 4);

        Database conn(db.dsn());
        ConsoleQueries q(conn);
        const std::vector<Event> refusals = q.auditPage({.filter = {.reason = "STALE_GENERATION"}}).events;
        QCOMPARE(refusals.size(), std::size_t(1));
        const std::optional<RefusalTrace> t = q.trace(refusals[0].id);
        QVERIFY(t);
        QCOMPARE(t->event.id, refusals[0].id);
        QCOMPARE(t->event.job.value_or("-"), std::string("job-8"));
        QVERIFY(t->lease);
        QCOMPARE(t->lease->token, std::int64_t(1));
        QCOMPARE(t->lease->job, std::string("job-8"));
        QCOMPARE(t->lease->ending, std::string("expired"));
        QVERIFY(t->supersededBy);
        QCOMPARE(t->supersededBy->token, std::int64_t(2));
        QCOMPARE(t->supersededBy->job, std::string("job-9"));
        QCOMPARE(t->supersededBy->ending, std::string("live"));
        QCOMPARE(t->supersedingHost.value_or("-"),
                 db.scalar("SELECT host FROM relctl.leases WHERE token = 2"));
        QCOMPARE(t->supersedingPid.value_or(0),
                 std::stoll(db.scalar("SELECT pid FROM relctl.leases WHERE token = 2")));
        QVERIFY(!t->supersedingJobUrl); // the acquire ran without --job-url
        QCOMPARE(t->currentRelease.value_or("-"), std::string("r9"));
        QCOMPARE(t->currentGeneration.value_or(0), std::int64_t(9));
        QCOMPARE(t->currentJob.value_or("-"), std::string("job-9"));
        QVERIFY(t->publishedBeforeMs && *t->publishedBeforeMs >= 0);
        QVERIFY(t->currentPublishedAt && *t->currentPublishedAt <= t->event.at);
        // The cause: the publish that set the bar, when, and where it ran.
        QVERIFY(t->cause);
        QCOMPARE(t->cause->kind, std::string("stale"));
        QCOMPARE(t->cause->job.value_or("-"), std::string("job-9"));
        QCOMPARE(t->cause->generation.value_or(0), std::int64_t(9));
        QCOMPARE(t->cause->at.value_or(Timestamp()), *t->currentPublishedAt);

        const std::vector<Event> accepted =
            q.auditPage({.filter = {.job = "job-9", .operation = "publish"}}).events;
        QCOMPARE(accepted.size(), std::size_t(1));
        QVERIFY(!q.trace(accepted[0].id));
        QVERIFY(!q.trace(999999));
    }

    // A queued candidate skipped after an approval is traced to the
    // candidate that won and the approval (who, why), not to the lease that
    // held the environment at that moment.
    void traceOfASupersededCandidateNamesTheWinnerAndTheApproval()
    {
        TestDatabase db;
        cli(db, {"env", "add", "web"});
        cli(db, {"env", "set", "web", "--policy", "newest", "--supersede", "approval"});
        const std::string holder = acquire(db, "web", "holder", 1);
        Database conn(db.dsn());
        ConsoleQueries q(conn);
        auto low = waiter(db, "web", "job-2", 2);
        awaitRow(q, "web", [](const EnvironmentRow& r) { return r.queueLength == 1; });
        auto high = waiter(db, "web", "job-3", 3);
        awaitRow(q, "web", [](const EnvironmentRow& r) { return r.pendingSupersessions == 1; });
        const std::string id = db.scalar("SELECT id FROM relctl.supersessions WHERE state = 'pending'");
        // A manager's own login: the login that queued the winner may not approve it.
        QCOMPARE(
            relctlWithDsn(db.loginDsn("alice"), {"approve", id, "--by", "alice", "--reason", "hotfix first"})
                .exitCode,
            0);
        QVERIFY(low->waitForFinished(20000));
        QCOMPARE(low->exitCode(), 4);

        const std::vector<Event> skipped = q.auditPage({.filter = {.reason = "SUPERSEDED"}}).events;
        QCOMPARE(skipped.size(), std::size_t(1));
        const std::optional<RefusalTrace> t = q.trace(skipped[0].id);
        QVERIFY(t && t->cause);
        QCOMPARE(t->cause->kind, std::string("superseded"));
        QCOMPARE(t->cause->job.value_or("-"), std::string("job-3"));
        QCOMPARE(t->cause->approval.value_or(0), std::stoll(id));
        QCOMPARE(t->cause->by.value_or("-"), std::string("alice"));
        QCOMPARE(t->cause->reason.value_or("-"), std::string("hotfix first"));
        QVERIFY(t->cause->at);
        QVERIFY2(t->cause->summary.find("skipped for job-3") == 0, t->cause->summary.c_str());
        stop(*high);
        cli(db, {"lease", "release", "--lease", holder});
    }

    void csvQuoting_data()
    {
        QTest::addColumn<QString>("reason");
        QTest::addColumn<QByteArray>("field");
        QTest::addRow("plain") << QStringLiteral("stale_generation") << QByteArray("stale_generation");
        QTest::addRow("comma") << QStringLiteral("a,b") << QByteArray("\"a,b\"");
        QTest::addRow("quote") << QStringLiteral("say \"no\"") << QByteArray("\"say \"\"no\"\"\"");
        QTest::addRow("newline") << QStringLiteral("two\nlines") << QByteArray("\"two\nlines\"");
        QTest::addRow("carriage return") << QStringLiteral("a\r\nb") << QByteArray("\"a\r\nb\"");
        QTest::addRow("non-ASCII") << QStringLiteral("gel\u00f6scht") << QByteArray("gel\xc3\xb6scht");
    }

    // One row: RFC 4180 quoting, absent values as empty fields, CRLF.
    void csvQuoting()
    {
        QFETCH(QString, reason);
        QFETCH(QByteArray, field);
        Event e;
        e.id = 7;
        e.at = ms(1'700'000'000'000);
        e.env = "prod";
        e.operation = "publish";
        e.outcome = "rejected";
        e.reason = reason.toStdString();
        std::ostringstream out;
        writeAuditCsvRow(out, e);
        // Absent values are empty fields: the 15 after the reason.
        QCOMPARE(QByteArray::fromStdString(out.str()),
                 "7,2023-11-14T22:13:20.000Z,prod,publish,rejected," + field + ",,,,,,,,,,,,,,,\r\n");
        QCOMPARE(parseCsv(out.str()).at(0).at(5), reason.toStdString());
        // The detail, an object, is its compact JSON in one quoted field.
        std::ostringstream full;
        writeAuditCsvRow(full, sampleEvent());
        const std::vector<std::string> row = parseCsv(full.str()).at(0);
        QCOMPARE(row.size(), auditExportFields().size());
        QCOMPARE(row.back(), *sampleEvent().detail);
    }

    // The JSON of an event: the fields and order of `relctl audit --json`
    // events, exact integers, null for what is absent.
    void jsonObjectShape()
    {
        const std::vector<std::string> names{"id",
                                             "at",
                                             "env",
                                             "operation",
                                             "outcome",
                                             "reason",
                                             "job",
                                             "release",
                                             "generation",
                                             "token",
                                             "current_token",
                                             "current_generation",
                                             "current_release",
                                             "op_id",
                                             "host",
                                             "pid",
                                             "job_url",
                                             "actor",
                                             "db_user",
                                             "client_addr",
                                             "detail"};
        QCOMPARE(auditExportFields(), names);
        std::ostringstream full;
        writeAuditJsonObject(full, sampleEvent());
        const std::string text = full.str();
        QVERIFY(text.find("\"token\":9007199254740993") != std::string::npos);
        std::size_t last = 0;
        for (const std::string& name : names) { // in this order
            const std::size_t at = text.find("\"" + name + "\":");
            QVERIFY2(at != std::string::npos && at >= last, name.c_str());
            last = at;
        }
        const QJsonObject a = QJsonDocument::fromJson(QByteArray::fromStdString(text)).object();
        QCOMPARE(a.size(), int(names.size()));
        QCOMPARE(a[QLatin1String("at")].toString(), QStringLiteral("2023-11-14T22:13:20.020Z"));
        QCOMPARE(a[QLatin1String("current_release")].toString(), QStringLiteral("1.4.2"));
        QCOMPARE(a[QLatin1String("pid")].toInteger(), 4242);
        // The detail stays structured in JSON.
        QCOMPARE(a[QLatin1String("detail")].toObject()[QLatin1String("reason")].toString(),
                 QStringLiteral("stuck, \"really\""));

        Event sparse;
        sparse.id = 19;
        sparse.operation = "env-set";
        sparse.outcome = "accepted";
        std::ostringstream out;
        writeAuditJsonObject(out, sparse);
        const QJsonObject b = QJsonDocument::fromJson(QByteArray::fromStdString(out.str())).object();
        QCOMPARE(b.size(), int(names.size()));
        for (const char* name : {"env", "reason", "job", "release", "generation", "token", "current_token",
                                 "current_generation", "current_release", "op_id", "host", "pid", "job_url",
                                 "actor", "db_user", "client_addr", "detail"})
            QVERIFY2(b[QLatin1String(name)].isNull(), name);
    }

    // Every filtered event, not a page: 101,000 of 505,000, in the sort's
    // order, as valid CSV and JSON, into the named file and nothing else.
    void exportWritesEveryFilteredEvent()
    {
        TestDatabase db;
        seedEvents(db, 505'000);
        seedNullKeys(db, 30);
        Database conn(db.dsn());
        ConsoleQueries q(conn);
        QTemporaryDir dir;
        const std::string csvPath = dir.filePath(QStringLiteral("audit.csv")).toStdString();
        const std::string jsonPath = dir.filePath(QStringLiteral("audit.json")).toStdString();

        std::vector<std::int64_t> progress;
        AuditExportOptions csv{.filter = {.env = "prod"},
                               .progress = [&](std::int64_t rows) { progress.push_back(rows); }};
        const std::vector<std::int64_t> byTime = idsOrdered(db, "env = 'prod'", "id", true);
        QVERIFY(byTime.size() >= 101'000);
        QCOMPARE(exportAuditFile(q, csv, csvPath), std::int64_t(byTime.size()));
        QCOMPARE(progress.back(), std::int64_t(byTime.size()));
        QCOMPARE(progress.size(), byTime.size() / 5000 + 1); // pages of 5,000
        const auto records = parseCsv(readFile(csvPath));
        QCOMPARE(records.size(), byTime.size() + 1);
        QCOMPARE(records[0], auditExportFields());
        for (std::size_t i = 1; i < records.size(); ++i) {
            QCOMPARE(records[i].size(), auditExportFields().size());
            if (records[i][0] != std::to_string(byTime[i - 1]))
                QFAIL(qPrintable(QStringLiteral("row %1 is event %2, not %3")
                                     .arg(i)
                                     .arg(QString::fromStdString(records[i][0]))
                                     .arg(byTime[i - 1])));
        }

        // JSON, under another sort (NULL jobs last).
        const AuditExportOptions json{.filter = {.env = "prod"},
                                      .sort = {AuditSort::Column::Job, false},
                                      .format = AuditExportFormat::Json};
        const std::vector<std::int64_t> byJob = idsOrdered(db, "env = 'prod'", "job", false);
        QCOMPARE(exportAuditFile(q, json, jsonPath), std::int64_t(byJob.size()));
        QJsonParseError error;
        const QJsonDocument doc =
            QJsonDocument::fromJson(QByteArray::fromStdString(readFile(jsonPath)), &error);
        QCOMPARE(error.error, QJsonParseError::NoError);
        const QJsonArray events = doc.array();
        QCOMPARE(std::size_t(events.size()), byJob.size());
        for (qsizetype i = 0; i < events.size(); ++i) {
            const QJsonObject e = events[i].toObject();
            if (e[QLatin1String("id")].toInteger() != byJob[std::size_t(i)])
                QFAIL(qPrintable(
                    QStringLiteral("element %1 is event %2").arg(i).arg(e[QLatin1String("id")].toInteger())));
            QCOMPARE(e[QLatin1String("env")].toString(), QStringLiteral("prod"));
        }
        // Only the two exports: no temporary file left behind.
        QCOMPARE(std::distance(std::filesystem::directory_iterator(dir.path().toStdString()),
                               std::filesystem::directory_iterator()),
                 2L);
    }

    // A cancelled export, or one that fails, leaves no file, and does not
    // replace a file already at the path.
    void cancelledOrFailedExportLeavesNoFile()
    {
        TestDatabase db;
        seedEvents(db, 30'000);
        Database conn(db.dsn());
        ConsoleQueries q(conn);
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("audit.csv")).toStdString();
        std::atomic<bool> cancel{false};
        int pages = 0;
        AuditExportOptions options{.cancel = &cancel, .progress = [&](std::int64_t) {
                                       if (++pages == 2)
                                           cancel = true; // as the GUI would, mid-export
                                   }};
        bool cancelled = false;
        try {
            exportAuditFile(q, options, path);
        } catch (const AuditExportCancelled&) {
            cancelled = true;
        }
        QVERIFY(cancelled);
        QCOMPARE(pages, 2);
        QVERIFY(std::filesystem::is_empty(dir.path().toStdString()));

        // An existing file stays as it was when the export fails (a bad range).
        {
            std::ofstream(path) << "earlier export\n";
        }
        options = AuditExportOptions{.filter = {.from = ms(2), .to = ms(1)}};
        QCOMPARE(errorOf([&] { exportAuditFile(q, options, path); }), ExitCode::Usage);
        QCOMPARE(readFile(path), std::string("earlier export\n"));
        QCOMPARE(std::distance(std::filesystem::directory_iterator(dir.path().toStdString()),
                               std::filesystem::directory_iterator()),
                 1L);
        // A directory that does not exist: an error, not a crash or a stray file.
        QCOMPARE(errorOf([&] {
                     exportAuditFile(q, {}, dir.filePath(QStringLiteral("missing/audit.csv")).toStdString());
                 }),
                 ExitCode::Internal);
    }

    // The export's chunks are written on a thread of their own: a write that
    // fails (a full disk) still ends the export with the error, at once.
    void aWriteThatFailsEndsTheExport()
    {
        TestDatabase db;
        seedEvents(db, 30'000); // several chunks of 1 MiB
        Database conn(db.dsn());
        ConsoleQueries q(conn);
        for (const auto format : {AuditExportFormat::Csv, AuditExportFormat::Json}) {
            std::ofstream full("/dev/full", std::ios::binary);
            QVERIFY(full.is_open());
            int pages = 0;
            const AuditExportOptions options{.format = format, .progress = [&](std::int64_t) { ++pages; }};
            std::string message;
            QCOMPARE(errorOf([&] { writeAuditExport(q, options, full); }, &message), ExitCode::Internal);
            QVERIFY2(message.find("could not write the export") != std::string::npos, message.c_str());
            QVERIFY(pages < 6); // ended by the failure, not after the last of 30,000 events
        }
    }

    // The export reads the rows the browser's pages show and writes them as
    // the page path's events would be written, byte for byte, whatever the
    // text holds (tabs, line breaks, backslashes, quotes, non-ASCII, control
    // characters) and whatever JSON a detail holds.
    void exportWritesWhatThePagesShow_data()
    {
        QTest::addColumn<int>("column");
        QTest::addColumn<bool>("descending");
        QTest::addColumn<bool>("json");
        QTest::addRow("time desc csv") << int(AuditSort::Column::Time) << true << false;
        QTest::addRow("time desc json") << int(AuditSort::Column::Time) << true << true;
        QTest::addRow("job asc csv") << int(AuditSort::Column::Job) << false << false;
        QTest::addRow("host asc json") << int(AuditSort::Column::Host) << false << true;
        QTest::addRow("outcome desc csv") << int(AuditSort::Column::Outcome) << true << false;
        QTest::addRow("actor desc json") << int(AuditSort::Column::Actor) << true << true;
    }

    void exportWritesWhatThePagesShow()
    {
        QFETCH(int, column);
        QFETCH(bool, descending);
        QFETCH(bool, json);
        TestDatabase db;
        db.exec(
            "INSERT INTO relctl.events (at, env, operation, outcome, reason, job, release, generation, "
            "token, "
            "current_release, op_id, host, pid, job_url, actor, client_addr, detail) "
            "SELECT timestamptz '1969-12-31 23:59:58.5Z' + i * interval '1234.567 milliseconds', "
            "(ARRAY['prod', NULL, 'staging'])[1 + i % 3], 'renew', "
            "CASE WHEN i % 7 = 0 THEN 'rejected' ELSE 'accepted' END, "
            "CASE WHEN i % 7 = 0 THEN E'two\\nlines' END, "
            "(ARRAY['job-x', NULL, E'tab\\there', E'back\\\\slash', 'gel\u00f6scht', E'ctl\\x01\\x7f', "
            "'a\"b,c', E'cr\\r\\nlf', ''])[1 + i % 9], "
            "CASE WHEN i % 3 = 0 THEN NULL ELSE 'v' || (i % 17) END, CASE WHEN i % 4 = 0 THEN NULL ELSE i % "
            "9 - 4 END, "
            "CASE WHEN i % 5 = 2 THEN 9007199254740993 WHEN i % 5 <> 1 THEN i % 6 END, "
            "CASE WHEN i % 2 = 1 THEN 'cur-' || i END, CASE WHEN i % 2 = 0 THEN 'op-' || i END, "
            "CASE WHEN i % 6 = 0 THEN NULL ELSE 'host-' || (i % 4) END, CASE WHEN i % 8 <> 0 THEN 1000 + i "
            "END, "
            "CASE WHEN i % 2 = 0 THEN 'https://ci.example/jobs/' || i || '?a=1&b=\"2\"' END, "
            "CASE WHEN i % 4 = 0 THEN 'alice' WHEN i % 4 = 2 THEN 'Zo\u00eb' END, "
            "CASE WHEN i % 3 = 0 THEN inet '10.0.0.7' WHEN i % 3 = 1 THEN inet '::1' END, "
            "(ARRAY[NULL, '{\"b\": 1, \"a\": [1.5, 2e3, true, null, \"x\\u0001y\"], \"\u00e9\": "
            "\"\u00fc\"}', "
            "'\"a string, with comma\"', '42', '3.14', 'true', 'null', '{\"z\": {\"y\": 1, \"x\": 2}}', "
            "'[]', "
            "'\"tab\\there\"', '{\"ttl_ms\": 60000, \"expires_at\": \"2024-01-01T00:00:00.5+00:00\"}', "
            "'{\"state\": \"released\"}', '{}', '{\"n\": -12, \"a b\": \"x,y\", \"Z\": 0, \"aa\": \"\"}', "
            "'{\"q\": \"say \\\"hi\\\"\", \"t\": 1.50, \"u\": \"caf\u00e9\"}', '{\"big\": "
            "123456789012345678901}'])"
            "[1 + i % 16]::jsonb "
            "FROM generate_series(1, 300) AS i");
        // Times the export's text form writes otherwise than a four-digit AD
        // year: before 1 AD, a five-digit year, the first and last microsecond
        // of a second.
        db.exec(
            "INSERT INTO relctl.events (at, env, operation, outcome) SELECT t, 'prod', 'renew', 'accepted' "
            "FROM unnest(ARRAY[timestamptz '0044-03-15 12:00:00.5Z BC', '0001-12-31 23:59:59.999999Z BC', "
            "'12021-06-01 00:00:00Z', '0001-01-01 00:00:00.000001Z', '2024-02-29 23:59:59.999999Z']) AS t");
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE job ~ '[\\t\\r\\n\\\\]'"), 101LL);
        constexpr std::size_t kEvents = 305;
        // A login whose own date style and time zone differ from the export's:
        // the export's times do not depend on them.
        Database conn(db.dsn() + " options='-c DateStyle=SQL,DMY -c TimeZone=Asia/Kolkata'");
        ConsoleQueries q(conn);
        const AuditSort sort{AuditSort::Column(column), descending};
        // What the page path gives, written event by event: the export's reference.
        std::ostringstream expected;
        const std::vector<Event> events = allPages(q, {}, 41, nullptr, sort);
        QCOMPARE(events.size(), kEvents);
        if (json) {
            expected << '[';
        } else {
            for (std::size_t i = 0; i < auditExportFields().size(); ++i)
                expected << (i == 0 ? "" : ",") << auditExportFields()[i];
            expected << "\r\n";
        }
        for (std::size_t i = 0; i < events.size(); ++i) {
            if (json) {
                expected << (i == 0 ? "\n" : ",\n");
                writeAuditJsonObject(expected, events[i]);
            } else {
                writeAuditCsvRow(expected, events[i]);
            }
        }
        if (json)
            expected << "\n]\n";
        std::ostringstream got;
        const AuditExportOptions options{
            .sort = sort, .format = json ? AuditExportFormat::Json : AuditExportFormat::Csv, .pageSize = 64};
        QCOMPARE(writeAuditExport(q, options, got), std::int64_t(kEvents));
        QCOMPARE(got.str(), expected.str());
    }

    // relctl.console_audit_export is an API any login can call directly, with
    // any arguments: a reviewer may (a job may not), a NULL direction, an
    // unknown sort, an outcome other than accepted or rejected and a range
    // that ends before it starts are invalid input, bounds beyond what a
    // timestamp holds are clamped, and nothing is ever written. The pages'
    // function holds to the same.
    void theExportFunctionWithstandsAnyArguments()
    {
        TestDatabase db;
        seedEvents(db, 200);
        const auto before = db.footprint();
        const auto exportCall = [](const std::string& args) {
            return "SELECT count(*) FROM relctl.console_audit_export(" + args + ")";
        };
        const auto state = [&](const std::string& dsn, const std::string& args) {
            return sqlState(dsn, exportCall(args));
        };
        const std::string nulls = "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL";
        QCOMPARE(state(db.reviewerDsn(), nulls), std::string("RC002")); // no direction
        QCOMPARE(state(db.reviewerDsn(), "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, true"),
                 std::string());
        QCOMPARE(state(db.jobDsn(), "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, true"),
                 std::string("42501"));
        for (const char* bad : {"'lease_id'", "'id; DROP TABLE relctl.events'", "'detail'", "''"})
            QCOMPARE(state(db.reviewerDsn(),
                           std::string("NULL, NULL, NULL, NULL, NULL, NULL, NULL, ") + bad + ", true"),
                     std::string("RC002"));
        QCOMPARE(state(db.reviewerDsn(), "NULL, NULL, NULL, NULL, 2, 1, NULL, 'time', true"),
                 std::string("RC002"));
        QCOMPARE(state(db.reviewerDsn(), "NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'time', true, 'maybe'"),
                 std::string("RC002"));
        // Bounds at the ends of bigint: everything, or nothing, never an overflow.
        const std::string all = "SELECT count(*) FROM relctl.console_audit_export(NULL, NULL, NULL, NULL, "
                                "-9223372036854775808, 9223372036854775807, NULL, 'token', false)";
        QCOMPARE(sqlState(db.reviewerDsn(), all), std::string());
        QCOMPARE(db.count(all), 200LL);
        QCOMPARE(db.count("SELECT count(*) FROM relctl.console_audit_export(NULL, NULL, NULL, NULL, "
                          "9223372036854775807, NULL, NULL, 'time', true)"),
                 0LL);
        // The filter is the pages' filter: the rows of one environment, refused only.
        QCOMPARE(
            db.count("SELECT count(*) FROM relctl.console_audit_export('prod', NULL, NULL, NULL, NULL, NULL, "
                     "NULL, 'host', true, 'rejected')"),
            db.count("SELECT count(*) FROM relctl.events WHERE env = 'prod' AND outcome = 'rejected'"));
        // The pages: a bad limit is refused, extreme bounds are clamped.
        const auto page = [](const std::string& bounds, const std::string& limit) {
            return "SELECT relctl.console_audit(NULL, NULL, NULL, NULL, " + bounds +
                   ", NULL, 'generation', true, NULL, NULL, NULL, " + limit + ")";
        };
        for (const char* limit : {"NULL", "0", "-1", "5001", "2147483647"})
            QCOMPARE(sqlState(db.reviewerDsn(), page("NULL, NULL", limit)), std::string("RC002"));
        QCOMPARE(sqlState(db.reviewerDsn(), page("-9223372036854775808, 9223372036854775807", "10")),
                 std::string());
        QCOMPARE(sqlState(db.jobDsn(), page("NULL, NULL", "10")), std::string("42501"));
        QCOMPARE(db.footprint(), before);
    }

    // relctl.console_audit_export_view, through which the export reads, is an
    // API too. It refuses what console_audit_export refuses; whatever a
    // caller sends as a value (quotes, the filter's own $n, format codes),
    // its view holds exactly the rows console_audit_export returns for the
    // same arguments; the view goes with the transaction that made it; kept
    // by a session that commits, no other login can read it, and its maker
    // can neither write through it nor redefine it; and nothing is written.
    void theExportViewWithstandsAnyArguments()
    {
        TestDatabase db;
        seedEvents(db, 300);
        seedNullKeys(db, 10);
        const auto before = db.footprint();
        const auto viewCall = [](const std::string& args) {
            return "SELECT relctl.console_audit_export_view(" + args + ")";
        };
        const std::string open = "NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'time', true";
        QCOMPARE(sqlState(db.reviewerDsn(),
                          viewCall("NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL")),
                 std::string("RC002")); // no direction
        QCOMPARE(sqlState(db.reviewerDsn(), viewCall(open)), std::string());
        QCOMPARE(sqlState(db.jobDsn(), viewCall(open)), std::string("42501"));
        for (const char* bad : {"'lease_id'", "'id; DROP TABLE relctl.events'", "'detail'", "''"})
            QCOMPARE(sqlState(db.reviewerDsn(),
                              viewCall(std::string("NULL, NULL, NULL, NULL, NULL, NULL, NULL, ") + bad +
                                       ", true")),
                     std::string("RC002"));
        QCOMPARE(sqlState(db.reviewerDsn(), viewCall("NULL, NULL, NULL, NULL, 2, 1, NULL, 'time', true")),
                 std::string("RC002"));
        QCOMPARE(sqlState(db.reviewerDsn(), viewCall(open + ", 'maybe'")), std::string("RC002"));

        pqxx::connection reviewer(db.reviewerDsn());
        const auto ids = [](pqxx::transaction_base& tx, const std::string& from) {
            std::vector<std::int64_t> out;
            for (const auto& r : tx.exec("SELECT id FROM " + from))
                out.push_back(r[0].as<std::int64_t>());
            return out;
        };
        // The same rows in the same order, whatever the values hold.
        const std::vector<std::string> values{"prod",     "job-1",
                                              "RUNNER",   "x' OR true --",
                                              "$1",       "$14",
                                              "p.p1",     "%s %L %I",
                                              "\\",       "'';DROP TABLE relctl.events;--",
                                              "e.id > 0", "NULL"};
        int matched = 0;
        for (const std::string& v : values) {
            const std::string literal = sqlLiteral(v);
            for (const std::string& args :
                 {literal + ", NULL, NULL, NULL, NULL, NULL, NULL, 'job', false",
                  "NULL, " + literal + ", NULL, NULL, NULL, NULL, NULL, 'release', true",
                  "NULL, NULL, " + literal + ", NULL, NULL, NULL, NULL, 'host', true",
                  "NULL, NULL, NULL, " + literal + ", NULL, NULL, NULL, 'time', false",
                  "NULL, NULL, NULL, NULL, -9223372036854775808, 9223372036854775807, " + literal +
                      ", 'token', true, 'accepted'"}) {
                pqxx::work tx(reviewer);
                QCOMPARE(tx.exec1(viewCall(args))[0].as<std::string>(),
                         std::string("pg_temp.relctl_audit_export"));
                const std::vector<std::int64_t> viaView = ids(tx, "pg_temp.relctl_audit_export");
                QCOMPARE(viaView, ids(tx, "relctl.console_audit_export(" + args + ")"));
                matched += viaView.empty() ? 0 : 1;
                tx.abort();
                // Gone with its transaction.
                QVERIFY(pqxx::nontransaction(reviewer)
                            .exec1("SELECT to_regclass('pg_temp.relctl_audit_export') IS NULL")[0]
                            .as<bool>());
            }
        }
        QVERIFY(matched >= 4); // the values that name rows found them
        // A view kept by a session that commits is that session's alone.
        const std::string schema = [&] {
            pqxx::nontransaction tx(reviewer);
            tx.exec(viewCall(open));
            return tx
                .exec1("SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                       "WHERE c.oid = 'pg_temp.relctl_audit_export'::regclass")[0]
                .as<std::string>();
        }();
        QCOMPARE(pqxx::nontransaction(reviewer)
                     .exec1("SELECT count(*) FROM pg_temp.relctl_audit_export")[0]
                     .as<long long>(),
                 310LL);
        const std::string elsewhere = "SELECT count(*) FROM " + schema + ".relctl_audit_export";
        QCOMPARE(sqlState(db.loginDsn("another_reviewer", {"relctl_reviewer"}), elsewhere),
                 std::string("42501"));
        QCOMPARE(sqlState(db.jobDsn(), elsewhere), std::string("42501"));
        const auto stateOf = [&](const std::string& sql) {
            try {
                pqxx::nontransaction(reviewer).exec(sql);
                return std::string();
            } catch (const pqxx::insufficient_privilege&) {
                return std::string("42501");
            } catch (const pqxx::sql_error& e) {
                return e.sqlstate();
            }
        };
        // (Refused as not updatable or not granted, whichever is checked first.)
        QVERIFY(!stateOf("DELETE FROM pg_temp.relctl_audit_export").empty());
        QVERIFY(!stateOf("UPDATE pg_temp.relctl_audit_export SET job = 'x'").empty());
        QCOMPARE(
            stateOf("CREATE OR REPLACE TEMPORARY VIEW relctl_audit_export AS SELECT * FROM relctl.events"),
            std::string("42501"));
        QCOMPARE(stateOf("DROP VIEW pg_temp.relctl_audit_export"), std::string("42501"));
        // A caller's own object of that name stops only its own export.
        pqxx::connection squatter(db.reviewerDsn());
        pqxx::nontransaction(squatter).exec("CREATE TEMPORARY VIEW relctl_audit_export AS SELECT 1 AS id");
        try {
            pqxx::nontransaction(squatter).exec(viewCall(open));
            QFAIL("the call replaced the caller's own view");
        } catch (const pqxx::sql_error&) {
        }
        QCOMPARE(
            pqxx::nontransaction(squatter).exec1("SELECT id FROM pg_temp.relctl_audit_export")[0].as<int>(),
            1);
        QCOMPARE(db.footprint(), before);
    }

    // Where a view cannot be made (a read-only session, as on a standby), the
    // export reads relctl.console_audit_export instead: the same bytes.
    void aReadOnlySessionExportsTheSame()
    {
        TestDatabase db;
        seedEvents(db, 3'000);
        seedNullKeys(db, 10);
        const std::string readOnly = db.reviewerDsn() + " options='-c default_transaction_read_only=on'";
        QCOMPARE(sqlState(readOnly,
                          "SELECT relctl.console_audit_export_view(NULL, NULL, NULL, NULL, NULL, NULL, "
                          "NULL, 'time', true)"),
                 std::string("25006"));
        Database writable(db.reviewerDsn());
        Database standby(readOnly);
        ConsoleQueries a(writable);
        ConsoleQueries b(standby);
        for (const AuditExportOptions& options :
             {AuditExportOptions{}, AuditExportOptions{.filter = {.env = "prod", .text = "RUNNER"},
                                    .sort = {AuditSort::Column::Host, true},
                                    .format = AuditExportFormat::Json}}) {
            std::ostringstream viaView;
            std::ostringstream viaFunction;
            const std::int64_t rows = writeAuditExport(a, options, viaView);
            QVERIFY(rows > 100);
            QCOMPARE(writeAuditExport(b, options, viaFunction), rows);
            QCOMPARE(viaFunction.str(), viaView.str());
        }
    }

private:
    std::unique_ptr<TestDatabase> m_sortDb;
};

QTEST_GUILESS_MAIN(TestConsole)
#include "test_console.moc"
