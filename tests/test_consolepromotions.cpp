// Promotions and rollback in the release console, offscreen, against a real
// database seeded with the demo history (its path test → staging → prod, prod
// needing two approvals and a soak, a rollback on staging, refusals by the
// promotion gate): the Promotions view shows the paths and the open requests;
// approve and deny are confirmed and land in the audit trail under the
// operator's name; the requester cannot approve their own request; a rollback
// started from the manifest history lands in the audit trail and makes the
// chosen manifest current; the timeline marks rollbacks and promotion
// decisions; the trace explains the gate's refusals.

#define RELCTL_TEST_NO_SHORT_NAME // core's namespace relctl is visible here
#include "actiondialog.h"
#include "auditmodel.h"
#include "auditview.h"
#include "consoleclicks.h"
#include "consolesession.h"
#include "consoleviews.h"
#include "demodatabase.h"
#include "environmentsmodel.h"
#include "environmentsview.h"
#include "mainwindow.h"
#include "manifesthistorydialog.h"
#include "manifesthistorymodel.h"
#include "postgresbackend.h"
#include "promotionsview.h"
#include "relctl/database.h"
#include "relctl/demo.h"
#include "relctlprocess.h"
#include "testconsole.h"
#include "testdatabase.h"
#include "timelinewidget.h"
#include "tracepanel.h"

#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QtTest>

using namespace relctl::ui;

namespace {

using Console = TestConsole;

// Selects the open request of (env, generation) in the Promotions view.
bool selectPromotion(Console& c, const QString& env, std::int64_t generation)
{
    PromotionsView* view = c.window.promotionsView();
    const QString wanted = QStringLiteral(" %1 ← ").arg(env);
    const QString gen = QStringLiteral("(generation %1)").arg(generation);
    for (int row = 0; row < view->count(); ++row) {
        const QString text = view->list()->item(row)->text();
        if (text.contains(wanted) && text.contains(gen)) {
            view->list()->setCurrentRow(row);
            return true;
        }
    }
    return false;
}

} // namespace

class TestConsolePromotions final : public QObject
{
    Q_OBJECT

    std::unique_ptr<DemoDatabase> m_demo;
    TestDatabase* m_db = nullptr;

    std::string promotionId(const std::string& env, std::int64_t generation) const
    {
        return m_db->scalar("SELECT id FROM relctl.promotions WHERE env = " + sqlLiteral(env) +
                            " AND generation = " + std::to_string(generation));
    }

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        m_demo = std::make_unique<DemoDatabase>();
        m_db = &m_demo->db();
        qInfo("the demo's week seeded in %lld ms (initdb, migrate, two restarts included)", m_demo->seedMs);
        // The demo's story, which the tests below rely on (and so check).
        QCOMPARE(m_db->count("SELECT count(*) FROM relctl.promotions WHERE env = 'prod' AND state = 'open'"),
                 2LL);
        QCOMPARE(m_db->count("SELECT count(*) FROM relctl.rollbacks WHERE env = 'staging'"), 1LL);
    }

    void thePathsAndTheOpenRequestsAreShown()
    {
        Console c{*m_db};
        PromotionsView* view = c.window.promotionsView();
        QTRY_COMPARE_WITH_TIMEOUT(view->count(), 2, 15000);
        // One path, in order, with what each step runs.
        const QString paths = view->pathsText();
        const auto test = paths.indexOf(QStringLiteral("test v1.")),
                   staging = paths.indexOf(QStringLiteral("staging v1.43")),
                   prod = paths.indexOf(QStringLiteral("prod v1.39"));
        QVERIFY2(test >= 0 && staging > test && prod > staging, qPrintable(paths));
        QVERIFY2(paths.contains(QStringLiteral("2 approvals")), qPrintable(paths));

        QVERIFY(selectPromotion(c, QStringLiteral("prod"), 43));
        const QString details = view->detailsText();
        QVERIFY2(details.contains(QStringLiteral("asked by alice")), qPrintable(details));
        QVERIFY2(details.contains(QStringLiteral("accepted on staging")), qPrintable(details));
        QVERIFY2(details.contains(QStringLiteral("to go")), qPrintable(details)); // the two-hour soak runs
        QVERIFY2(details.contains(QStringLiteral("Approvals: 1 of 2 — bob")), qPrintable(details));
        // The diff against prod's v1.39: replicas 3 → 4, a feature flag turned on.
        QVERIFY2(details.contains(QStringLiteral("replicas")), qPrintable(details));
        QVERIFY2(details.contains(QStringLiteral("features.checkout_v2")), qPrintable(details));
        QVERIFY2(!details.contains(QStringLiteral("migrations")), qPrintable(details));

        // v1.44 was withdrawn on staging by its rollback.
        QVERIFY(selectPromotion(c, QStringLiteral("prod"), 44));
        QVERIFY2(view->detailsText().contains(QStringLiteral("not accepted on staging")),
                 qPrintable(view->detailsText()));
    }

    void theRequesterCannotApproveTheirOwnRequest()
    {
        setOperatorName(QStringLiteral("alice"));
        Console c{*m_db};
        QTRY_COMPARE_WITH_TIMEOUT(c.window.promotionsView()->count(), 2, 15000);
        QTRY_VERIFY_WITH_TIMEOUT(c.session.connection().schemaVersion >= kPromotionsSchemaVersion, 10000);
        auto* approve = button<QPushButton>(c.window.promotionsView(), QStringLiteral("Approve"));
        auto* deny = button<QPushButton>(c.window.promotionsView(), QStringLiteral("Deny"));
        QVERIFY(approve && deny);
        QVERIFY(selectPromotion(c, QStringLiteral("prod"), 43)); // alice's
        QVERIFY(!approve->isEnabled());
        QVERIFY2(approve->toolTip().contains(QStringLiteral("You (alice) requested this promotion")),
                 qPrintable(approve->toolTip()));
        QVERIFY(deny->isEnabled());
        QVERIFY(selectPromotion(c, QStringLiteral("prod"), 44)); // dave's
        QVERIFY(approve->isEnabled());
    }

    void aPromotionIsApprovedFromTheConsole()
    {
        setOperatorName(QStringLiteral("erin"));
        Console c{*m_db};
        QTRY_COMPARE_WITH_TIMEOUT(c.window.promotionsView()->count(), 2, 15000);
        QTRY_VERIFY_WITH_TIMEOUT(c.session.connection().schemaVersion >= kPromotionsSchemaVersion, 10000);
        QVERIFY(selectPromotion(c, QStringLiteral("prod"), 43));
        auto* approve = button<QPushButton>(c.window.promotionsView(), QStringLiteral("Approve"));
        QTRY_VERIFY_WITH_TIMEOUT(approve->isEnabled(), 5000);
        QSignalSpy finished(&c.session, &ConsoleSession::actionFinished);
        const auto answered = confirmNextAction({}, {}); // an approval's reason is optional
        approve->click();
        QVERIFY(*answered);
        QVERIFY(finished.wait(10000));
        QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));

        // The second distinct approval: the request is approved, by bob and erin.
        const std::string id = promotionId("prod", 43);
        QCOMPARE(m_db->scalar("SELECT state FROM relctl.promotions WHERE id = " + id),
                 std::string("approved"));
        QCOMPARE(
            m_db->count("SELECT count(*) FROM relctl.events WHERE operation = 'promotion-approve' "
                        "AND outcome = 'accepted' AND env = 'prod' AND actor = 'erin' AND release = 'v1.43' "
                        "AND generation = 43 AND detail->>'promotion' = '" +
                        id +
                        "' AND detail->>'state' = 'approved' AND detail->>'approvals_given' = '2' "
                        "AND detail->>'requested_by' = 'alice'"),
            1LL);
        // Live: the approved request leaves the list of open ones, and the
        // timeline marks the decision as a promotion decision.
        QTRY_COMPARE_WITH_TIMEOUT(c.window.promotionsView()->count(), 1, 10000);
        const qint64 event = m_db->count(
            "SELECT id FROM relctl.events WHERE operation = 'promotion-approve' AND actor = 'erin'");
        QTRY_VERIFY_WITH_TIMEOUT(c.window.timeline()->markerPosition(event).has_value(), 10000);
        const TimelineHit hit =
            c.window.timeline()->itemAt(c.window.timeline()->markerPosition(event)->toPoint());
        QVERIFY(hit.isMarker());
        // The glyph there may group it with a neighbour (the first approval a
        // moment before): the decision is the group's member with its id.
        const auto decision = std::find_if(hit.group.begin(), hit.group.end(),
                                           [&](const auto* m) { return m->eventId == event; });
        QVERIFY(decision != hit.group.end());
        QCOMPARE((*decision)->kind, std::string("promotion"));
        QVERIFY(
            QString::fromStdString((*decision)->label).contains(QStringLiteral("approved by erin (2 of 2)")));
    }

    void aPromotionIsDeniedFromTheConsole()
    {
        setOperatorName(QStringLiteral("frank"));
        Console c{*m_db};
        QTRY_COMPARE_WITH_TIMEOUT(c.window.promotionsView()->count(), 1, 15000);
        QTRY_VERIFY_WITH_TIMEOUT(c.session.connection().schemaVersion >= kPromotionsSchemaVersion, 10000);
        QVERIFY(selectPromotion(c, QStringLiteral("prod"), 44));
        auto* deny = button<QPushButton>(c.window.promotionsView(), QStringLiteral("Deny"));
        QTRY_VERIFY_WITH_TIMEOUT(deny->isEnabled(), 5000);
        QSignalSpy finished(&c.session, &ConsoleSession::actionFinished);
        // A denial needs a reason: without one the confirmation does not proceed.
        auto answered = confirmNextAction({}, {});
        deny->click();
        QVERIFY(!*answered);
        QCOMPARE(finished.count(), 0);
        answered = confirmNextAction({}, QStringLiteral("staging rolled v1.44 back"));
        deny->click();
        QVERIFY(*answered);
        QVERIFY(finished.wait(10000));
        QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));

        const std::string id = promotionId("prod", 44);
        QCOMPARE(m_db->scalar("SELECT state FROM relctl.promotions WHERE id = " + id), std::string("denied"));
        QCOMPARE(
            m_db->count("SELECT count(*) FROM relctl.events WHERE operation = 'promotion-deny' "
                        "AND outcome = 'accepted' AND env = 'prod' AND actor = 'frank' AND release = 'v1.44' "
                        "AND detail->>'promotion' = '" +
                        id + "' AND detail->>'reason' = 'staging rolled v1.44 back'"),
            1LL);
        QTRY_COMPARE_WITH_TIMEOUT(c.window.promotionsView()->count(), 0, 10000);
    }

    void aRollbackFromTheManifestHistory()
    {
        setOperatorName(QStringLiteral("grace"));
        Console c{*m_db};
        QTRY_VERIFY_WITH_TIMEOUT(c.session.environments()->rowCount() >= 3, 15000);
        QTRY_VERIFY_WITH_TIMEOUT(c.session.connection().schemaVersion >= kPromotionsSchemaVersion, 10000);
        selectEnvironment(c.window, QStringLiteral("staging"));
        QAction* history = c.window.environmentsView()->historyAction();
        QTRY_VERIFY_WITH_TIMEOUT(history->isEnabled(), 5000);
        history->trigger();
        ManifestHistoryDialog* dialog = c.window.manifestHistory();
        QVERIFY(dialog);
        QCOMPARE(dialog->environment(), QStringLiteral("staging"));
        // Every publish and the demo's rollback, newest first; high water 44.
        const long long entries = m_db->count("SELECT count(*) FROM relctl.manifests WHERE env = 'staging'") +
                                  m_db->count("SELECT count(*) FROM relctl.rollbacks WHERE env = 'staging'");
        QTRY_COMPARE_WITH_TIMEOUT(dialog->model()->rowCount(), int(entries), 10000);
        QVERIFY(dialog->model()->index(0, 0).data(ManifestHistoryModel::IsRollback).toBool());
        QVERIFY(dialog->model()->index(0, 0).data(ManifestHistoryModel::IsCurrent).toBool());
        QVERIFY2(dialog->summaryText().contains(QStringLiteral("High-water generation 44")),
                 qPrintable(dialog->summaryText()));

        const std::string current =
            m_db->scalar("SELECT current_manifest_id FROM relctl.environments WHERE name = 'staging'");
        const std::string target =
            m_db->scalar("SELECT id FROM relctl.manifests WHERE env = 'staging' AND generation = 41");
        QVERIFY(dialog->selectManifest(std::stoll(target)));
        auto* rollBack = dialog->findChild<QPushButton*>(QStringLiteral("rollBack"));
        QVERIFY(rollBack);
        QVERIFY(rollBack->isEnabled());
        // Rolling back to what is current is not offered.
        QVERIFY(dialog->selectManifest(std::stoll(current)));
        QVERIFY(!rollBack->isEnabled());
        QVERIFY(dialog->selectManifest(std::stoll(target)));

        QSignalSpy finished(&c.session, &ConsoleSession::actionFinished);
        // The confirmation shows what changes, and needs a reason.
        QString shown;
        auto* peek = new QTimer(&c.window);
        connect(peek, &QTimer::timeout, peek, [&shown, peek] {
            for (QWidget* w : QApplication::topLevelWidgets())
                if (auto* d = qobject_cast<ActionDialog*>(w); d && d->isVisible()) {
                    shown = d->findChild<QLabel*>(QStringLiteral("actionDetails"))->text();
                    peek->deleteLater();
                    return;
                }
        });
        peek->start(5);
        auto answered = confirmNextAction({}, {});
        rollBack->click();
        QVERIFY(!*answered);
        QVERIFY2(shown.contains(QStringLiteral("v1.43")) && shown.contains(QStringLiteral("v1.41")) &&
                     shown.contains(QStringLiteral("stays <b>44</b>")) &&
                     shown.contains(QStringLiteral("replicas")),
                 qPrintable(shown));
        QCOMPARE(finished.count(), 0);
        answered = confirmNextAction({}, QStringLiteral("v1.43 leaks memory"));
        rollBack->click();
        QVERIFY(*answered);
        QVERIFY(finished.wait(10000));
        QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));

        QCOMPARE(m_db->scalar("SELECT current_manifest_id FROM relctl.environments WHERE name = 'staging'"),
                 target);
        QCOMPARE(
            m_db->count(
                "SELECT count(*) FROM relctl.events WHERE operation = 'rollback' AND env = 'staging' "
                "AND outcome = 'accepted' AND actor = 'grace' AND release = 'v1.41' "
                "AND detail->>'reason' = 'v1.43 leaks memory' AND detail->>'restored_manifest_id' = '" +
                target + "' AND detail->>'replaced_manifest_id' = '" + current +
                "' AND detail->>'replaced_release' = 'v1.43' AND detail->>'high_water_generation' = '44'"),
            1LL);
        // Live: the history shows the new rollback on top, current.
        QTRY_COMPARE_WITH_TIMEOUT(dialog->model()->rowCount(), int(entries + 1), 10000);
        QCOMPARE(dialog->model()->index(0, 0).data(ManifestHistoryModel::ManifestId).toString(),
                 QString::fromStdString(target));
        QVERIFY(dialog->model()->index(0, 0).data(ManifestHistoryModel::IsCurrent).toBool());
        // And the timeline marks it as a rollback.
        const qint64 event =
            m_db->count("SELECT id FROM relctl.events WHERE operation = 'rollback' AND actor = 'grace'");
        QTRY_VERIFY_WITH_TIMEOUT(c.window.timeline()->markerPosition(event).has_value(), 10000);
        const TimelineHit hit =
            c.window.timeline()->itemAt(c.window.timeline()->markerPosition(event)->toPoint());
        QVERIFY(hit.isMarker());
        QCOMPARE(hit.marker->kind, std::string("rollback"));
        QVERIFY(QString::fromStdString(hit.marker->label)
                    .contains(QStringLiteral("rollback to v1.41 (from v1.43)")));
    }

    void theTraceExplainsTheGatesRefusals_data()
    {
        QTest::addColumn<QString>("where"); // picks the refusal
        QTest::addColumn<QStringList>("says");
        QTest::addRow("NOT_PROMOTED")
            << QStringLiteral("reason = 'NOT_PROMOTED' AND generation = 44")
            << QStringList{QStringLiteral("Not promoted"), QStringLiteral("prod is promoted from staging"),
                           QStringLiteral("staging had v1.43 (generation 43) current")};
        QTest::addRow("APPROVAL_REQUIRED")
            << QStringLiteral("reason = 'APPROVAL_REQUIRED' AND generation = 41")
            << QStringList{QStringLiteral("needs 2 approval(s)"), QStringLiteral("0 had been given"),
                           QStringLiteral("2 more approval(s) on promotion request")};
        QTest::addRow("APPROVAL_DENIED")
            << QStringLiteral("reason = 'APPROVAL_DENIED' AND generation = 41")
            << QStringList{QStringLiteral("denied by carol"), QStringLiteral("v1.43 supersedes it"),
                           QStringLiteral("A denial is final")};
    }

    void theTraceExplainsTheGatesRefusals()
    {
        QFETCH(QString, where);
        QFETCH(QStringList, says);
        const qint64 event = m_db->count("SELECT id FROM relctl.events WHERE env = 'prod' AND outcome = "
                                         "'rejected' AND " +
                                         where.toStdString() + " ORDER BY id LIMIT 1");
        QVERIFY(event > 0);
        Console c{*m_db};
        QTRY_VERIFY_WITH_TIMEOUT(auditRow(c.session.audit(), event).has_value(), 15000);
        QTableView* table = c.window.auditView()->table();
        table->selectionModel()->setCurrentIndex(
            c.session.audit()->index(*auditRow(c.session.audit(), event), 0),
            QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        for (const QString& text : says)
            QTRY_VERIFY2_WITH_TIMEOUT(c.window.tracePanel()->text().contains(text),
                                      qPrintable(c.window.tracePanel()->text()), 10000);
    }
};

QTEST_MAIN(TestConsolePromotions)
#include "test_consolepromotions.moc"
