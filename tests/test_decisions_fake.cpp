// What waits for the console's login, and who the console says it is, over
// the in-memory backend: the decision notifier's rules (what needs this
// login, announced once, undone approvals), the status bar's identity, and
// the operator's name (the login until a name is accepted by the server).

#include "actiondialog.h"
#include "consoleclicks.h"
#include "decisionnotifier.h"
#include "fakeconsole.h"

#include <QDockWidget>
#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QtTest>

using namespace relctl::ui;

namespace {

relctl::Promotion promotion(std::int64_t id, const std::string& env, const std::string& release,
                            std::int64_t generation, const std::string& requestedLogin)
{
    relctl::Promotion p;
    p.id = id;
    p.env = env;
    p.release = release;
    p.generation = generation;
    p.state = "open";
    p.requestedBy = requestedLogin;
    p.requestedLogin = requestedLogin;
    p.approvalsRequired = 2;
    p.approvalsGiven = 0;
    return p;
}

relctl::PromotionVote vote(const std::string& login)
{
    relctl::PromotionVote v;
    v.by = login;
    v.login = login;
    v.at = relctl::Timestamp::fromMillis(1'760'000'000'000);
    return v;
}

relctl::Environment environment(const std::string& name, std::int64_t currentGeneration = 0)
{
    relctl::Environment e;
    e.name = name;
    if (currentGeneration > 0) {
        relctl::Manifest m;
        m.id = currentGeneration * 10;
        m.release = "v" + std::to_string(currentGeneration);
        m.generation = currentGeneration;
        e.current = m;
    }
    return e;
}

Permissions manager(const QString& login)
{
    return Permissions(
        login,
        {QStringLiteral("relctl_job"), QStringLiteral("relctl_manager"), QStringLiteral("relctl_reviewer")},
        {login, QStringLiteral("relctl_manager")});
}

struct Notices
{
    explicit Notices(DecisionNotifier& n)
    {
        n.setSink([this](const QString& title, const QString& body) {
            sent << title + QStringLiteral(": ") + body;
        });
    }
    QStringList sent;
};

SupersessionRow supersession(qint64 id, const QString& env)
{
    SupersessionRow r;
    r.id = id;
    r.env = env;
    r.winnerRelease = QStringLiteral("v9");
    r.winnerGeneration = 9;
    r.skipped = {QStringLiteral("job-8 (generation 8)")};
    return r;
}

} // namespace

class TestDecisionsFake final : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }

    void init() { QSettings().clear(); }

    // An open request this login may approve waits for it; the requester's
    // own, one it approved already, one behind an approver role it is not in,
    // and everything for a login without relctl_manager do not.
    void whatWaitsFollowsTheProtocolsRules()
    {
        DecisionNotifier n;
        Notices notices(n);
        PromotionsSnapshot s;
        s.environments = {environment("prod"), environment("staging"), environment("eu"), environment("us")};
        relctl::Promotion open = promotion(1, "prod", "v5", 5, "ci");
        relctl::Promotion own = promotion(2, "staging", "v5", 5, "alice");
        relctl::Promotion approved = promotion(3, "eu", "v5", 5, "ci");
        approved.approvals = {vote("alice")};
        approved.approvalsGiven = 1;
        relctl::Promotion roled = promotion(4, "us", "v5", 5, "ci");
        roled.approverRole = "us_approvers";
        s.promotions = {open, own, approved, roled};
        n.setPermissions(manager(QStringLiteral("alice")));
        n.setPromotions(s);
        n.setSupersessions({supersession(7, QStringLiteral("staging"))});
        QCOMPARE(n.promotionsWaiting(), 1);
        QCOMPARE(n.supersessionsWaiting(), 1);
        QCOMPARE(n.environments(), (QSet<QString>{QStringLiteral("prod"), QStringLiteral("staging")}));
        QCOMPARE(notices.sent.size(), 2);
        QVERIFY(notices.sent.join(QLatin1Char('\n')).contains(QStringLiteral("v5 to prod")));

        // A reviewer is told of nothing: it can decide nothing.
        DecisionNotifier reviewer;
        Notices quiet(reviewer);
        reviewer.setPermissions(Permissions(QStringLiteral("rita"), {QStringLiteral("relctl_reviewer")}, {}));
        reviewer.setPromotions(s);
        reviewer.setSupersessions({supersession(7, QStringLiteral("staging"))});
        QVERIFY(reviewer.environments().isEmpty());
        QVERIFY(quiet.sent.isEmpty());

        // A member of the approver role is told of that one too.
        DecisionNotifier member;
        member.setSink([](const QString&, const QString&) {});
        member.setPermissions(Permissions(QStringLiteral("uma"), {QStringLiteral("relctl_manager")},
                                          {QStringLiteral("uma"), QStringLiteral("us_approvers")}));
        member.setPromotions(s);
        member.setSupersessions({});
        QVERIFY(member.environments().contains(QStringLiteral("us")));
    }

    // Each request is announced once: again on a later read, and after a
    // restart (the same login and target), not at all; a burst is one
    // summary, not a notice per request.
    void eachRequestIsAnnouncedOnce()
    {
        PromotionsSnapshot s;
        s.environments = {environment("prod")};
        s.promotions = {promotion(1, "prod", "v5", 5, "ci")};
        {
            DecisionNotifier n;
            Notices notices(n);
            n.setScope(QStringLiteral("alice@db"));
            n.setPermissions(manager(QStringLiteral("alice")));
            n.setSupersessions({});
            n.setPromotions(s);
            n.setPromotions(s);
            QCOMPARE(notices.sent.size(), 1);
        }
        DecisionNotifier restarted;
        Notices again(restarted);
        restarted.setScope(QStringLiteral("alice@db"));
        restarted.setPermissions(manager(QStringLiteral("alice")));
        restarted.setSupersessions({});
        restarted.setPromotions(s);
        QVERIFY(again.sent.isEmpty());
        QCOMPARE(restarted.promotionsWaiting(), 1); // still waiting, only not announced again

        // Another login on the same target is told.
        DecisionNotifier bob;
        Notices bobs(bob);
        bob.setScope(QStringLiteral("bob@db"));
        bob.setPermissions(manager(QStringLiteral("bob")));
        bob.setSupersessions({});
        bob.setPromotions(s);
        QCOMPARE(bobs.sent.size(), 1);

        // Five new at once: one notice that counts them.
        for (int i = 2; i <= 6; ++i)
            s.promotions.push_back(promotion(i, "prod", "v" + std::to_string(i), i, "ci"));
        bob.setPromotions(s);
        QCOMPARE(bobs.sent.size(), 2);
        QVERIFY2(bobs.sent.last().startsWith(QStringLiteral("5 decisions wait for you")),
                 qPrintable(bobs.sent.last()));
    }

    // An approval this login gave that a freeze holds, or a rollback
    // undid, is told once.
    void anUndoneApprovalIsTold()
    {
        DecisionNotifier n;
        Notices notices(n);
        n.setPermissions(manager(QStringLiteral("alice")));
        n.setSupersessions({});
        relctl::Promotion p = promotion(1, "prod", "v5", 5, "ci");
        p.approvals = {vote("alice")};
        p.approvalsGiven = 1;
        PromotionsSnapshot s;
        s.environments = {environment("prod", 4)};
        s.promotions = {p};
        n.setPromotions(s);
        QVERIFY(notices.sent.isEmpty());
        QCOMPARE(n.undone(), 0);

        s.environments.front().frozen =
            relctl::Frozen{relctl::Timestamp::fromMillis(1'760'000'000'000), "rm-bob", "holiday"};
        n.setPromotions(s);
        QCOMPARE(n.undone(), 1);
        QCOMPARE(notices.sent.size(), 1);
        QVERIFY(notices.sent.first().contains(QStringLiteral("frozen by rm-bob")));
        n.setPromotions(s);
        QCOMPARE(notices.sent.size(), 1);

        // Applied (generation 5 current), then rolled back to generation 4.
        s.environments = {environment("prod", 5)};
        s.promotions.front().state = "approved";
        n.setPromotions(s);
        QCOMPARE(n.undone(), 0);
        s.environments = {environment("prod", 4)};
        n.setPromotions(s);
        QCOMPARE(n.undone(), 1);
        QCOMPARE(notices.sent.size(), 2);
        QVERIFY(notices.sent.last().contains(QStringLiteral("rolled back")));
    }

    // A live update's whole shares every piece it did not read: what waits
    // follows the pieces it replaced, and the rest is counted as before,
    // told once; a change of login counts everything again.
    void aLiveUpdateCountsWhatItReplacedAndKeepsTheRest()
    {
        DecisionNotifier n;
        Notices notices(n);
        n.setPermissions(manager(QStringLiteral("alice")));
        n.setSupersessions({});
        PromotionsSnapshot read;
        read.environments = {environment("prod"), environment("staging")};
        read.promotions = {promotion(1, "prod", "v5", 5, "ci"), promotion(2, "staging", "v5", 5, "ci")};
        const SharedPromotions whole(read);
        n.setPromotions(whole);
        QCOMPARE(n.promotionsWaiting(), 2);
        QCOMPARE(notices.sent.size(), 2); // one each: fewer than a summary takes
        const qsizetype told = notices.sent.size();

        // An event on staging: alice approved its request, then it froze.
        PromotionsSnapshot part;
        part.environments = {environment("staging")};
        part.environments.front().frozen =
            relctl::Frozen{relctl::Timestamp::fromMillis(1'760'000'000'000), "rm-bob", "holiday"};
        part.promotions = {promotion(2, "staging", "v5", 5, "ci")};
        part.promotions.front().approvals = {vote("alice")};
        part.promotions.front().approvalsGiven = 1;
        const SharedPromotions updated = whole.merged(part, {QStringLiteral("staging")});
        QCOMPARE(updated.promotions()[0], whole.promotions()[0]); // prod's, shared
        n.setPromotions(updated);
        QCOMPARE(n.promotionsWaiting(), 1);
        QCOMPARE(n.undone(), 1);
        QCOMPARE(n.environments(), (QSet<QString>{QStringLiteral("prod"), QStringLiteral("staging")}));
        QCOMPARE(notices.sent.size(), told + 1);
        QVERIFY2(notices.sent.last().contains(QStringLiteral("frozen by rm-bob")),
                 qPrintable(notices.sent.last()));
        n.setPromotions(updated);
        QCOMPARE(notices.sent.size(), told + 1);

        // Another login: nothing of alice's counts for bob.
        n.setPermissions(manager(QStringLiteral("bob")));
        QCOMPARE(n.undone(), 0);
        QCOMPARE(n.promotionsWaiting(), 2);
    }

    // The status bar names the login, what it is and whether the connection
    // is encrypted, and says when it cannot read the trail.
    void theStatusBarSaysWhoTheConsoleIs()
    {
        FakeConsole c;
        ConnectionState state;
        state.connected = true;
        state.live = true;
        state.server = QStringLiteral("in-memory fake");
        state.schemaVersion = 99;
        state.login = QStringLiteral("ci-deployer");
        state.permissions = Permissions(state.login, {QStringLiteral("relctl_job")}, {});
        state.tls = false;
        c.fake->setConnectionState(state);
        c.start();
        auto* identity = c.window.findChild<QLabel*>(QStringLiteral("connectionIdentity"));
        QVERIFY(identity);
        QTRY_VERIFY_WITH_TIMEOUT(identity->text().contains(QStringLiteral("ci-deployer")), 2000);
        QVERIFY(identity->text().contains(QStringLiteral("job")));
        QVERIFY(identity->text().contains(QStringLiteral("no TLS")));
        QVERIFY(identity->text().contains(QStringLiteral("cannot read the trail")));

        state.login = QStringLiteral("rm-alice");
        state.permissions = manager(state.login);
        state.tls = true;
        c.fake->setConnectionState(state);
        c.session.setTarget(ConnectionTarget::fromDsn(QStringLiteral("host=db.example")));
        QTRY_VERIFY_WITH_TIMEOUT(identity->text().contains(QStringLiteral("rm-alice")), 2000);
        QVERIFY(identity->text().contains(QStringLiteral("manager")));
        QVERIFY(identity->text().contains(QStringLiteral("· TLS")));
        QVERIFY(!identity->text().contains(QStringLiteral("cannot read")));
    }

    // The operator's name starts as the login; a name typed in a
    // confirmation that the server refused is not kept, one it accepted is.
    void theOperatorNameIsTheLoginUntilANameIsAccepted()
    {
        FakeConsole c;
        ConnectionState state;
        state.connected = true;
        state.live = true;
        state.schemaVersion = 99;
        state.login = QStringLiteral("rm-carol");
        state.permissions = manager(state.login);
        c.fake->setConnectionState(state);
        relctl::EnvironmentRow prod;
        prod.name = "prod";
        c.fake->setEnvironments({prod});
        c.start();
        auto* field = c.window.findChild<QLineEdit*>(QStringLiteral("operatorName"));
        QVERIFY(field);
        QTRY_COMPARE_WITH_TIMEOUT(field->text(), QStringLiteral("rm-carol"), 2000);
        QCOMPARE(operatorName(), QStringLiteral("rm-carol"));

        ConsoleAction freeze;
        freeze.kind = ConsoleAction::Kind::Freeze;
        freeze.env = QStringLiteral("prod");
        freeze.by = QStringLiteral("dev-dan");
        freeze.reason = QStringLiteral("typed the requester's name");
        c.fake->refuseNextAction(QStringLiteral("SELF_APPROVAL"));
        QSignalSpy finished(&c.session, &ConsoleSession::actionFinished);
        c.session.runAction(freeze);
        QVERIFY(finished.wait(2000));
        QVERIFY(!finished.first().at(0).toBool());
        QCOMPARE(operatorName(), QStringLiteral("rm-carol"));
        QCOMPARE(field->text(), QStringLiteral("rm-carol"));
        QVERIFY(!QSettings().contains(QStringLiteral("operator/name")));

        freeze.by = QStringLiteral("Carol Jones");
        c.session.runAction(freeze);
        QVERIFY(finished.wait(2000));
        QVERIFY(finished.last().at(0).toBool());
        QCOMPARE(operatorName(), QStringLiteral("Carol Jones"));
        QCOMPARE(field->text(), QStringLiteral("Carol Jones"));

        // Set deliberately in the toolbar: kept at once.
        field->setText(QStringLiteral("C. Jones"));
        emit field->editingFinished();
        QCOMPARE(operatorName(), QStringLiteral("C. Jones"));
        QCOMPARE(QSettings().value(QStringLiteral("operator/name")).toString(), QStringLiteral("C. Jones"));

        // The confirmation says which login the trail will record.
        ActionDialog dialog(freeze, QStringLiteral("Freeze"));
        auto* recorded = dialog.findChild<QLabel*>(QStringLiteral("recordedLogin"));
        QVERIFY(recorded && recorded->text().contains(QStringLiteral("rm-carol")));
    }

    // The console proper keeps the docks a person left (which are open, and
    // where) and the window's size; a test's window (not remembering) leaves
    // the settings alone.
    void theLayoutIsRemembered()
    {
        {
            FakeConsole c;
            c.window.setRemembersLayout(true);
            c.start();
            auto* queue = c.window.findChild<QDockWidget*>(QStringLiteral("Queue"));
            QVERIFY(queue && queue->isVisibleTo(&c.window));
            queue->hide();
            // (The offscreen screen is 800 px high, and the window opens as high.)
            c.window.resize(c.window.width(), 700);
            c.window.close();
        }
        QVERIFY(QSettings().contains(QStringLiteral("window/state")));
        {
            FakeConsole again;
            again.window.setRemembersLayout(true);
            again.start();
            auto* queue = again.window.findChild<QDockWidget*>(QStringLiteral("Queue"));
            QVERIFY(queue && !queue->isVisibleTo(&again.window));
            QTRY_COMPARE(again.window.height(), 700);
            again.window.close();
        }
        QSettings().clear();
        {
            FakeConsole test;
            test.start();
            test.window.close();
        }
        QVERIFY(!QSettings().contains(QStringLiteral("window/state")));
    }
};

QTEST_MAIN(TestDecisionsFake)
#include "test_decisions_fake.moc"
