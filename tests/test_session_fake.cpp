// The console's session against the in-memory backend (FakeBackend): no
// database, no window, milliseconds. What the session itself decides: an
// answer to a superseded request is dropped whatever order answers arrive
// in, a failed request cancels only its own requester, events cost one
// debounced reload, actions and exports report back. (test_session runs the
// session against PostgreSQL.)

#include "auditmodel.h"
#include "consolesession.h"
#include "environmentsmodel.h"
#include "fakebackend.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace relctl::ui;
using namespace std::chrono_literals;

Q_DECLARE_METATYPE(FakeBackend::Order)
Q_DECLARE_METATYPE(RequestKind)

namespace {

// The session's debounce, shortened: a test waits for it at every start.
constexpr std::chrono::milliseconds reloadDelay = 20ms;

relctl::EnvironmentRow environment(const std::string& name)
{
    relctl::EnvironmentRow row;
    row.name = name;
    row.policy = "ordered";
    row.supersede = "auto";
    row.serialization = "enforced";
    return row;
}

relctl::Event auditEvent(const std::string& env, const std::string& operation, const std::string& job)
{
    relctl::Event e;
    e.env = env;
    e.operation = operation;
    e.outcome = "accepted";
    e.job = job;
    return e;
}

// A session over a fake holding three environments and twelve events, and
// the fake (owned by the session).
struct Fixture
{
    Fixture() : fake(new FakeBackend), session(std::unique_ptr<ConsoleBackend>(fake))
    {
        session.setReloadDelay(reloadDelay);
        fake->setEnvironments({environment("prod"), environment("staging"), environment("test")});
        for (int i = 0; i < 12; ++i)
            fake->addEvent(auditEvent(i % 2 ? "prod" : "test", "renew", "job-" + std::to_string(i)));
    }

    // Started, and everything the first reload asked for answered.
    bool startAndSettle()
    {
        QSignalSpy loaded(&session, &ConsoleSession::environmentsLoaded);
        session.start();
        return loaded.wait(2000) &&
               QTest::qWaitFor([&] { return !session.audit()->hasPendingRequest(); }, 2000);
    }

    FakeBackend* fake;
    ConsoleSession session;
};

relctl::TimelineSlice sliceWithMarker(std::int64_t eventId, std::int64_t at)
{
    relctl::TimelineSlice slice;
    slice.environments = {"prod"};
    slice.markers.push_back(
        {eventId, "prod", relctl::Timestamp::fromMillis(at), "publish", "v" + std::to_string(eventId), {}});
    return slice;
}

} // namespace

class TestSessionFake final : public QObject
{
    Q_OBJECT

private slots:
    // Two requests for the same view: only the newer one's answer is shown,
    // whether the older answer comes first (and is overtaken) or last (and
    // must not overwrite the newer one).
    void aSupersededAnswerIsDropped_data()
    {
        QTest::addColumn<FakeBackend::Order>("order");
        QTest::addRow("older answer first") << FakeBackend::Order::AsAsked;
        QTest::addRow("older answer last") << FakeBackend::Order::NewestFirst;
    }

    void aSupersededAnswerIsDropped()
    {
        QFETCH(FakeBackend::Order, order);
        Fixture f;
        relctl::TimelineSlice slice = sliceWithMarker(1, 1000);
        slice.markers.push_back({2, "prod", relctl::Timestamp::fromMillis(5000), "refusal", "v2", {}});
        f.fake->setTimeline(slice);
        relctl::RefusalTrace first, second;
        first.event.job = "first";
        second.event.job = "second";
        f.fake->setTrace(1, first);
        f.fake->setTrace(2, second);
        QSignalSpy timelines(&f.session, &ConsoleSession::timelineReady);
        QSignalSpy traces(&f.session, &ConsoleSession::traceReady);
        QSignalSpy environments(&f.session, &ConsoleSession::environmentsLoaded);
        QSignalSpy approvals(&f.session, &ConsoleSession::supersessionsReady);

        f.fake->setHoldingAnswers(true);
        f.session.requestTimeline(0, 2000); // marker 1 only
        f.session.requestTimeline(4000, 6000);
        f.session.requestTrace(1);
        f.session.requestTrace(2);
        f.session.reload();
        f.session.reload();
        QVERIFY(f.fake->heldAnswers() >= 8);
        f.fake->setHoldingAnswers(false);
        f.fake->releaseHeld(order);
        QTRY_COMPARE_WITH_TIMEOUT(f.fake->heldAnswers(), 0, 1000);
        QTest::qWait(20); // every answer delivered, the dropped ones too

        QCOMPARE(timelines.count(), 1);
        const auto shown = timelines.first().at(0).value<relctl::TimelineSlice>();
        QCOMPARE(shown.markers.size(), std::size_t(1));
        QCOMPARE(shown.markers.front().eventId, std::int64_t(2));
        QCOMPARE(traces.count(), 1);
        QCOMPARE(*traces.first().at(0).value<std::optional<relctl::RefusalTrace>>()->event.job,
                 std::string("second"));
        QCOMPARE(environments.count(), 1);
        QCOMPARE(approvals.count(), 1);
    }

    // The audit model checks its own pages: one for a filter that was
    // replaced is dropped, the new filter's page is shown.
    void aPageForAnOldFilterIsDropped()
    {
        Fixture f;
        QVERIFY(f.startAndSettle());
        QCOMPARE(f.session.audit()->rowCount(), 12);
        f.fake->setHoldingAnswers(true);
        relctl::AuditFilter prod;
        prod.env = "prod";
        f.session.audit()->setFilter(prod);
        f.session.audit()->setFilter({});
        f.fake->setHoldingAnswers(false);
        f.fake->releaseHeld(FakeBackend::Order::NewestFirst);
        QTRY_VERIFY_WITH_TIMEOUT(!f.session.audit()->hasPendingRequest(), 1000);
        QTest::qWait(20);
        QCOMPARE(f.session.audit()->rowCount(), 12);
    }

    // Every view numbers its own requests from 1, so on starting, the
    // environments, the approvals and the audit browser's first page (and a
    // timeline already asked for) all go out as request 1: a failure of one
    // must not cancel the page.
    void aFailedRequestCancelsOnlyItsOwnRequester_data()
    {
        QTest::addColumn<RequestKind>("kind");
        QTest::addRow("environments") << RequestKind::Environments;
        QTest::addRow("approvals") << RequestKind::Supersessions;
        QTest::addRow("timeline") << RequestKind::Timeline;
    }

    void aFailedRequestCancelsOnlyItsOwnRequester()
    {
        QFETCH(RequestKind, kind);
        Fixture f;
        f.fake->failNext(kind, QStringLiteral("permission denied"));
        QSignalSpy failed(&f.session, &ConsoleSession::failed);
        f.session.requestTimeline(0, 1000);
        f.session.start();
        QVERIFY(failed.wait(1000));
        QCOMPARE(failed.first().at(0).toString(), QStringLiteral("permission denied"));
        QTRY_COMPARE_WITH_TIMEOUT(f.session.audit()->rowCount(), 12, 1000);
        QVERIFY(!f.session.audit()->hasPendingRequest());
        QCOMPARE(f.fake->requestCount(RequestKind::AuditPage), 1);
        QCOMPARE(failed.count(), 1);
    }

    // The first reload after connecting is not debounced (the views have
    // nothing to show yet), and it asks for the environments first, then the
    // audit browser's first page, before what sits behind tabs.
    void theFirstReadIsAtOnceAndShowsTheWindowFirst()
    {
        Fixture f;
        f.session.setReloadDelay(std::chrono::minutes(1));
        QSignalSpy loaded(&f.session, &ConsoleSession::environmentsLoaded);
        f.session.start();
        QVERIFY(loaded.wait(2000));
        QTRY_COMPARE_WITH_TIMEOUT(f.session.audit()->rowCount(), 12, 2000);
        const std::vector<RequestId>& asked = f.fake->requests();
        QVERIFY(asked.size() >= 3);
        QCOMPARE(asked[0].kind, RequestKind::Environments);
        QCOMPARE(asked[1].kind, RequestKind::AuditPage);
        // Later events still wait out the debounce.
        f.fake->announce({QStringLiteral("prod")});
        QTest::qWait(100);
        QCOMPARE(f.fake->requestCount(RequestKind::Environments), 1);
    }

    // The timeline's view moving within the slice asked for (following now,
    // a small pan) asks for nothing; leaving it, or looking much closer or
    // further, asks for a slice with margins. Before connecting, the range is
    // kept for the first reload.
    void aTimelineSliceIsAskedForWhenTheViewLeavesIt()
    {
        Fixture f;
        f.session.coverTimeline(10'000, 20'000);
        QCOMPARE(f.fake->requestCount(RequestKind::Timeline), 0);
        QSignalSpy timelines(&f.session, &ConsoleSession::timelineReady);
        QVERIFY(f.startAndSettle());
        QCOMPARE(f.fake->requestCount(RequestKind::Timeline), 1); // the first reload's: [5000, 25000]
        QTRY_COMPARE_WITH_TIMEOUT(timelines.count(), 1, 1000);

        f.session.coverTimeline(11'000, 21'000); // a tick of following now
        f.session.coverTimeline(6'000, 24'500);  // zoomed out a little, still inside
        QCOMPARE(f.fake->requestCount(RequestKind::Timeline), 1);
        f.session.coverTimeline(16'000, 26'000);                  // past the right margin
        QCOMPARE(f.fake->requestCount(RequestKind::Timeline), 2); // [11000, 31000]
        f.session.coverTimeline(18'000, 24'000);                  // closer, but not twice as close
        QCOMPARE(f.fake->requestCount(RequestKind::Timeline), 2);
        f.session.coverTimeline(20'000, 22'000);                  // more than twice as close
        QCOMPARE(f.fake->requestCount(RequestKind::Timeline), 3); // [19000, 23000]
        f.session.coverTimeline(0, 100'000);                      // out
        QCOMPARE(f.fake->requestCount(RequestKind::Timeline), 4);
        // A reload asks again for the slice last asked for.
        f.session.reload();
        QCOMPARE(f.fake->requestCount(RequestKind::Timeline), 5);
    }

    // The other way round: the audit browser's own failure reaches it, so a
    // later fetchMore() asks again; the environments are still delivered.
    void aFailedAuditPageIsForgottenByTheAuditBrowser()
    {
        Fixture f;
        f.fake->failNext(RequestKind::AuditPage,
                         QStringLiteral("permission denied for function console_audit"));
        QSignalSpy failed(&f.session, &ConsoleSession::failed);
        QSignalSpy environments(&f.session, &ConsoleSession::environmentsLoaded);
        f.session.start();
        QVERIFY(failed.wait(1000));
        QTRY_COMPARE_WITH_TIMEOUT(environments.count(), 1, 1000);
        QCOMPARE(f.session.environments()->rowCount(), 3);
        AuditModel* audit = f.session.audit();
        QVERIFY(audit->isActive());
        QVERIFY(!audit->hasPendingRequest());
        QCOMPARE(audit->rowCount(), 0);
        QVERIFY(audit->canFetchMore({}));
        audit->fetchMore({});
        QTRY_COMPARE_WITH_TIMEOUT(audit->rowCount(), 12, 1000);
        QCOMPARE(f.fake->requestCount(RequestKind::AuditPage), 2);
    }

    // A burst of events (a queue handing over) costs one reload, a moment
    // later, and the new events reach the audit browser on top.
    void eventsTriggerOneDebouncedReload()
    {
        Fixture f;
        QVERIFY(f.startAndSettle());
        const int environments = f.fake->requestCount(RequestKind::Environments);
        const int approvals = f.fake->requestCount(RequestKind::Supersessions);
        QCOMPARE(environments, 1);
        const std::int64_t newest = f.fake->addEvent(auditEvent("prod", "publish", "job-new"));
        for (int i = 0; i < 5; ++i)
            f.fake->announce({QStringLiteral("prod")});
        QCoreApplication::processEvents(); // the announcements, not yet the reload
        QCOMPARE(f.fake->requestCount(RequestKind::Environments), environments); // not yet
        QTRY_COMPARE_WITH_TIMEOUT(f.fake->requestCount(RequestKind::Environments), environments + 1, 1000);
        QCOMPARE(f.fake->requestCount(RequestKind::Supersessions), approvals + 1);
        QTRY_COMPARE_WITH_TIMEOUT(f.session.audit()->rowCount(), 13, 1000);
        QCOMPARE(f.session.audit()->eventAt(0)->id, newest);
        // Asked for what is new only: no reset, no second page of everything.
        QVERIFY(f.fake->auditRequests().back().newerThan.has_value());
        QTest::qWait(static_cast<int>(reloadDelay.count() * 3));
        QCOMPARE(f.fake->requestCount(RequestKind::Environments), environments + 1);
    }

    // An action reaches the backend and its outcome comes back: done (and
    // the event that follows shows it), or refused with the reason.
    void anActionReportsBack()
    {
        Fixture f;
        QVERIFY(f.startAndSettle());
        QSignalSpy finished(&f.session, &ConsoleSession::actionFinished);
        ConsoleAction freeze;
        freeze.kind = ConsoleAction::Kind::Freeze;
        freeze.env = QStringLiteral("prod");
        freeze.by = QStringLiteral("rm-alice");
        freeze.reason = QStringLiteral("incident");
        f.session.runAction(freeze);
        QVERIFY(finished.wait(1000));
        QCOMPARE(finished.first().at(0).toBool(), true);
        QCOMPARE(f.fake->actions().size(), 1);
        QCOMPARE(f.fake->actions().first().by, QStringLiteral("rm-alice"));
        const QModelIndex prod = f.session.environments()->index(0, 0);
        QCOMPARE(prod.data().toString(), QStringLiteral("prod"));
        QTRY_VERIFY_WITH_TIMEOUT(prod.data(EnvironmentsModel::Frozen).toBool(), 1000);

        finished.clear();
        f.fake->refuseNextAction(QStringLiteral("ENV_FROZEN: prod is frozen"));
        f.session.runAction(freeze);
        QVERIFY(finished.wait(1000));
        QCOMPARE(finished.first().at(0).toBool(), false);
        QCOMPARE(finished.first().at(1).toString(), QStringLiteral("ENV_FROZEN: prod is frozen"));
    }

    // The connection's state reaches the session; a new target goes to the
    // backend and the audit browser reads it afresh.
    void theConnectionIsFollowed()
    {
        Fixture f;
        QVERIFY(f.startAndSettle());
        QVERIFY(f.session.connection().connected);
        QSignalSpy changed(&f.session, &ConsoleSession::connectionChanged);
        f.fake->dropConnection(QStringLiteral("server closed the connection"));
        QVERIFY(changed.wait(1000));
        QVERIFY(!f.session.connection().connected);
        QCOMPARE(f.session.connection().message, QStringLiteral("server closed the connection"));

        const int pages = f.fake->requestCount(RequestKind::AuditPage);
        f.session.setTarget(ConnectionTarget::fromDsn(QStringLiteral("host=/elsewhere dbname=other")));
        QVERIFY(changed.wait(1000));
        QVERIFY(f.session.connection().connected);
        QCOMPARE(f.fake->targets().size(), 1);
        QVERIFY(!f.fake->auditRequests().back().after && !f.fake->auditRequests().back().newerThan);
        QVERIFY(f.fake->requestCount(RequestKind::AuditPage) > pages);
        QTRY_COMPARE_WITH_TIMEOUT(f.session.audit()->rowCount(), 12, 1000);
    }

    // One export at a time, with the audit browser's filter; it reports back.
    void anExportReportsBack()
    {
        Fixture f;
        QVERIFY(f.startAndSettle());
        relctl::AuditFilter prod;
        prod.env = "prod";
        f.session.audit()->setFilter(prod);
        QTemporaryDir dir;
        QSignalSpy finished(&f.session, &ConsoleSession::exportFinished);
        QVERIFY(f.session.exportAudit(dir.filePath(QStringLiteral("prod.csv")), false));
        QVERIFY(f.session.isExporting());
        QVERIFY(!f.session.exportAudit(dir.filePath(QStringLiteral("again.csv")), false));
        QVERIFY(finished.wait(1000));
        QCOMPARE(finished.first().at(0).toBool(), true);
        QCOMPARE(finished.first().at(1).toLongLong(), 6LL);
        QVERIFY(!f.session.isExporting());
    }
};

QTEST_GUILESS_MAIN(TestSessionFake)
#include "test_session_fake.moc"
