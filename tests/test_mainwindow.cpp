// The release console as a whole, offscreen, against a real database seeded
// through the protocol: the views fill from the worker, a refused write is
// traced, live events appear without a reload, operator actions (revoke,
// approve, deny, freeze, unfreeze) go through their confirmation and reach
// the audit trail, the timeline and the audit browser select each other, and
// what became of a job or an op id is asked of the database and shown on the
// status card, and --screenshot renders the window.

#define RELCTL_TEST_NO_SHORT_NAME // core's namespace relctl is visible here
#include "actiondialog.h"
#include "auditmodel.h"
#include "auditview.h"
#include "consoleclicks.h"
#include "consolesession.h"
#include "consoleviews.h"
#include "demodatabase.h"
#include "demoopening.h"
#include "environmentsmodel.h"
#include "environmentsview.h"
#include "jobstatus.h"
#include "mainwindow.h"
#include "postgresbackend.h"
#include "relctl/database.h"
#include "relctl/demo.h"
#include "relctl/embedded.h"
#include "relctlprocess.h"
#include "statuscard.h"
#include "statusdialog.h"
#include "supersessionsview.h"
#include "testconsole.h"
#include "testdatabase.h"
#include "timelinewidget.h"
#include "tracepanel.h"

#include <QApplication>
#include <QComboBox>
#include <QDateTime>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QLineEdit>
#include <QListWidget>
#include <QProcess>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QToolButton>
#include <QtTest>

using namespace relctl::ui;

namespace {

using Console = TestConsole;

qint64 selectedAuditEvent(Console& c)
{
    const QModelIndexList rows = c.window.auditView()->table()->selectionModel()->selectedRows();
    if (rows.size() != 1)
        return 0;
    const relctl::Event* e = c.session.audit()->eventAt(rows.first().row());
    return e ? e->id : 0;
}

} // namespace

class TestMainWindow final : public QObject
{
    Q_OBJECT

    std::unique_ptr<DemoDatabase> m_demo;
    TestDatabase* m_db = nullptr;

    // A holder of env and, queued behind it, one waiter per generation, each
    // (as relctl does) a live process holding its place. Under the approval
    // policy (staging in the demo), the newest opens a supersession request.
    std::vector<std::unique_ptr<QProcess>> holdAndQueue(const std::string& env, const std::string& prefix,
                                                        std::int64_t holderGeneration,
                                                        const std::vector<std::int64_t>& waiting,
                                                        std::string& handle)
    {
        const RunResult held = runRelctl(*m_db, {"lease", "acquire", "--env", env, "--job", prefix + "holder",
                                                 "--release", "v1." + std::to_string(holderGeneration),
                                                 "--generation", std::to_string(holderGeneration)});
        [&] { QCOMPARE(held.exitCode, 0); }();
        handle = held.line();
        std::vector<std::unique_ptr<QProcess>> waiters;
        for (std::int64_t g : waiting) {
            const std::string job = prefix + "waiter-" + std::to_string(g);
            // The CI jobs' login: the console's own may not approve skipping for them.
            waiters.push_back(
                startRelctlWithDsn(m_demo->jobDsn(), {"lease", "acquire", "--env", env, "--job", job,
                                                      "--release", "v1." + std::to_string(g), "--generation",
                                                      std::to_string(g), "--wait", "60s"}));
            [&] {
                QTRY_COMPARE_WITH_TIMEOUT(
                    m_db->count("SELECT count(*) FROM relctl.candidates WHERE state = 'waiting' AND job = '" +
                                job + "'"),
                    1LL, 10000);
            }();
            if (QTest::currentTestFailed()) {
                waiters.back()->waitForFinished(1000);
                qWarning("%s did not queue: %s", job.c_str(),
                         waiters.back()->readAllStandardError().toStdString().c_str());
                break;
            }
        }
        return waiters;
    }

private slots:
    void initTestCase()
    {
        // Settings of the tests' own, never the user's.
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        m_demo = std::make_unique<DemoDatabase>();
        m_db = &m_demo->db();
        qInfo("the demo's week seeded in %lld ms (initdb, migrate, two restarts included)", m_demo->seedMs);
        // The supersession tests queue fresh generations on staging, which
        // test (staging's upstream in the demo) never accepted: they are
        // about the queue, not promotions (test_consolepromotions).
        relctl::Database(m_db->dsn())
            .setEnvironment(
                {"staging", std::nullopt, std::nullopt, std::nullopt, "", std::nullopt, std::nullopt});
    }

    // The demo history is the protocol's own doing, so the history checker
    // finds nothing wrong in it (run before the other tests add to it).
    void theDemoHistoryVerifiesClean()
    {
        const RunResult r = relctlWithDsn(m_db->dsn(), {"--json", "verify"});
        QVERIFY2(r.exitCode == 0, (r.out + r.err).c_str());
        QCOMPARE(r.json()["passed"].get<bool>(), true);
        QVERIFY(r.json()["checks"].size() >= 5);
    }

    // The demo is a week of work, written at the times the story gives each
    // step by the server's own clock: seven days back from just before now,
    // at working hours, by people and jobs with logins of their own.
    void theDemoIsAWeekAtWorkingHours()
    {
        const auto end =
            std::chrono::duration_cast<std::chrono::milliseconds>(m_demo->end.time_since_epoch()).count();
        const auto first =
            m_db->count("SELECT (extract(epoch FROM min(at)) * 1000)::bigint FROM relctl.events");
        // (The tests' own changes come later, under the OS user's login.)
        const auto last =
            m_db->count("SELECT (extract(epoch FROM max(at)) * 1000)::bigint FROM relctl.events "
                        "WHERE db_user IN ('alice', 'bob', 'carol', 'dave', 'ci')");
        constexpr long long day = 24LL * 3600 * 1000;
        QVERIFY2(last - first > 5 * day && last - first < 7 * day, qPrintable(QString::number(last - first)));
        QVERIFY(last <= end + 1000 && last > end - 10 * 60 * 1000); // just before now
        QVERIFY(m_db->count("SELECT count(DISTINCT at::date) FROM relctl.events") >= 5);
        // Before today's incident, at working hours (UTC), a few in the evening.
        const std::string before =
            "at < to_timestamp(" + std::to_string(end / 1000) + ") - interval '6 hours'";
        const long long all = m_db->count("SELECT count(*) FROM relctl.events WHERE " + before);
        const long long working =
            m_db->count("SELECT count(*) FROM relctl.events WHERE " + before +
                        " AND extract(hour FROM at AT TIME ZONE 'UTC') BETWEEN 8 AND 18");
        const long long evening =
            m_db->count("SELECT count(*) FROM relctl.events WHERE " + before +
                        " AND extract(hour FROM at AT TIME ZONE 'UTC') BETWEEN 19 AND 21");
        QVERIFY2(all > 100 && working + evening == all && evening > 0 && evening < all / 10,
                 qPrintable(QStringLiteral("%1 %2 %3").arg(all).arg(working).arg(evening)));
        // Leases last minutes, not milliseconds.
        QVERIFY(
            m_db->count(
                "SELECT count(*) FROM relctl.leases WHERE ended_at - acquired_at > interval '3 minutes'") >
            20);
        // Dozens of releases, promoted test → staging → prod.
        QVERIFY(
            m_db->count("SELECT count(DISTINCT generation) FROM relctl.events WHERE operation = 'publish' "
                        "AND outcome = 'accepted'") >= 24);
        QVERIFY(m_db->count("SELECT count(*) FROM relctl.events WHERE operation = 'publish' AND outcome = "
                            "'accepted' AND env = 'prod'") >= 4);
        // Races, expiries, a revoke, a freeze with a rollback on prod.
        QVERIFY(m_db->count("SELECT count(*) FROM relctl.events WHERE reason = 'STALE_GENERATION'") >= 3);
        QVERIFY(m_db->count("SELECT count(*) FROM relctl.events WHERE reason = 'LEASE_EXPIRED'") >= 1);
        QVERIFY(m_db->count("SELECT count(*) FROM relctl.events WHERE operation = 'revoke'") == 1);
        QVERIFY(m_db->count("SELECT count(*) FROM relctl.events r JOIN relctl.events f ON f.env = r.env "
                            "AND f.operation = 'freeze' AND r.operation = 'rollback' AND r.env = 'prod' "
                            "AND r.at > f.at AND r.at < f.at + interval '1 hour'") == 1);
        // Each person through their own login; the jobs through theirs.
        QCOMPARE(m_db->count("SELECT count(DISTINCT db_user) FROM relctl.events "
                             "WHERE operation = 'promotion-approve'"),
                 3LL);
        QCOMPARE(m_db->count("SELECT count(*) FROM relctl.events WHERE operation = 'promotion-approve' "
                             "AND db_user <> actor"),
                 0LL);
        QCOMPARE(m_db->scalar("SELECT string_agg(DISTINCT db_user, ',') FROM relctl.events "
                              "WHERE operation IN ('acquire', 'publish', 'release')"),
                 std::string("ci"));
    }

    void viewsFillAndARefusalIsTraced()
    {
        Console c{*m_db};
        ConsoleSession& session = c.session;
        MainWindow& window = c.window;
        QTRY_COMPARE_WITH_TIMEOUT(session.environments()->rowCount(), 3, 15000);
        QTRY_VERIFY_WITH_TIMEOUT(session.audit()->rowCount() > 10, 15000);

        // Pick the seeded stale write in the audit browser: the trace names
        // the job that won and the manifest that was current.
        std::optional<int> staleRow;
        for (int row = 0; row < session.audit()->rowCount(); ++row) {
            const relctl::Event* e = session.audit()->eventAt(row);
            if (e && e->reason && *e->reason == "STALE_GENERATION" && !staleRow)
                staleRow = row; // the newest: today's, on prod
        }
        QVERIFY(staleRow);
        QTableView* table = window.auditView()->table();
        table->selectionModel()->setCurrentIndex(session.audit()->index(*staleRow, 0),
                                                 QItemSelectionModel::ClearAndSelect |
                                                     QItemSelectionModel::Rows);
        QTRY_VERIFY_WITH_TIMEOUT(window.tracePanel()->text().contains(QStringLiteral("pipeline-139")), 10000);
        // The time range narrows through the server: a window in the future is empty.
        QComboBox* since = nullptr;
        for (QComboBox* box : window.auditView()->findChildren<QComboBox*>())
            if (box->toolTip() == QStringLiteral("Time range"))
                since = box;
        QVERIFY(since);
        since->setCurrentIndex(2); // the last hour: the end of today's story
        QVERIFY(session.audit()->filter().from.has_value());
        QTRY_VERIFY_WITH_TIMEOUT(session.audit()->rowCount() > 10, 10000);
        const QString trace = window.tracePanel()->text();
        QVERIFY(trace.contains(QStringLiteral("pipeline-138")));
        QVERIFY(trace.contains(QStringLiteral("v1.39")));
        // A span a person reads ("1.25 s", "1 min 43 s"), not a count of milliseconds.
        QVERIFY(
            QRegularExpression(QStringLiteral("published by job pipeline-139 at .* — "
                                              "[0-9.]+ (ms|s|min [0-9]+ s|h [0-9]+ min) before the refusal"))
                .match(trace)
                .hasMatch());
        QVERIFY(!QRegularExpression(QStringLiteral("[0-9]{4,} ms")).match(trace).hasMatch());
    }

    // The demo's revoked job comes back to publish: its refusal is traced
    // to the release manager who revoked it and their reason.
    void aRevokedPublishIsTracedToTheOperatorAndReason()
    {
        const qint64 refused = std::stoll(m_db->scalar(
            "SELECT id FROM relctl.events WHERE reason = 'LEASE_REVOKED' AND job = 'pipeline-140'"));
        Console c{*m_db};
        QTRY_VERIFY_WITH_TIMEOUT(auditRow(c.session.audit(), refused).has_value(), 15000);
        c.window.selectEvent(
            refused, c.session.audit()->eventAt(*auditRow(c.session.audit(), refused))->at.millis(), true);
        QTRY_VERIFY_WITH_TIMEOUT(c.window.tracePanel()->text().contains(QStringLiteral("LEASE_REVOKED")),
                                 10000);
        const QString trace = c.window.tracePanel()->text();
        for (const char* part :
             {"publish on staging refused", "dave", "deploy stuck on a health check", "pipeline-140"})
            QVERIFY2(trace.contains(QLatin1String(part)), qPrintable(trace));
    }

    void liveEventsAppearWithoutReload()
    {
        Console c{*m_db};
        ConsoleSession& session = c.session;
        MainWindow& window = c.window;
        QTRY_COMPARE_WITH_TIMEOUT(session.environments()->rowCount(), 3, 15000);
        QCOMPARE(runRelctl(*m_db, {"env", "add", "canary"}).exitCode, 0);
        QTRY_COMPARE_WITH_TIMEOUT(session.environments()->rowCount(), 4, 10000);

        // Another process freezes canary, and a job's acquire is refused
        // there: both reach the audit browser and the timeline by themselves.
        QTRY_VERIFY_WITH_TIMEOUT(window.timeline()->timelineGeometry().laneCount() == 4, 10000);
        QCOMPARE(
            runRelctl(*m_db, {"freeze", "--env", "canary", "--by", "cli-operator", "--reason", "elsewhere"})
                .exitCode,
            0);
        QVERIFY(runRelctl(*m_db, {"lease", "acquire", "--env", "canary", "--job", "late-job", "--release",
                                  "v2.1", "--generation", "1"})
                    .exitCode != 0);
        const qint64 freeze =
            m_db->count("SELECT id FROM relctl.events WHERE env = 'canary' AND operation = 'freeze'");
        const qint64 refusal = m_db->count("SELECT id FROM relctl.events WHERE env = 'canary' AND outcome = "
                                           "'rejected' AND job = 'late-job'");
        for (qint64 id : {freeze, refusal}) {
            QTRY_VERIFY_WITH_TIMEOUT(auditRow(session.audit(), id).has_value(), 10000);
            QTRY_VERIFY_WITH_TIMEOUT(window.timeline()->markerPosition(id).has_value(), 10000);
        }
        // Drawn as a refusal (red), on top of the freeze a moment earlier.
        const TimelineHit hit =
            window.timeline()->itemAt(window.timeline()->markerPosition(refusal)->toPoint());
        QVERIFY(hit.isMarker());
        QCOMPARE(hit.marker->kind, std::string("refusal"));
        QCOMPARE(runRelctl(*m_db, {"unfreeze", "--env", "canary", "--by", "cli-operator"}).exitCode, 0);
    }

    void anOperatorActionIsConfirmedAndRecorded()
    {
        Console c{*m_db};
        QTRY_VERIFY_WITH_TIMEOUT(c.session.environments()->rowCount() >= 3, 15000);
        QTRY_VERIFY_WITH_TIMEOUT(c.session.connection().schemaVersion >= 2, 10000);
        // Select "test" (it holds a live lease) and click "Revoke lease…".
        selectEnvironment(c.window, QStringLiteral("test"));
        auto* revoke = button<QToolButton>(c.window.environmentsView(), QStringLiteral("Revoke"));
        QVERIFY(revoke);
        QTRY_VERIFY_WITH_TIMEOUT(revoke->isEnabled(), 5000);
        QSignalSpy finished(&c.session, &ConsoleSession::actionFinished);
        const auto answered = confirmNextAction({}, QStringLiteral("stuck in the test"));
        revoke->click();
        QVERIFY(*answered);
        QVERIFY(finished.wait(10000));
        QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));
        QCOMPARE(m_db->count("SELECT count(*) FROM relctl.events WHERE operation = 'revoke' AND env = 'test' "
                             "AND detail->>'reason' = 'stuck in the test'"),
                 1LL);
    }

    void aSupersessionIsApprovedFromTheConsole()
    {
        // A pending request needs live waiters: staging is newest/approval in the demo.
        std::string h;
        auto waiters = holdAndQueue("staging", "", 120, {121, 122}, h);
        if (QTest::currentTestFailed())
            return;
        Console c{*m_db};
        QTRY_COMPARE_WITH_TIMEOUT(c.window.supersessionsView()->count(), 1, 15000);
        c.window.supersessionsView()->findChild<QListWidget*>()->setCurrentRow(0);
        auto* approve = button<QPushButton>(c.window.supersessionsView(), QStringLiteral("Approve"));
        QVERIFY(approve);
        QTRY_VERIFY_WITH_TIMEOUT(approve->isEnabled(), 5000);
        QSignalSpy finished(&c.session, &ConsoleSession::actionFinished);
        const auto answered = confirmNextAction({}, {}); // an approval's reason is optional
        approve->click();
        QVERIFY(*answered);
        QVERIFY(finished.wait(10000));
        QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));
        QCOMPARE(
            m_db->count("SELECT count(*) FROM relctl.events WHERE operation = 'approve' AND env = 'staging'"),
            1LL);
        // The skipped waiter is refused at once; the winner waits for the holder.
        QVERIFY(waiters[0]->waitForFinished(10000));
        QCOMPARE(waiters[0]->exitCode(), 4);
        QCOMPARE(runRelctl(*m_db, {"lease", "release", "--lease", h}).exitCode, 0);
        QVERIFY(waiters[1]->waitForFinished(10000));
        QCOMPARE(waiters[1]->exitCode(), 0);
        // The waiter's lease is not ours to release: end it the operator's way.
        runRelctl(*m_db, {"lease", "revoke", "--env", "staging", "--by", "test", "--reason", "clean up"});
    }

    void aSupersessionIsDeniedFromTheConsole()
    {
        std::string h;
        auto waiters = holdAndQueue("staging", "deny-", 130, {131, 132}, h);
        if (QTest::currentTestFailed())
            return;
        const std::string request =
            m_db->scalar("SELECT id FROM relctl.supersessions WHERE env = 'staging' AND state = 'pending'");
        Console c{*m_db};
        QTRY_COMPARE_WITH_TIMEOUT(c.window.supersessionsView()->count(), 1, 15000);
        c.window.supersessionsView()->findChild<QListWidget*>()->setCurrentRow(0);
        auto* deny = button<QPushButton>(c.window.supersessionsView(), QStringLiteral("Deny"));
        QVERIFY(deny);
        QTRY_VERIFY_WITH_TIMEOUT(deny->isEnabled(), 5000);
        QSignalSpy finished(&c.session, &ConsoleSession::actionFinished);
        // A denial needs a reason: without one the confirmation does not proceed.
        auto answered = confirmNextAction(QStringLiteral("rm-alice"), {});
        deny->click();
        QVERIFY(!*answered);
        QCOMPARE(finished.count(), 0);
        answered = confirmNextAction(QStringLiteral("rm-alice"), QStringLiteral("v1.131 ships first"));
        deny->click();
        QVERIFY(*answered);
        QVERIFY(finished.wait(10000));
        QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));

        QCOMPARE(m_db->scalar("SELECT concat_ws(' | ', state, decided_by, reason) FROM relctl.supersessions "
                              "WHERE id = " +
                              request),
                 std::string("denied | rm-alice | v1.131 ships first"));
        QCOMPARE(
            m_db->count("SELECT count(*) FROM relctl.events WHERE operation = 'deny' AND env = 'staging' "
                        "AND outcome = 'accepted' AND actor = 'rm-alice' AND job = 'deny-waiter-132' "
                        "AND detail->>'reason' = 'v1.131 ships first' AND detail->>'request' = '" +
                        request + "'"),
            1LL);
        // The decision is live in the console too: the request leaves the list.
        QTRY_COMPARE_WITH_TIMEOUT(c.window.supersessionsView()->count(), 0, 10000);
        // The skipped candidate keeps its place: it is still waiting, first
        // in line, and takes the lease when the holder lets go; the would-be
        // winner keeps waiting behind it.
        QCOMPARE(
            m_db->count("SELECT count(*) FROM relctl.candidates WHERE env = 'staging' AND state = 'waiting' "
                        "AND job = 'deny-waiter-131'"),
            1LL);
        QCOMPARE(m_db->scalar("SELECT job FROM relctl.queue_head('staging')"),
                 std::string("deny-waiter-131"));
        QCOMPARE(runRelctl(*m_db, {"lease", "release", "--lease", h}).exitCode, 0);
        QVERIFY(waiters[0]->waitForFinished(10000));
        QCOMPARE(waiters[0]->exitCode(), 0);
        QCOMPARE(
            m_db->scalar("SELECT job FROM relctl.leases WHERE env = 'staging' ORDER BY token DESC LIMIT 1"),
            std::string("deny-waiter-131"));
        QCOMPARE(waiters[1]->state(), QProcess::Running);
        QCOMPARE(m_db->count("SELECT count(*) FROM relctl.candidates WHERE state = 'waiting' "
                             "AND job = 'deny-waiter-132'"),
                 1LL);
        // Clean up the operator's way: the winner gets its turn, then ends too.
        runRelctl(*m_db, {"lease", "revoke", "--env", "staging", "--by", "test", "--reason", "clean up"});
        QVERIFY(waiters[1]->waitForFinished(10000));
        QCOMPARE(waiters[1]->exitCode(), 0);
        runRelctl(*m_db, {"lease", "revoke", "--env", "staging", "--by", "test", "--reason", "clean up"});
    }

    void dispatchIsFrozenAndUnfrozenFromTheConsole()
    {
        Console c{*m_db};
        QTRY_VERIFY_WITH_TIMEOUT(c.session.environments()->rowCount() >= 3, 15000);
        QTRY_VERIFY_WITH_TIMEOUT(c.session.connection().schemaVersion >= 2, 10000);
        selectEnvironment(c.window, QStringLiteral("test"));
        QAbstractItemModel* shown = c.window.environmentsView()->table()->model();
        const auto frozenInView = [&] {
            for (int row = 0; row < shown->rowCount(); ++row)
                if (shown->index(row, 0).data().toString() == QStringLiteral("test"))
                    return shown->index(row, 0).data(EnvironmentsModel::Frozen).toBool();
            return false;
        };
        auto* freeze = button<QToolButton>(c.window.environmentsView(), QStringLiteral("Freeze"));
        auto* unfreeze = button<QToolButton>(c.window.environmentsView(), QStringLiteral("Unfreeze"));
        QVERIFY(freeze && unfreeze);
        QTRY_VERIFY_WITH_TIMEOUT(freeze->isEnabled(), 5000);
        QVERIFY(!unfreeze->isEnabled());
        QVERIFY(!frozenInView());

        QSignalSpy finished(&c.session, &ConsoleSession::actionFinished);
        auto answered = confirmNextAction(QStringLiteral("rm-bob"), QStringLiteral("change window closed"));
        freeze->click();
        QVERIFY(*answered);
        QVERIFY(finished.wait(10000));
        QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));
        QCOMPARE(m_db->scalar("SELECT concat_ws(' | ', frozen_by, frozen_reason) FROM relctl.environments "
                              "WHERE name = 'test' AND frozen_at IS NOT NULL"),
                 std::string("rm-bob | change window closed"));
        QCOMPARE(m_db->count("SELECT count(*) FROM relctl.events WHERE operation = 'freeze' AND env = 'test' "
                             "AND actor = 'rm-bob' AND detail->>'reason' = 'change window closed'"),
                 1LL);
        // The view follows the database's notification, not a reload.
        QTRY_VERIFY_WITH_TIMEOUT(frozenInView(), 10000);
        QTRY_VERIFY_WITH_TIMEOUT(unfreeze->isEnabled(), 5000);
        QVERIFY(!freeze->isEnabled());

        finished.clear();
        answered = confirmNextAction(QStringLiteral("rm-bob"), {}); // lifting a freeze needs no reason
        unfreeze->click();
        QVERIFY(*answered);
        QVERIFY(finished.wait(10000));
        QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));
        QCOMPARE(
            m_db->count("SELECT count(*) FROM relctl.environments WHERE name = 'test' AND frozen_at IS NULL"),
            1LL);
        // The unfreeze names its operator and the freeze it lifted (who and why).
        QCOMPARE(
            m_db->count("SELECT count(*) FROM relctl.events WHERE operation = 'unfreeze' AND env = 'test' "
                        "AND actor = 'rm-bob' AND detail->>'frozen_by' = 'rm-bob' "
                        "AND detail->>'frozen_reason' = 'change window closed'"),
            1LL);
        QTRY_VERIFY_WITH_TIMEOUT(!frozenInView(), 10000);
        QTRY_VERIFY_WITH_TIMEOUT(freeze->isEnabled(), 5000);
    }

    void timelineAndAuditBrowserSelectEachOther()
    {
        Console c{*m_db};
        QTRY_VERIFY_WITH_TIMEOUT(c.session.audit()->rowCount() > 10, 15000);
        // The seeded stale write (r8's late publish on prod) and one more refusal.
        const qint64 stale = m_db->count("SELECT id FROM relctl.events WHERE reason = 'STALE_GENERATION' "
                                         "AND operation = 'publish' ORDER BY id DESC LIMIT 1");
        const qint64 other =
            m_db->count("SELECT id FROM relctl.events WHERE outcome = 'rejected' AND id <> " +
                        std::to_string(stale) + " ORDER BY id DESC LIMIT 1");
        QVERIFY(stale > 0 && other > 0);
        QTRY_VERIFY_WITH_TIMEOUT(auditRow(c.session.audit(), stale) && auditRow(c.session.audit(), other),
                                 10000);
        const relctl::Event event = *c.session.audit()->eventAt(*auditRow(c.session.audit(), stale));
        QVERIFY(event.job && event.token);

        // Zoomed in on it (a second around it), the
        // marker is where the widget's geometry says: click it there.
        TimelineWidget* timeline = c.window.timeline();
        timeline->setVisibleRange(event.at.millis() - 500, event.at.millis() + 500);
        QTRY_VERIFY_WITH_TIMEOUT(timeline->markerPosition(stale).has_value(), 10000);
        const TimelineGeometry& g = timeline->timelineGeometry();
        const QPoint at(
            static_cast<int>(std::lround(g.plotLeft() + g.xForTime(static_cast<double>(event.at.millis())))),
            static_cast<int>(std::lround(g.markerY(g.laneAt(timeline->markerPosition(stale)->y())))));
        QCOMPARE(at, timeline->markerPosition(stale)->toPoint());
        QCOMPARE(timeline->itemAt(at).eventId(), stale);
        QSignalSpy clicked(timeline, &TimelineWidget::eventSelected);
        QTest::mouseClick(timeline, Qt::LeftButton, {}, at);
        QCOMPARE(clicked.count(), 1);
        QTRY_COMPARE_WITH_TIMEOUT(selectedAuditEvent(c), stale, 10000);
        // The trace tells its story: the job and the lease token it presented.
        QTRY_VERIFY_WITH_TIMEOUT(c.window.tracePanel()->text().contains(QString::fromStdString(*event.job)),
                                 10000);
        const QString trace = c.window.tracePanel()->text();
        QVERIFY2(trace.contains(QStringLiteral("token")) && trace.contains(QString::number(*event.token)),
                 qPrintable(trace));

        // And back: a refusal picked in the audit browser is selected on the timeline.
        QTableView* table = c.window.auditView()->table();
        table->selectionModel()->setCurrentIndex(
            c.session.audit()->index(*auditRow(c.session.audit(), other), 0),
            QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        QTRY_COMPARE_WITH_TIMEOUT(timeline->selectedEvent(), other, 10000);
        QTRY_VERIFY_WITH_TIMEOUT(timeline->markerPosition(other).has_value(), 10000);
        QCOMPARE(clicked.count(), 1); // no echo back from the timeline
    }

    // The demo's fabricated history never lands in a real database: named
    // by --dsn, the run is refused before it connects, and nothing is
    // written. (A saved connection is simply not used: see
    // theDemoHasADatabaseOfItsOwn.)
    void theDemoRefusesADatabaseNamedByDsn()
    {
        const long long before = m_db->count("SELECT count(*) FROM relctl.events");
        QTemporaryDir config;
        {
            QSettings saved(config.filePath(QStringLiteral("relctl/release-console.conf")),
                            QSettings::IniFormat);
            saved.setValue(QStringLiteral("connection/mode"), QStringLiteral("dsn"));
            saved.setValue(QStringLiteral("connection/dsn"), QString::fromStdString(m_db->dsn()));
        }
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), config.path());
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        for (const char* name : {"RELCTL_DSN", "PGHOST", "PGDATABASE", "PGSERVICE"})
            env.remove(QLatin1String(name));
        const auto run = [&](const QStringList& args) {
            QProcess console;
            console.setProcessEnvironment(env);
            console.start(QStringLiteral(RELEASE_CONSOLE_BIN), args);
            if (!console.waitForFinished(30000))
                console.kill();
            return std::make_pair(console.exitCode(), QString::fromLocal8Bit(console.readAllStandardError()));
        };
        const auto [namedCode, namedErr] =
            run({QStringLiteral("--demo"), QStringLiteral("--dsn"), QString::fromStdString(m_db->dsn()),
                 QStringLiteral("--screenshot"), config.filePath(QStringLiteral("shot.png"))});
        QCOMPARE(namedCode, 2);
        QVERIFY2(namedErr.contains(QStringLiteral("never a database named by --dsn")), qPrintable(namedErr));
        QCOMPARE(m_db->count("SELECT count(*) FROM relctl.events"), before);
        QVERIFY(!QFile::exists(config.filePath(QStringLiteral("shot.png"))));
    }

    // release-console --demo opens on the last day of the week, on its
    // refused stale write; one gesture (Shift+F) shows the whole week.
    void theDemoOpensOnItsLastDay()
    {
        const qint64 stale = m_db->count("SELECT id FROM relctl.events WHERE reason = 'STALE_GENERATION' "
                                         "AND operation = 'publish' ORDER BY id DESC LIMIT 1");
        const qint64 first =
            m_db->count("SELECT (extract(epoch FROM min(at)) * 1000)::bigint FROM relctl.events");
        Console c{*m_db};
        openOnLastDay(&c.session, &c.window);
        TimelineWidget* timeline = c.window.timeline();
        QTRY_COMPARE_WITH_TIMEOUT(timeline->selectedEvent(), stale, 20000);
        constexpr qint64 hour = 3600 * 1000;
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        QVERIFY2(std::abs(timeline->visibleTo() - timeline->visibleFrom() - 24 * hour) < 1000,
                 qPrintable(QString::number(timeline->visibleTo() - timeline->visibleFrom())));
        QVERIFY(std::abs(timeline->visibleTo() - (now + hour)) < 2 * 60 * 1000);
        QVERIFY(timeline->markerPosition(stale).has_value()); // on screen
        QTRY_VERIFY_WITH_TIMEOUT(c.window.tracePanel()->text().contains(QStringLiteral("pipeline-139")),
                                 10000);

        timeline->setFocus();
        QTest::keyClick(timeline, Qt::Key_F, Qt::ShiftModifier);
        QVERIFY2(timeline->visibleFrom() <= first &&
                     timeline->visibleTo() - timeline->visibleFrom() > 5 * 24 * hour,
                 qPrintable(QStringLiteral("%1 %2 %3")
                                .arg(timeline->visibleFrom())
                                .arg(timeline->visibleTo())
                                .arg(first)));
    }

    // The demo's week goes into a cluster of its own, beside the embedded
    // one, which it never creates or touches; its server is back on the
    // real clock when the console opens.
    void theDemoHasADatabaseOfItsOwn()
    {
        QTemporaryDir home(QStringLiteral("/tmp/relctl-demohome-XXXXXX"));
        QFile::setPermissions(home.path(), QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                               QFileDevice::ExeOwner | QFileDevice::ExeGroup |
                                               QFileDevice::ExeOther);
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), home.filePath(QStringLiteral("config")));
        env.insert(QStringLiteral("XDG_DATA_HOME"), home.path());
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        for (const char* name : {"RELCTL_DSN", "PGHOST", "PGDATABASE", "PGSERVICE"})
            env.remove(QLatin1String(name));
        // A saved connection string does not keep the demo away: --demo
        // opens its own database whatever was saved.
        {
            QSettings saved(home.filePath(QStringLiteral("config/relctl/release-console.conf")),
                            QSettings::IniFormat);
            saved.setValue(QStringLiteral("connection/mode"), QStringLiteral("dsn"));
            saved.setValue(QStringLiteral("connection/dsn"), QString::fromStdString(m_db->dsn()));
        }
        QProcess console;
        console.setProcessEnvironment(env);
        QElapsedTimer timer;
        timer.start();
        console.start(QStringLiteral(RELEASE_CONSOLE_BIN),
                      {QStringLiteral("--demo"), QStringLiteral("--screenshot"),
                       home.filePath(QStringLiteral("shot.png"))});
        const bool finished = console.waitForFinished(120000);
        relctl::EmbeddedCluster demo(home.filePath(QStringLiteral("relctl-demo")).toStdString());
        const bool onFakeClock = demo.onControlledClock();
        const bool running = demo.running();
        demo.stop();
        QVERIFY(finished);
        qInfo("release-console --demo, first run (initdb, seed, screenshot): %lld ms", timer.elapsed());
        QVERIFY2(console.exitCode() == 0, console.readAllStandardError().constData());
        QVERIFY(QFile::exists(home.filePath(QStringLiteral("shot.png"))));
        QVERIFY(running);
        QVERIFY(!onFakeClock);
        QVERIFY(QFile::exists(home.filePath(QStringLiteral("relctl-demo/data/PG_VERSION"))));
        QVERIFY(!QFile::exists(home.filePath(QStringLiteral("relctl")))); // the embedded default: never made
    }

    // The status card asks the real database through the worker: a job that
    // acquired and published is completed (as relctl status says), by its
    // name and by its publish's op id; an op id never sent is unknown, and
    // a retry is safe.
    void aStatusLookupIsAnsweredByTheDatabase()
    {
        QCOMPARE(runRelctl(*m_db, {"env", "add", "status-card"}).exitCode, 0);
        const RunResult held =
            runRelctl(*m_db, {"lease", "acquire", "--env", "status-card", "--job", "card-job", "--release",
                              "v7", "--generation", "7", "--op-id", "card-job-acquire"});
        QCOMPARE(held.exitCode, 0);
        QCOMPARE(
            runRelctl(*m_db, {"publish", "--lease", held.line(), "--op-id", "card-job-publish"}).exitCode, 0);
        // The oracle: the command line's answer from the same database.
        const RunResult told = relctlWithDsn(m_db->dsn(), {"--json", "status", "--job", "card-job"});
        QCOMPARE(told.exitCode, 0);
        QCOMPARE(told.json()["state"].get<std::string>(), std::string("completed"));

        Console c{*m_db};
        QTRY_VERIFY_WITH_TIMEOUT(c.session.environments()->rowCount() >= 4, 15000);
        StatusDialog* dialog = c.window.showStatus({StatusLookup::Kind::Job, QStringLiteral("card-job")});
        StatusCard* card = dialog->card();
        QTRY_COMPARE_WITH_TIMEOUT(card->state(), QStringLiteral("completed"), 10000);
        QCOMPARE(card->summary(), relctl::ui::jobstatus::sentence(told.json()["summary"].get<std::string>()));
        QVERIFY2(card->summary().contains(QStringLiteral("v7 (generation 7) was published on status-card by "
                                                         "card-job")),
                 qPrintable(card->summary()));
        QVERIFY2(card->summary().contains(QStringLiteral("still current")), qPrintable(card->summary()));
        QCOMPARE(card->next(), QStringLiteral("Next: Nothing to retry: the publish took effect."));
        const QStringList evidence = card->evidence();
        for (const char* line : {"env: status-card", "release: v7", "generation: 7", "current: yes"})
            QVERIFY2(evidence.contains(QLatin1String(line)), qPrintable(evidence.join(QLatin1Char('\n'))));
        QVERIFY2(std::any_of(evidence.begin(), evidence.end(),
                             [](const QString& l) {
                                 return l.startsWith(QStringLiteral("published_at: ")) &&
                                        l.endsWith(QStringLiteral(" UTC"));
                             }),
                 qPrintable(evidence.join(QLatin1Char('\n'))));

        // By the publish's op id, typed into the card.
        dialog->kindBox()->setCurrentIndex(dialog->kindBox()->findData(int(StatusLookup::Kind::Operation)));
        dialog->keyField()->setText(QStringLiteral("card-job-publish"));
        QTest::keyClick(dialog->keyField(), Qt::Key_Return);
        QVERIFY(card->state().isEmpty()); // asking: the job's answer is not shown for the op id
        QTRY_COMPARE_WITH_TIMEOUT(card->state(), QStringLiteral("completed"), 10000);
        QCOMPARE(card->lookup().key, QStringLiteral("card-job-publish"));

        // An op id the database never saw.
        dialog->keyField()->setText(QStringLiteral("card-never-sent"));
        QTest::keyClick(dialog->keyField(), Qt::Key_Return);
        QTRY_COMPARE_WITH_TIMEOUT(card->state(), QStringLiteral("unknown"), 10000);
        QCOMPARE(card->summary(),
                 QStringLiteral("Unknown: the database has no record of op id card-never-sent."));
        QVERIFY2(card->next().contains(QStringLiteral("a retry with the same op id is safe")),
                 qPrintable(card->next()));
        QVERIFY(card->evidence().isEmpty());
    }

    void screenshotRendersTheWindow()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("console.png"));
        QProcess console;
        console.start(QStringLiteral(RELEASE_CONSOLE_BIN),
                      {QStringLiteral("--dsn"), QString::fromStdString(m_db->dsn()),
                       QStringLiteral("--screenshot"), file});
        QVERIFY(console.waitForFinished(90000));
        QCOMPARE(console.exitCode(), 0);
        QImage image(file);
        QVERIFY(!image.isNull());
        QVERIFY(image.width() >= 800);
        QVERIFY(image.pixel(10, 10) != image.pixel(image.width() / 2, image.height() / 2) ||
                image.pixel(20, 200) != image.pixel(image.width() - 20, image.height() - 20));
    }
};

QTEST_MAIN(TestMainWindow)
#include "test_mainwindow.moc"
