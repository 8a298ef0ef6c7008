// What a release manager sees of promotion decisions, and before making one,
// offscreen and without a database (the views are fed the snapshots the
// worker would read): decided requests stay listed with each approval's
// login, name, time and reason; a readiness line says N of M, when the soak
// ends and which freeze blocks; the approve confirmation says which login is
// recorded, what count this approval makes, the soak left and the freeze;
// and Approve, Deny and Rollback are offered only to a login whose roles
// allow them, with a tooltip naming the login and what it lacks.

#define RELCTL_TEST_NO_SHORT_NAME
#include "actiondialog.h"
#include "consoleclicks.h"
#include "decisionnotifier.h"
#include "manifesthistorydialog.h"
#include "promotionsview.h"
#include "supersessionsview.h"
#include "timeformat.h"

#include <QAction>
#include <QElapsedTimer>
#include <QListWidget>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSplitter>
#include <QStandardPaths>
#include <QTextBrowser>
#include <QtTest>

using namespace relctl::ui;

namespace {

// A fixed clock: 2026-12-01 07:00:00 UTC.
constexpr qint64 kNow = 1796108400000;
constexpr qint64 kMin = 60 * 1000;

relctl::Timestamp at(qint64 ms)
{
    return relctl::Timestamp::fromMillis(ms);
}

relctl::PromotionVote vote(const char* by, const char* login, qint64 when, const char* reason)
{
    relctl::PromotionVote v;
    v.by = by;
    v.login = std::string(login);
    v.at = at(when);
    v.reason = std::string(reason);
    return v;
}

// prod, promoted from staging after a two-hour soak and two approvals,
// frozen by frank; three requests: one open (1 of 2, 47 min of soak left),
// one approved by bob and erin, one denied by carol.
PromotionsSnapshot snapshot(const std::optional<std::string>& approverRole = std::nullopt)
{
    PromotionsSnapshot s;
    relctl::Environment staging;
    staging.name = "staging";
    relctl::Environment prod;
    prod.name = "prod";
    prod.promoteFrom = "staging";
    prod.soakMs = 120 * kMin;
    prod.approvalsRequired = 2;
    prod.approverRole = approverRole;
    prod.frozen = relctl::Frozen{at(kNow - 30 * kMin), "frank", "incident 42"};
    s.environments = {staging, prod};

    relctl::PromotionUpstream soaking;
    soaking.env = "staging";
    soaking.soakMs = 120 * kMin;
    soaking.acceptedAt = at(kNow - 73 * kMin);
    soaking.soakedMs = 73 * kMin;
    soaking.soakRemainingMs = 47 * kMin;

    relctl::Promotion open;
    open.id = 7;
    open.env = "prod";
    open.release = "v1.43";
    open.generation = 43;
    open.state = "open";
    open.requestedBy = "alice";
    open.requestedLogin = "rm_alice";
    open.requestedAt = at(kNow - 60 * kMin);
    open.approvalsRequired = 2;
    open.approvalsGiven = 1;
    open.approverRole = approverRole;
    open.approvals = {vote("bob", "rm_bob", kNow - 20 * kMin, "diff reviewed")};
    open.upstream = soaking;

    relctl::Promotion approved = open;
    approved.id = 5;
    approved.release = "v1.41";
    approved.generation = 41;
    approved.state = "approved";
    approved.approvalsGiven = 2;
    approved.approvals = {vote("bob", "rm_bob", kNow - 300 * kMin, "looks fine"),
                          vote("erin", "rm_erin", kNow - 280 * kMin, "load test passed")};
    approved.decidedAt = at(kNow - 280 * kMin);
    approved.upstream->acceptedAt = at(kNow - 600 * kMin);
    approved.upstream->soakRemainingMs = 0;

    relctl::Promotion denied = open;
    denied.id = 6;
    denied.release = "v1.42";
    denied.generation = 42;
    denied.state = "denied";
    denied.approvalsGiven = 0;
    denied.approvals = {};
    denied.denial = vote("carol", "rm_carol", kNow - 200 * kMin, "staging rolled it back");
    denied.decidedAt = at(kNow - 200 * kMin);

    s.promotions = {approved, denied, open};
    return s;
}

Permissions manager(const QString& login, const QStringList& memberOf = {})
{
    return Permissions(login, {QStringLiteral("relctl_manager"), QStringLiteral("relctl_reviewer")},
                       memberOf);
}

// `services` paths svcK.test → svcK.staging → svcK.prod, in that order.
std::vector<relctl::Environment> paths(int services)
{
    std::vector<relctl::Environment> envs;
    envs.reserve(std::size_t(services) * 3);
    for (int k = 1; k <= services; ++k) {
        const std::string service = "svc" + std::to_string(k);
        relctl::Environment test, staging, prod;
        test.name = service + ".test";
        staging.name = service + ".staging";
        staging.promoteFrom = test.name;
        prod.name = service + ".prod";
        prod.promoteFrom = staging.name;
        envs.push_back(std::move(test));
        envs.push_back(std::move(staging));
        envs.push_back(std::move(prod));
    }
    return envs;
}

} // namespace

class TestDecisionViews final : public QObject
{
    Q_OBJECT

private slots:
    // An organisation's hundreds of paths are counted by shape; the paths
    // with an open request are the ones spelled out.
    void manyPathsAreCountedByShape()
    {
        std::vector<relctl::Environment> envs = paths(40);
        const QString html = PromotionsView::pathsHtml(envs, {QStringLiteral("svc7.prod")});
        QVERIFY2(html.contains(QStringLiteral("<b>svc7.test</b>")), qPrintable(html));
        QVERIFY(!html.contains(QStringLiteral("<b>svc8.test</b>")));
        QVERIFY2(html.contains(QStringLiteral("test → staging → prod: 39 more paths")), qPrintable(html));
        // A few paths are all listed.
        envs.resize(9);
        const QString few = PromotionsView::pathsHtml(envs);
        for (const char* start : {"svc1.test", "svc2.test", "svc3.test"})
            QVERIFY(few.contains(QStringLiteral("<b>%1</b>").arg(QLatin1String(start))));
        QVERIFY(!few.contains(QStringLiteral("more path")));
    }

    // At 10,000 environments a live update of one path costs what it
    // changed: the whole is shared, not copied, and the paths are not laid
    // out again unless an environment's upstream moved.
    void aLiveUpdateOfOnePathDoesNotReadTheOrganisation()
    {
        PromotionsSnapshot read;
        read.environments = paths(3334);
        // Twelve open requests: every path with one is listed.
        for (int k = 1; k <= 12; ++k) {
            relctl::Promotion p;
            p.id = k;
            p.env = "svc" + std::to_string(k * 7) + ".prod";
            p.release = "v1." + std::to_string(k);
            p.state = "open";
            p.approvalsRequired = 1;
            read.promotions.push_back(p);
        }
        PromotionsView view;
        DecisionNotifier notifier;
        notifier.setSink([](const QString&, const QString&) {});
        QElapsedTimer first;
        first.start();
        const SharedPromotions whole(read);
        view.setPromotions(whole);
        notifier.setPromotions(whole);
        qInfo("the whole at %zu environments: %.2f ms", whole.environments().size(),
              double(first.nsecsElapsed()) / 1e6);
        const int layouts = view.pathLayouts();
        QVERIFY2(view.pathsText().contains(QStringLiteral("svc7.prod nothing yet")),
                 qPrintable(view.pathsText()));

        // The list's rows before the event, marked: a row worded again loses
        // its mark.
        QCOMPARE(view.list()->count(), 12);
        std::vector<QListWidgetItem*> items;
        for (int row = 0; row < view.list()->count(); ++row) {
            items.push_back(view.list()->item(row));
            items.back()->setText(QStringLiteral("shown before"));
        }

        // An event on svc7.staging: its path's release moves, and the
        // request on svc7.prod has its approval.
        PromotionsSnapshot part;
        relctl::Environment staging = *whole.environment("svc7.staging");
        staging.current = relctl::Manifest{};
        staging.current->release = "v1.1";
        part.environments = {staging, *whole.environment("svc7.prod")};
        part.promotions = {*whole.promotions()[0]};
        part.promotions[0].approvalsGiven = 1;
        QElapsedTimer timer;
        timer.start();
        const SharedPromotions updated =
            whole.merged(part, {QStringLiteral("svc7.staging"), QStringLiteral("svc7.prod")});
        view.setPromotions(updated);
        notifier.setPromotions(updated);
        const double ms = double(timer.nsecsElapsed()) / 1e6;
        qInfo("a live update of one path at %zu environments: %.2f ms", updated.environments().size(), ms);
        QCOMPARE(view.pathLayouts(), layouts);
        QVERIFY2(view.pathsText().contains(QStringLiteral("svc7.staging v1.1")),
                 qPrintable(view.pathsText()));
        // Only the row of the environments read is worded again; the other
        // eleven are the items they were, untouched.
        QCOMPARE(view.list()->count(), 12);
        QVERIFY2(view.list()->item(0)->text().contains(QStringLiteral("1 of 1 approvals")),
                 qPrintable(view.list()->item(0)->text()));
        for (int row = 1; row < 12; ++row) {
            QCOMPARE(view.list()->item(row), items[std::size_t(row)]);
            QCOMPARE(view.list()->item(row)->text(), QStringLiteral("shown before"));
        }
        // Every environment it did not read is the piece the whole held.
        QCOMPARE(updated.environments().size(), whole.environments().size());
        QCOMPARE(updated.environment("svc8.prod"), whole.environment("svc8.prod"));
        QVERIFY(updated.environment("svc7.staging") != whole.environment("svc7.staging"));
        QCOMPARE(updated.promotions().size(), whole.promotions().size());

        // An upstream moved: the paths are laid out again.
        relctl::Environment moved = *updated.environment("svc8.prod");
        moved.promoteFrom = "svc8.test";
        PromotionsSnapshot change;
        change.environments = {moved};
        view.setPromotions(updated.merged(change, {QStringLiteral("svc8.prod")}));
        QCOMPARE(view.pathLayouts(), layouts + 1);
        QVERIFY2(view.pathsText().contains(QStringLiteral("test → prod: 1 more path")),
                 qPrintable(view.pathsText()));
    }

    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        QSettings().setValue(QStringLiteral("operator/name"), QStringLiteral("dave"));
    }

    void decidedRequestsStayListedWithWhoDecidedWhenAndWhy()
    {
        PromotionsView view;
        view.setPromotions(snapshot());
        // The tab counts what awaits a decision; the list shows it first.
        QCOMPARE(view.count(), 1);
        QVERIFY(view.list()->item(0)->text().startsWith(QStringLiteral("#7 prod ← v1.43")));
        // Then the decided ones, newest decision first, each saying who and when.
        const QString denied = view.list()->item(2)->text();
        QVERIFY2(denied.startsWith(QStringLiteral("#6 ")) && denied.contains(QStringLiteral("denied")) &&
                     denied.contains(formatTime(kNow - 200 * kMin)) &&
                     denied.contains(QStringLiteral("carol")),
                 qPrintable(denied));
        const QString approved = view.list()->item(3)->text();
        QVERIFY2(
            approved.startsWith(QStringLiteral("#5 ")) && approved.contains(QStringLiteral("approved")) &&
                approved.contains(formatTime(kNow - 280 * kMin)) &&
                approved.contains(QStringLiteral("bob, erin")) && approved.contains(QStringLiteral("2 of 2")),
            qPrintable(approved));
        // The heading between them cannot be selected.
        QVERIFY(!(view.list()->item(1)->flags() & Qt::ItemIsSelectable));

        QVERIFY(view.selectPromotion(5));
        QString details = view.detailsText();
        for (const QString& expected :
             {QStringLiteral("bob (login rm_bob) at %1 — looks fine").arg(formatTime(kNow - 300 * kMin)),
              QStringLiteral("erin (login rm_erin) at %1 — load test passed")
                  .arg(formatTime(kNow - 280 * kMin)),
              QStringLiteral("approved at %1").arg(formatTime(kNow - 280 * kMin))})
            QVERIFY2(details.contains(expected), qPrintable(expected + QStringLiteral("\n\n") + details));

        QVERIFY(view.selectPromotion(6));
        details = view.detailsText();
        const QString denial =
            QStringLiteral("Denied by carol (login rm_carol) at %1 — staging rolled it back")
                .arg(formatTime(kNow - 200 * kMin));
        QVERIFY2(details.contains(denial), qPrintable(details));

        // The filter shows the decided ones alone, or the open ones alone.
        view.setFilter(PromotionsView::Filter::Decided);
        QCOMPARE(view.list()->count(), 2);
        // The row the heading was is a request now: selectable, not bold.
        QVERIFY(view.list()->item(1)->text().startsWith(QStringLiteral("#5 ")));
        QVERIFY(view.list()->item(1)->flags() & Qt::ItemIsSelectable);
        QVERIFY(!view.list()->item(1)->font().bold());
        QVERIFY(view.selectPromotion(6)); // kept across the change
        QCOMPARE(view.list()->currentRow(), 0);
        view.setFilter(PromotionsView::Filter::Open);
        QCOMPARE(view.list()->count(), 1);
        QVERIFY(!view.selectPromotion(5));
        QCOMPARE(view.count(), 1);
    }

    void theReadinessLineSaysCountSoakAndFreeze()
    {
        const PromotionsSnapshot s = snapshot(std::string("prod_approvers"));
        const relctl::Promotion& open = s.promotions[2];
        const QString line = PromotionsView::readinessText(open, 0, &s.environments[1]);
        const QString soakEnd = formatTime(kNow - 73 * kMin + 120 * kMin);
        for (const QString& expected :
             {QStringLiteral("v1.43 to prod: 1 of 2 approved"), QStringLiteral("soak ends ") + soakEnd,
              QStringLiteral("47 min 0 s to go"),
              QStringLiteral("blocked by the freeze on prod (frozen by frank since %1)")
                  .arg(formatTime(kNow - 30 * kMin)),
              QStringLiteral("missing: 1 more approval from members of prod_approvers, the soak on staging, "
                             "an unfreeze of prod")})
            QVERIFY2(line.contains(expected), qPrintable(expected + QStringLiteral("\n\n") + line));

        // Once the soak has run: done, and when it ended.
        const QString later = PromotionsView::readinessText(open, 48 * kMin, &s.environments[1]);
        QVERIFY2(later.contains(QStringLiteral("soak done (ended %1)").arg(soakEnd)), qPrintable(later));
        QVERIFY2(!later.contains(QStringLiteral("the soak on")), qPrintable(later));

        // The details lead with it.
        PromotionsView view;
        view.setPromotions(s);
        QVERIFY(view.selectPromotion(7));
        QVERIFY2(view.detailsText().contains(QStringLiteral("Readiness: v1.43 to prod: 1 of 2 approved")),
                 qPrintable(view.detailsText()));
        QVERIFY2(view.detailsText().contains(QStringLiteral("prod is frozen by frank")),
                 qPrintable(view.detailsText()));
    }

    void theApproveConfirmationSaysLoginCountSoakAndFreeze()
    {
        PromotionsView view;
        view.setSchemaVersion(kPromotionsSchemaVersion);
        view.setPermissions(manager(QStringLiteral("rm_dave")));
        PromotionsSnapshot s = snapshot();
        view.setPromotions(s);
        QVERIFY(view.selectPromotion(7));
        QVERIFY2(view.approveButton()->isEnabled(), qPrintable(view.approveButton()->toolTip()));
        QSignalSpy requested(&view, &PromotionsView::actionRequested);
        auto shown = std::make_shared<QString>();
        auto answered = confirmNextAction({}, {}, shown);
        view.approveButton()->click();
        QVERIFY(*answered);
        for (const QString& expected :
             {QStringLiteral("Recorded as login rm_dave, name dave"), QStringLiteral("makes it 2 of 2"),
              QStringLiteral("the request is approved"), QStringLiteral("Soak: 47 min"),
              QStringLiteral("remain (ends %1)").arg(formatTime(kNow + 47 * kMin)),
              QStringLiteral("the promotion waits until the soak has run"),
              QStringLiteral(
                  "prod is frozen by frank since %1 (incident 42): the promotion waits until unfreeze")
                  .arg(formatTime(kNow - 30 * kMin))})
            QVERIFY2(shown->contains(expected), qPrintable(expected + QStringLiteral("\n\n") + *shown));
        QCOMPARE(requested.count(), 1);
        const auto action = requested.first().at(0).value<ConsoleAction>();
        QCOMPARE(action.kind, ConsoleAction::Kind::ApprovePromotion);
        QCOMPARE(action.promotion, qint64(7));

        // The first of two: one more is needed; no soak left, no freeze.
        s.promotions[2].approvalsGiven = 0;
        s.promotions[2].approvals.clear();
        s.promotions[2].upstream->soakRemainingMs = 0;
        s.environments[1].frozen.reset();
        view.setPromotions(s);
        QVERIFY(view.selectPromotion(7));
        answered = confirmNextAction({}, {}, shown);
        view.approveButton()->click();
        QVERIFY(*answered);
        QVERIFY2(shown->contains(QStringLiteral("makes it 1 of 2: 1 more approval needed")),
                 qPrintable(*shown));
        QVERIFY2(shown->contains(QStringLiteral("Soak: done")), qPrintable(*shown));
        QVERIFY2(!shown->contains(QStringLiteral("frozen")), qPrintable(*shown));

        // A denial says it is final, and which login records it.
        answered = confirmNextAction({}, QStringLiteral("not this one"), shown);
        view.denyButton()->click();
        QVERIFY(*answered);
        QVERIFY2(shown->contains(QStringLiteral("Recorded as login rm_dave")) &&
                     shown->contains(QStringLiteral("A denial is final")),
                 qPrintable(*shown));
    }

    void aDecidedRequestOffersNoDecision()
    {
        PromotionsView view;
        view.setSchemaVersion(kPromotionsSchemaVersion);
        view.setPromotions(snapshot());
        QVERIFY(view.selectPromotion(5));
        QVERIFY(!view.approveButton()->isEnabled());
        QVERIFY(!view.denyButton()->isEnabled());
        QVERIFY2(view.denyButton()->toolTip().contains(QStringLiteral("approved already")),
                 qPrintable(view.denyButton()->toolTip()));
        QVERIFY(view.selectPromotion(6));
        QVERIFY(!view.approveButton()->isEnabled());
        QVERIFY2(view.approveButton()->toolTip().contains(QStringLiteral("a denial is final")),
                 qPrintable(view.approveButton()->toolTip()));
        // Unknown permissions (a backend that does not say) offer the open one.
        QVERIFY(view.selectPromotion(7));
        QVERIFY(view.approveButton()->isEnabled());
        QVERIFY(view.denyButton()->isEnabled());
    }

    void aJobLoginIsOfferedNoDecision()
    {
        const Permissions job(QStringLiteral("ci_deployer"), {QStringLiteral("relctl_job")}, {});
        PromotionsView view;
        view.setSchemaVersion(kPromotionsSchemaVersion);
        view.setPermissions(job);
        view.setPromotions(snapshot());
        QVERIFY(view.selectPromotion(7));
        for (QPushButton* b : {view.approveButton(), view.denyButton()}) {
            QVERIFY(!b->isEnabled());
            QVERIFY2(b->toolTip().contains(QStringLiteral("ci_deployer")) &&
                         b->toolTip().contains(QStringLiteral("relctl_manager")),
                     qPrintable(b->toolTip()));
        }

        SupersessionsView supersessions;
        supersessions.setSchemaVersion(kPromotionsSchemaVersion);
        SupersessionRow row;
        row.id = 3;
        row.env = QStringLiteral("prod");
        row.winnerJob = QStringLiteral("deploy-9");
        row.winnerRelease = QStringLiteral("v9");
        row.winnerGeneration = 9;
        row.skipped = {QStringLiteral("deploy-8 (generation 8)")};
        supersessions.setSupersessions({row});
        supersessions.findChild<QListWidget*>()->setCurrentRow(0);
        // Named for what it is: a supersession, not the promotions' approvals.
        QVERIFY2(supersessions.findChild<QListWidget*>()->item(0)->text().startsWith(
                     QStringLiteral("Supersession #3 on prod")),
                 qPrintable(supersessions.findChild<QListWidget*>()->item(0)->text()));
        auto* approve = button<QPushButton>(&supersessions, QStringLiteral("Approve supersession"));
        auto* deny = button<QPushButton>(&supersessions, QStringLiteral("Deny supersession"));
        QVERIFY(approve && deny);
        QVERIFY(approve->isEnabled());
        supersessions.setPermissions(job);
        for (QPushButton* b : {approve, deny}) {
            QVERIFY(!b->isEnabled());
            QVERIFY2(b->toolTip().contains(QStringLiteral("ci_deployer")) &&
                         b->toolTip().contains(QStringLiteral("relctl_manager")),
                     qPrintable(b->toolTip()));
        }
        QVERIFY(!supersessions.approveAction()->isEnabled());
        QVERIFY(!supersessions.denyAction()->isEnabled());
        supersessions.setPermissions(manager(QStringLiteral("rm_dave")));
        QVERIFY(approve->isEnabled());

        ManifestHistoryDialog history(QStringLiteral("prod"));
        history.setSchemaVersion(kPromotionsSchemaVersion);
        history.setPermissions(job);
        auto* rollBack = history.findChild<QPushButton*>(QStringLiteral("rollBack"));
        QVERIFY(!rollBack->isEnabled());
        QVERIFY2(rollBack->toolTip().contains(QStringLiteral("ci_deployer")) &&
                     rollBack->toolTip().contains(QStringLiteral("relctl_manager")),
                 qPrintable(rollBack->toolTip()));
    }

    void theApproverRoleDecidesWhoIsOffered()
    {
        PromotionsView view;
        view.setSchemaVersion(kPromotionsSchemaVersion);
        view.setPermissions(manager(QStringLiteral("rm_dave"), {QStringLiteral("staging_approvers")}));
        view.setPromotions(snapshot(std::string("prod_approvers")));
        QVERIFY(view.selectPromotion(7));
        for (QPushButton* b : {view.approveButton(), view.denyButton()}) {
            QVERIFY(!b->isEnabled());
            QVERIFY2(b->toolTip().contains(QStringLiteral("rm_dave")) &&
                         b->toolTip().contains(QStringLiteral("prod_approvers")),
                     qPrintable(b->toolTip()));
        }
        view.setPermissions(manager(QStringLiteral("rm_dave"), {QStringLiteral("prod_approvers")}));
        QVERIFY(view.approveButton()->isEnabled());
        QVERIFY(view.denyButton()->isEnabled());
        // The requester's login, known from the permissions alone, is still refused.
        view.setPermissions(manager(QStringLiteral("rm_alice"), {QStringLiteral("prod_approvers")}));
        QVERIFY(!view.approveButton()->isEnabled());
        QVERIFY2(view.approveButton()->toolTip().contains(QStringLiteral("Your login (rm_alice)")),
                 qPrintable(view.approveButton()->toolTip()));
    }

    // In a side dock of a 1280×800 window the details get most of the height.
    void theDetailsGetTheRoom()
    {
        PromotionsView view;
        view.setPromotions(snapshot());
        view.resize(420, 640);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const auto* details = view.findChild<QTextBrowser*>(QStringLiteral("promotionDetails"));
        QTRY_VERIFY2(details->height() >= 2 * view.list()->height(),
                     qPrintable(QStringLiteral("details %1 px, list %2 px")
                                    .arg(details->height())
                                    .arg(view.list()->height())));
        QVERIFY(details->height() >= 360);
        // The list (under the paths) and the details share a splitter the
        // operator can drag: one above the other in a narrow dock...
        QCOMPARE(view.splitter()->count(), 2);
        QVERIFY(view.splitter()->widget(0)->isAncestorOf(view.list()));
        QCOMPARE(view.splitter()->widget(1), details);
        QCOMPARE(view.splitter()->orientation(), Qt::Vertical);
        // ... side by side in a wide, short one (the bottom dock at 1280x800),
        // the details with most of the width and the whole height.
        view.resize(1200, 260);
        QTRY_COMPARE(view.splitter()->orientation(), Qt::Horizontal);
        QTRY_VERIFY(details->width() >= view.list()->width());
        QVERIFY(details->height() >= 180);
    }
};

QTEST_MAIN(TestDecisionViews)
#include "test_decisionviews.moc"
