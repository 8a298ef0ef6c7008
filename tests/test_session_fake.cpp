// The console's session against the in-memory backend (FakeBackend): no
// database, no window, milliseconds. What the session itself decides: an
// answer to a superseded request is dropped whatever order answers arrive
// in, a failed request cancels only its own requester, events cost one
// debounced read of what they touched (one live read of each kind in
// flight, in bounded parts), actions and exports report back. (test_session runs the
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

// The live updates a spy on ConsoleSession::liveUpdateApplied saw of one
// kind ("environments", "timeline", "promotions"): each event applies one of
// each it read.
QList<QList<QVariant>> ofKind(const QSignalSpy& applied, const QString& kind)
{
    QList<QList<QVariant>> updates;
    for (const QList<QVariant>& update : applied)
        if (update.at(0).toString() == kind)
            updates.append(update);
    return updates;
}

} // namespace

class TestSessionFake final : public QObject
{
    Q_OBJECT

private slots:
    // A read's rows go from the worker to the model without a copy: every
    // handle shares them, and the session's take() moves them out, even
    // while another handle (the worker's, not yet destroyed) is alive.
    void theRowsOfAReadAreHandedOnWithoutACopy()
    {
        std::vector<relctl::EnvironmentRow> read(3);
        read[0].name = "prod";
        read[1].name = "staging";
        read[2].name = "test";
        const EnvironmentRows sent(std::move(read));
        // The copy a queued signal makes.
        // NOLINTNEXTLINE(performance-unnecessary-copy-initialization)
        const EnvironmentRows queued = sent;
        QCOMPARE(queued.rows().data(), sent.rows().data());
        QCOMPARE(queued.rows()[2].name, std::string("test"));
        const relctl::EnvironmentRow* storage = sent.rows().data();
        const std::vector<relctl::EnvironmentRow> taken = queued.take();
        QCOMPARE(taken.data(), storage);
        QCOMPARE(taken.size(), std::size_t(3));
        QVERIFY(sent.rows().empty());
    }

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

    // An event on one environment reads that environment only: its row,
    // its timeline lanes, its promotions. The model changes that row alone
    // (no reset, the selection kept, other rows' data untouched), the
    // timeline hears a partial slice, and the GUI work is reported.
    void anEventReadsOnlyTheEnvironmentsItTouched()
    {
        Fixture f;
        relctl::TimelineSlice slice = sliceWithMarker(1, 1000);
        slice.environments = {"prod", "staging", "test"};
        slice.markers.push_back({2, "test", relctl::Timestamp::fromMillis(1500), "publish", "v2", {}});
        f.fake->setTimeline(slice);
        f.session.coverTimeline(0, 2000);
        QVERIFY(f.startAndSettle());
        EnvironmentsModel* model = f.session.environments();
        QCOMPARE(model->rowCount(), 3);
        const QPersistentModelIndex selected = model->index(2, 0); // test
        const relctl::EnvironmentRow staging = model->environments()[1];
        QSignalSpy resets(model, &QAbstractItemModel::modelReset);
        QSignalSpy changes(model, &QAbstractItemModel::dataChanged);
        QSignalSpy applied(&f.session, &ConsoleSession::liveUpdateApplied);
        QSignalSpy lanes(&f.session, &ConsoleSession::timelineUpdated);
        QSignalSpy full(&f.session, &ConsoleSession::timelineReady);
        QSignalSpy loaded(&f.session, &ConsoleSession::environmentsLoaded);
        const int environments = f.fake->requestCount(RequestKind::Environments);

        f.fake->environment(QStringLiteral("prod"))->frozen = true;
        f.fake->announce({QStringLiteral("prod")});
        f.fake->announce({QStringLiteral("prod")});          // one burst
        QTRY_COMPARE_WITH_TIMEOUT(applied.count(), 3, 1000); // environments, timeline, promotions
        QCOMPARE(f.fake->requestCount(RequestKind::Environments), environments + 1);
        const QStringList prod{QStringLiteral("prod")};
        QCOMPARE(f.fake->environmentNames().back(), std::optional(prod));
        QCOMPARE(f.fake->timelineEnvs().back(), std::optional(prod));
        QCOMPARE(f.fake->promotionNames().back(), std::optional(prod));
        QVERIFY(model->index(0, 0).data(EnvironmentsModel::Frozen).toBool());
        QCOMPARE(resets.count(), 0);
        QCOMPARE(loaded.count(), 0); // no full read
        for (const QList<QVariant>& change : changes) {
            QCOMPARE(change.at(0).value<QModelIndex>().row(), 0);
            QCOMPARE(change.at(1).value<QModelIndex>().row(), 0);
        }
        QVERIFY(relctl::sameExceptClock(model->environments()[1], staging));
        QVERIFY(selected.isValid());
        QCOMPARE(selected.row(), 2);
        for (const QString& kind :
             {QStringLiteral("environments"), QStringLiteral("timeline"), QStringLiteral("promotions")}) {
            const auto updates = ofKind(applied, kind);
            QCOMPARE(updates.size(), 1);
            QCOMPARE(updates.first().at(1).toStringList(), prod);
            QVERIFY(updates.first().at(2).toLongLong() > 0);
        }
        QCOMPARE(full.count(), 0);
        QCOMPARE(lanes.count(), 1);
        QCOMPARE(lanes.at(0).at(0).toStringList(), prod);
        const auto part = lanes.at(0).at(1).value<relctl::TimelineSlice>();
        QCOMPARE(part.environments, std::vector<std::string>{"prod"});
        QCOMPARE(part.markers.size(), std::size_t(1));
        QCOMPARE(part.markers[0].env, std::string("prod"));
    }

    // An environment removed disappears, one added appears in natural
    // order; each is a row removed or inserted, never a reset.
    void anEventAddsAndRemovesRows()
    {
        Fixture f;
        QVERIFY(f.startAndSettle());
        EnvironmentsModel* model = f.session.environments();
        QSignalSpy resets(model, &QAbstractItemModel::modelReset);
        QSignalSpy applied(&f.session, &ConsoleSession::liveUpdateApplied);
        auto rows = f.fake->environments();
        std::erase_if(rows, [](const auto& r) { return r.name == "staging"; });
        rows.push_back(environment("qa"));
        f.fake->setEnvironments(rows);
        f.fake->announce({QStringLiteral("staging"), QStringLiteral("qa")});
        QTRY_COMPARE_WITH_TIMEOUT(ofKind(applied, QStringLiteral("environments")).size(), 1, 1000);
        QCOMPARE(model->rowCount(), 3);
        QCOMPARE(model->index(0, 0).data().toString(), QStringLiteral("prod"));
        QCOMPARE(model->index(1, 0).data().toString(), QStringLiteral("qa"));
        QCOMPARE(model->index(2, 0).data().toString(), QStringLiteral("test"));
        QCOMPARE(model->rowOf(QStringLiteral("staging")), -1);
        QCOMPARE(resets.count(), 0);
    }

    // Live updates and full reads whose answers arrive out of order: an
    // older answer never overwrites what a newer one applied, for the names
    // it covers; a full read's answer keeps the rows a newer live update
    // applied.
    void anOlderAnswerNeverOverwritesANewerOne()
    {
        Fixture f;
        QVERIFY(f.startAndSettle());
        f.fake->setReadingWhenAsked(true);
        EnvironmentsModel* model = f.session.environments();
        const QStringList prod{QStringLiteral("prod")};
        const auto frozen = [&] { return model->index(0, 0).data(EnvironmentsModel::Frozen).toBool(); };
        const auto release = [&] {
            return model->index(2, int(EnvironmentsModel::Column::CurrentRelease)).data();
        };

        // Two live updates: the second waits for the first's answer, then
        // reads again; the newer read is what stays.
        f.fake->setHoldingAnswers(true);
        f.fake->environment(QStringLiteral("prod"))->frozen = true;
        f.session.liveUpdate(prod); // reads frozen
        f.fake->environment(QStringLiteral("prod"))->frozen = false;
        const int asked = f.fake->requestCount(RequestKind::Environments);
        f.session.liveUpdate(prod); // waits, then reads unfrozen
        QCOMPARE(f.fake->requestCount(RequestKind::Environments), asked);
        f.fake->setHoldingAnswers(false);
        f.fake->releaseHeld(FakeBackend::Order::NewestFirst);
        QTRY_COMPARE_WITH_TIMEOUT(f.fake->requestCount(RequestKind::Environments), asked + 1, 1000);
        QTRY_COMPARE_WITH_TIMEOUT(f.fake->heldAnswers(), 0, 1000);
        QTest::qWait(20);
        QVERIFY(!frozen());

        // A full read, then a live update answered first: the full read's
        // (older) prod is not applied; its other rows are.
        f.fake->setHoldingAnswers(true);
        f.fake->environment(QStringLiteral("test"))->currentRelease = "2.0";
        f.session.reload(); // reads prod unfrozen, test 2.0
        f.fake->environment(QStringLiteral("prod"))->frozen = true;
        f.session.liveUpdate(prod); // reads prod frozen
        f.fake->setHoldingAnswers(false);
        f.fake->releaseHeld(FakeBackend::Order::NewestFirst);
        QTRY_COMPARE_WITH_TIMEOUT(f.fake->heldAnswers(), 0, 1000);
        QTest::qWait(20);
        QVERIFY(frozen());
        QCOMPARE(release().toString(), QStringLiteral("2.0"));

        // A live update, then a full read answered first: the live update is
        // older than the full read, whichever arrives last.
        f.fake->setHoldingAnswers(true);
        f.session.liveUpdate(prod); // reads prod frozen
        f.fake->environment(QStringLiteral("prod"))->frozen = false;
        f.session.reload(); // reads prod unfrozen
        f.fake->setHoldingAnswers(false);
        f.fake->releaseHeld(FakeBackend::Order::NewestFirst);
        QTRY_COMPARE_WITH_TIMEOUT(f.fake->heldAnswers(), 0, 1000);
        QTest::qWait(20);
        QVERIFY(!frozen());
    }

    // An event of an unknown environment (no name), a reconnection, or more
    // environments pending than a live read takes and more than half of
    // them (here three): everything is read.
    void unknownOrManyEnvironmentsReadEverything_data()
    {
        QTest::addColumn<QStringList>("envs");
        QTest::addRow("no name") << QStringList{QString()};
        QTest::addRow("a name and no name") << QStringList{QStringLiteral("prod"), QString()};
        QTest::addRow("reconnected") << QStringList{};
        QStringList many;
        for (int i = 0; i <= ConsoleSession::kLiveChunk; ++i)
            many << QStringLiteral("svc%1.prod").arg(i);
        QTest::addRow("most of the organisation") << many;
    }

    void unknownOrManyEnvironmentsReadEverything()
    {
        QFETCH(QStringList, envs);
        Fixture f;
        QVERIFY(f.startAndSettle());
        QSignalSpy loaded(&f.session, &ConsoleSession::environmentsLoaded);
        f.fake->announce(envs);
        QVERIFY(loaded.wait(1000));
        QCOMPARE(f.fake->environmentNames().back(), std::optional<QStringList>());
        QCOMPARE(f.fake->promotionNames().back(), std::optional<QStringList>());
    }

    // A burst naming a thousand environments of 4,000 (a queue handing over
    // across services) is read in parts, never as a whole: at most
    // kLiveChunk names a request, every name once, each part applied as it
    // comes. Before, more than 200 names read everything, which at 10,000
    // environments took longer than the next 200 took to arrive.
    void aLargeBurstIsReadInBoundedChunks()
    {
        Fixture f;
        std::vector<relctl::EnvironmentRow> rows;
        rows.reserve(4000);
        for (int i = 0; i < 4000; ++i)
            rows.push_back(environment("svc" + std::to_string(i) + ".prod"));
        f.fake->setEnvironments(rows);
        QVERIFY(f.startAndSettle());
        QCOMPARE(f.session.environments()->rowCount(), 4000);
        QSignalSpy loaded(&f.session, &ConsoleSession::environmentsLoaded);
        QSignalSpy applied(&f.session, &ConsoleSession::liveUpdateApplied);
        const std::size_t environmentsAsked = f.fake->environmentNames().size();
        const std::size_t promotionsAsked = f.fake->promotionNames().size();

        QSet<QString> burst;
        for (int i = 0; i < 1000; ++i) {
            const QString name = QStringLiteral("svc%1.prod").arg(i * 3);
            burst.insert(name);
            f.fake->announce({name});
        }
        QSet<QString> shown;
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                for (const QList<QVariant>& update : std::as_const(applied)) {
                    if (update.at(0).toString() == QStringLiteral("environments")) {
                        const QStringList envs = update.at(1).toStringList();
                        shown.unite(QSet<QString>(envs.begin(), envs.end()));
                    }
                }
                return shown == burst;
            }(),
            5000);
        QCOMPARE(loaded.count(), 0);
        const auto checkChunks = [&](const std::vector<std::optional<QStringList>>& asked, std::size_t from) {
            QSet<QString> read;
            int names = 0;
            for (std::size_t i = from; i < asked.size(); ++i) {
                QVERIFY(asked[i].has_value()); // never everything
                QVERIFY(asked[i]->size() <= ConsoleSession::kLiveChunk);
                names += int(asked[i]->size());
                read.unite(QSet<QString>(asked[i]->begin(), asked[i]->end()));
            }
            QVERIFY(asked.size() - from >= 2);
            QCOMPARE(names, 1000); // each once
            QCOMPARE(read, burst);
        };
        checkChunks(f.fake->environmentNames(), environmentsAsked);
        QTRY_COMPARE_WITH_TIMEOUT(f.fake->heldAnswers(), 0, 1000);
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                int names = 0;
                for (std::size_t i = promotionsAsked; i < f.fake->promotionNames().size(); ++i)
                    names += f.fake->promotionNames()[i] ? int(f.fake->promotionNames()[i]->size()) : 0;
                return names == 1000;
            }(),
            2000);
        checkChunks(f.fake->promotionNames(), promotionsAsked);
    }

    // While a live read is in flight, events' names are not asked for:
    // they wait for its answer and then go out together, in one request of
    // each kind, without the debounce. A slow answer batches the next names
    // instead of queueing requests behind it.
    void namesArrivingDuringALiveReadWaitForItsAnswer()
    {
        Fixture f;
        relctl::TimelineSlice slice = sliceWithMarker(1, 1000);
        slice.environments = {"prod", "staging", "test"};
        f.fake->setTimeline(slice);
        f.session.coverTimeline(0, 2000);
        QVERIFY(f.startAndSettle());
        const auto count = [&](RequestKind kind) { return f.fake->requestCount(kind); };
        const int environments = count(RequestKind::Environments);
        const int timelines = count(RequestKind::Timeline);
        const int promotions = count(RequestKind::Promotions);
        const int approvals = count(RequestKind::Supersessions);
        QSignalSpy applied(&f.session, &ConsoleSession::liveUpdateApplied);

        f.fake->setHoldingAnswers(true);
        f.fake->announce({QStringLiteral("prod")});
        QTRY_COMPARE_WITH_TIMEOUT(count(RequestKind::Environments), environments + 1, 1000);
        const QStringList prod{QStringLiteral("prod")};
        QCOMPARE(f.fake->environmentNames().back(), std::optional(prod));
        QCOMPARE(f.fake->timelineEnvs().back(), std::optional(prod));
        QCOMPARE(f.fake->promotionNames().back(), std::optional(prod));

        f.fake->announce({QStringLiteral("staging")});
        f.fake->announce({QStringLiteral("test")});
        f.fake->announce({QStringLiteral("staging")});
        QTest::qWait(static_cast<int>(reloadDelay.count() * 5)); // the debounce, several times over
        QCOMPARE(count(RequestKind::Environments), environments + 1);
        QCOMPARE(count(RequestKind::Timeline), timelines + 1);
        QCOMPARE(count(RequestKind::Promotions), promotions + 1);
        QCOMPARE(count(RequestKind::Supersessions), approvals + 1);

        f.fake->setHoldingAnswers(false);
        f.fake->releaseHeld();
        QTRY_COMPARE_WITH_TIMEOUT(count(RequestKind::Environments), environments + 2, 1000);
        QTRY_COMPARE_WITH_TIMEOUT(count(RequestKind::Timeline), timelines + 2, 1000);
        QTRY_COMPARE_WITH_TIMEOUT(count(RequestKind::Promotions), promotions + 2, 1000);
        const QStringList together{QStringLiteral("staging"), QStringLiteral("test")};
        const auto sorted = [](const std::optional<QStringList>& names) {
            QStringList list = names.value_or(QStringList{});
            list.sort();
            return list;
        };
        QCOMPARE(sorted(f.fake->environmentNames().back()), together);
        QCOMPARE(sorted(f.fake->timelineEnvs().back()), together);
        QCOMPARE(sorted(f.fake->promotionNames().back()), together);
        QCOMPARE(count(RequestKind::Supersessions), approvals + 2);
        // Both reads applied, environments, lanes and promotions: six
        // updates, no more asked.
        QTRY_COMPARE_WITH_TIMEOUT(applied.count(), 6, 1000);
        QTest::qWait(static_cast<int>(reloadDelay.count() * 3));
        QCOMPARE(count(RequestKind::Environments), environments + 2);
        for (const QString& kind :
             {QStringLiteral("environments"), QStringLiteral("timeline"), QStringLiteral("promotions")}) {
            const auto updates = ofKind(applied, kind);
            QCOMPARE(updates.size(), 2);
            QCOMPARE(updates.first().at(1).toStringList(), prod);
            QCOMPARE(sorted(updates.last().at(1).toStringList()), together);
        }
    }

    // An event of an unknown environment reads everything at the debounce,
    // even while a live read is in flight (it does not wait for that answer,
    // which the full read makes stale).
    void anUnknownNameReadsEverythingDuringALiveRead()
    {
        Fixture f;
        QVERIFY(f.startAndSettle());
        QSignalSpy loaded(&f.session, &ConsoleSession::environmentsLoaded);
        QSignalSpy applied(&f.session, &ConsoleSession::liveUpdateApplied);
        const int environments = f.fake->requestCount(RequestKind::Environments);
        f.fake->setHoldingAnswers(true);
        f.fake->announce({QStringLiteral("prod")});
        QTRY_COMPARE_WITH_TIMEOUT(f.fake->requestCount(RequestKind::Environments), environments + 1, 1000);
        f.fake->announce({QStringLiteral("test"), QString()});
        QTRY_COMPARE_WITH_TIMEOUT(f.fake->requestCount(RequestKind::Environments), environments + 2, 1000);
        QCOMPARE(f.fake->environmentNames().back(), std::optional<QStringList>());
        QCOMPARE(f.fake->promotionNames().back(), std::optional<QStringList>());
        f.fake->setHoldingAnswers(false);
        f.fake->releaseHeld();
        QVERIFY(loaded.wait(1000));
        QTest::qWait(20);
        QCOMPARE(applied.count(), 0); // the live read's answer was stale
        QCOMPARE(f.fake->requestCount(RequestKind::Environments), environments + 2);
    }

    // The Promotions view always gets the whole: a live update's part
    // (the environment and those promoted from it) replaces that part of
    // what the session holds.
    void promotionsOfALiveUpdateAreMergedIntoTheWhole()
    {
        Fixture f;
        PromotionsSnapshot promotions;
        relctl::Environment test, staging, prod;
        test.name = "test";
        staging.name = "staging";
        staging.promoteFrom = "test";
        prod.name = "prod";
        prod.promoteFrom = "staging";
        prod.approvalsRequired = 1;
        promotions.environments = {prod, staging, test};
        relctl::Promotion toProd, toStaging;
        toProd.id = 1;
        toProd.env = "prod";
        toProd.state = "open";
        toStaging.id = 2;
        toStaging.env = "staging";
        toStaging.state = "open";
        promotions.promotions = {toProd, toStaging};
        f.fake->setPromotions(promotions);
        QSignalSpy ready(&f.session, &ConsoleSession::promotionsReady);
        QVERIFY(f.startAndSettle());
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 1000);

        // staging's request decided, prod's upstream changed: an event on staging.
        promotions.promotions[1].state = "approved";
        promotions.environments[0].soakMs = 60'000; // prod: promoted from staging, so covered
        f.fake->setPromotions(promotions);
        f.fake->announce({QStringLiteral("staging")});
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 2, 1000);
        QCOMPARE(f.fake->promotionNames().back(), std::optional(QStringList{QStringLiteral("staging")}));
        const auto whole = ready.last().at(0).value<SharedPromotions>();
        QCOMPARE(whole.environments().size(), std::size_t(3));
        QCOMPARE(whole.promotions().size(), std::size_t(2));
        QCOMPARE(whole.promotions()[0]->id, 1);
        QCOMPARE(whole.promotions()[1]->state, std::string("approved"));
        QVERIFY(whole.environment("prod"));
        QCOMPARE(whole.environment("prod")->soakMs, 60'000);
        // The environment the update did not cover is the piece the first
        // whole held, shared, not a copy of it.
        const auto first = ready.first().at(0).value<SharedPromotions>();
        QCOMPARE(whole.environment("test"), first.environment("test"));
        QVERIFY(whole.environment("prod") != first.environment("prod"));
    }

    // Freezing many environments is one action; its events update those rows.
    void freezingManyUpdatesTheirRows()
    {
        Fixture f;
        QVERIFY(f.startAndSettle());
        QSignalSpy finished(&f.session, &ConsoleSession::actionFinished);
        QSignalSpy applied(&f.session, &ConsoleSession::liveUpdateApplied);
        ConsoleAction action;
        action.kind = ConsoleAction::Kind::FreezeMany;
        action.envs = {QStringLiteral("prod"), QStringLiteral("test")};
        action.by = QStringLiteral("erin");
        action.reason = QStringLiteral("holiday");
        f.session.runAction(action);
        QVERIFY(finished.wait(1000));
        QVERIFY(finished.first().at(0).toBool());
        QTRY_VERIFY_WITH_TIMEOUT(applied.count() >= 1, 1000);
        QStringList envs = applied.first().at(1).toStringList();
        envs.sort();
        QCOMPARE(envs, (QStringList{QStringLiteral("prod"), QStringLiteral("test")}));
        EnvironmentsModel* model = f.session.environments();
        QVERIFY(model->index(0, 0).data(EnvironmentsModel::Frozen).toBool());
        QVERIFY(!model->index(1, 0).data(EnvironmentsModel::Frozen).toBool());
        QVERIFY(model->index(2, 0).data(EnvironmentsModel::Frozen).toBool());
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
