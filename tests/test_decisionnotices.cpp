// Two release managers' consoles, on two logins, over one database: a
// promotion request that opens is announced to both, once each; the one who
// approves is no longer waited for, the other still is and is not told again;
// a freeze that holds the approval is told to the approver; a restarted
// console does not announce again what it announced; a reviewer's console
// is told of nothing.

#define RELCTL_TEST_NO_SHORT_NAME
#include "decisionnotifier.h"
#include "relctlprocess.h"
#include "testconsole.h"

#include <QDockWidget>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QtTest>

using namespace relctl::ui;

namespace {

// The notices a console's notifier sent, as "title: body".
struct Heard
{
    explicit Heard(TestConsole& c)
    {
        QObject::connect(c.window.decisions(), &DecisionNotifier::notified,
                         [this](const QString& title, const QString& body) {
                             notices << title + QStringLiteral(": ") + body;
                         });
    }
    QStringList notices;
};

} // namespace

class TestDecisionNotices final : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }

    void twoManagersAreToldOnceEach()
    {
        TestDatabase db;
        QCOMPARE(runRelctl(db, {"env", "add", "prod"}).exitCode, 0);
        QCOMPARE(runRelctl(db, {"env", "set", "prod", "--approvals", "2"}).exitCode, 0);
        const std::string alice = db.loginDsn("notice_alice"), bob = db.loginDsn("notice_bob");
        const std::string rita = db.loginDsn("notice_rita", {"relctl_reviewer"});
        const std::string ci = db.loginDsn("notice_ci", {"relctl_job"});

        auto a = std::make_unique<TestConsole>(alice);
        auto b = std::make_unique<TestConsole>(bob);
        TestConsole r{rita};
        Heard heardA(*a), heardB(*b), heardR(r);
        QTRY_VERIFY_WITH_TIMEOUT(a->session.connection().connected && b->session.connection().connected &&
                                     r.session.connection().connected,
                                 15000);
        QTRY_VERIFY_WITH_TIMEOUT(a->window.decisions()->environments().isEmpty(), 5000);

        QCOMPARE(relctlWithDsn(ci, {"promote", "request", "--env", "prod", "--release", "v2", "--generation",
                                    "2", "--by", "pipeline-2"})
                     .exitCode,
                 0);
        const std::string id = db.scalar("SELECT id FROM relctl.promotions");
        QTRY_COMPARE_WITH_TIMEOUT(heardA.notices.size(), 1, 15000);
        QTRY_COMPARE_WITH_TIMEOUT(heardB.notices.size(), 1, 15000);
        QVERIFY2(heardA.notices.first().contains(QStringLiteral("v2 to prod")),
                 qPrintable(heardA.notices.first()));
        QCOMPARE(a->window.decisions()->environments(), QSet<QString>{QStringLiteral("prod")});
        QVERIFY(a->window.findChild<QDockWidget*>(QStringLiteral("Promotions"))
                    ->windowTitle()
                    .contains(QStringLiteral("1 for you")));

        // Alice approves (1 of 2): she is no longer waited for; Bob is, and is
        // not told again.
        QSignalSpy finished(&a->session, &ConsoleSession::actionFinished);
        ConsoleAction approve;
        approve.kind = ConsoleAction::Kind::ApprovePromotion;
        approve.env = QStringLiteral("prod");
        approve.promotion = std::stoll(id);
        approve.by = QStringLiteral("Alice");
        a->session.runAction(approve);
        QVERIFY(finished.wait(10000));
        QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));
        QTRY_VERIFY_WITH_TIMEOUT(a->window.decisions()->promotionsWaiting() == 0, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(b->window.decisions()->promotionsWaiting(), 1, 10000);

        // A freeze now holds Alice's approval: she is told, once.
        QCOMPARE(
            relctlWithDsn(bob, {"freeze", "--env", "prod", "--by", "Bob", "--reason", "holiday"}).exitCode,
            0);
        QTRY_COMPARE_WITH_TIMEOUT(heardA.notices.size(), 2, 15000);
        QVERIFY2(heardA.notices.last().contains(QStringLiteral("frozen by Bob")),
                 qPrintable(heardA.notices.last()));
        // Told, but no decision of hers: the tab counts the open request
        // alone, not as one for her.
        QCOMPARE(a->window.findChild<QDockWidget*>(QStringLiteral("Promotions"))->windowTitle(),
                 QStringLiteral("Promotions (1)"));
        QTest::qWait(500);
        QCOMPARE(heardB.notices.size(), 1);
        QVERIFY(heardR.notices.isEmpty());
        QVERIFY(r.window.decisions()->environments().isEmpty());

        // Bob's console restarted: the request still waits for him, and is
        // not announced again.
        b.reset();
        TestConsole again{bob};
        Heard heardAgain(again);
        QTRY_COMPARE_WITH_TIMEOUT(again.window.decisions()->promotionsWaiting(), 1, 15000);
        QTest::qWait(500);
        QVERIFY2(heardAgain.notices.isEmpty(), qPrintable(heardAgain.notices.join(QLatin1Char('\n'))));
    }
};

QTEST_MAIN(TestDecisionNotices)
#include "test_decisionnotices.moc"
