// The console's approvals follow the protocol's rule, and show it: every
// console connects as a login of its own; the requester's login sees Approve
// disabled (and the server refuses it anyway), a login that approved once
// cannot count twice under another operator name, and the Promotions view
// names each approval's login beside its name.

// relctl is a namespace here too: the CLI runs as runRelctl.
#define RELCTL_TEST_NO_SHORT_NAME
#include "actiondialog.h"
#include "consoleclicks.h"
#include "promotionsview.h"
#include "relctlprocess.h"
#include "testconsole.h"

#include <QListWidget>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QtTest>

using namespace relctl::ui;

namespace {

// Selects the first (only) open request in the Promotions view.
void selectFirst(TestConsole& c)
{
    QTRY_COMPARE_WITH_TIMEOUT(c.window.promotionsView()->count(), 1, 15000);
    c.window.promotionsView()->list()->setCurrentRow(0);
}

// Sends an approval of promotion `id` under the operator name `by` straight
// to the session, past whatever the view's button allows: the refusal reason
// the server answered with ("" when it was accepted).
QString refusalOf(TestConsole& c, const std::string& id, const QString& by)
{
    QSignalSpy finished(&c.session, &ConsoleSession::actionFinished);
    ConsoleAction a;
    a.kind = ConsoleAction::Kind::ApprovePromotion;
    a.env = QStringLiteral("prod");
    a.promotion = std::stoll(id);
    a.by = by;
    c.session.runAction(a);
    if (!finished.wait(10000) || finished.first().at(0).toBool())
        return {};
    QString message = finished.first().at(1).toString();
    for (const QString& reason : {QStringLiteral("SELF_APPROVAL"), QStringLiteral("DUPLICATE_APPROVAL")})
        if (message.contains(reason))
            return reason;
    return message;
}

} // namespace

class TestConsoleApprovers final : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }

    void approvalsFromTheConsoleCountOncePerLogin()
    {
        TestDatabase db;
        QCOMPARE(runRelctl(db, {"env", "add", "prod"}).exitCode, 0);
        QCOMPARE(runRelctl(db, {"env", "set", "prod", "--approvals", "2"}).exitCode, 0);
        const std::string alice = db.loginDsn("alice"), carol = db.loginDsn("carol");
        QCOMPARE(relctlWithDsn(alice, {"promote", "request", "--env", "prod", "--release", "v2",
                                       "--generation", "2", "--by", "alice"})
                     .exitCode,
                 0);
        const std::string id = db.scalar("SELECT id FROM relctl.promotions");

        {
            // The requester's console, under another operator name: Approve
            // is disabled because of the login, and says so.
            setOperatorName(QStringLiteral("not-alice"));
            TestConsole c{alice};
            QTRY_COMPARE_WITH_TIMEOUT(c.session.connection().login, QStringLiteral("relctl_test_alice"),
                                      15000);
            selectFirst(c);
            auto* approve = c.window.promotionsView()->approveButton();
            QTRY_VERIFY_WITH_TIMEOUT(
                approve->toolTip().contains(QStringLiteral("Your login (relctl_test_alice) "
                                                           "requested this promotion")),
                5000);
            QVERIFY(!approve->isEnabled());
            // The server decides, not the button: the same action sent anyway is refused and recorded.
            QCOMPARE(refusalOf(c, id, QStringLiteral("not-alice")), QStringLiteral("SELF_APPROVAL"));
            QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE reason = 'SELF_APPROVAL' "
                              "AND db_user = 'relctl_test_alice' AND actor = 'not-alice'"),
                     1LL);
        }

        setOperatorName(QStringLiteral("carol"));
        TestConsole c{carol};
        selectFirst(c);
        PromotionsView* view = c.window.promotionsView();
        QTRY_VERIFY_WITH_TIMEOUT(view->approveButton()->isEnabled(), 10000);
        QSignalSpy finished(&c.session, &ConsoleSession::actionFinished);
        const auto answered = confirmNextAction({}, {});
        view->approveButton()->click();
        QVERIFY(*answered);
        QVERIFY(finished.wait(10000));
        QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE operation = 'promotion-approve' "
                          "AND outcome = 'accepted' AND actor = 'carol' AND db_user = 'relctl_test_carol'"),
                 1LL);
        // The view reads the approval back with its login, and will not
        // offer this login a second one.
        QTRY_VERIFY_WITH_TIMEOUT(view->detailsText().contains(QStringLiteral("1 of 2")), 10000);
        QVERIFY2(view->detailsText().contains(QStringLiteral("carol (login relctl_test_carol)")),
                 qPrintable(view->detailsText()));
        QVERIFY2(view->detailsText().contains(QStringLiteral("alice (login relctl_test_alice)")),
                 qPrintable(view->detailsText()));
        QTRY_VERIFY_WITH_TIMEOUT(!view->approveButton()->isEnabled(), 10000);
        QVERIFY2(view->approveButton()->toolTip().contains(QStringLiteral("already approved")),
                 qPrintable(view->approveButton()->toolTip()));
        // Another operator name on the same console is the same login: refused.
        QCOMPARE(refusalOf(c, id, QStringLiteral("dave")), QStringLiteral("DUPLICATE_APPROVAL"));
        QCOMPARE(db.scalar("SELECT state FROM relctl.promotions WHERE id = " + id), std::string("open"));
        QCOMPARE(db.count("SELECT count(*) FROM relctl.events WHERE reason = 'DUPLICATE_APPROVAL' "
                          "AND db_user = 'relctl_test_carol' AND actor = 'dave'"),
                 1LL);
    }
};

QTEST_MAIN(TestConsoleApprovers)
#include "test_consoleapprovers.moc"
