// The audit browser as a reviewer uses it, against a real PostgreSQL through
// the console's session and worker: header clicks sort on the server, live
// events never cost the reviewer their place, a custom time range is
// validated and applied by the server, and the export writes every filtered
// event to a file while the console keeps running.

#define RELCTL_TEST_NO_SHORT_NAME // core's namespace relctl is visible here
#include "auditmodel.h"
#include "auditview.h"
#include "consolesession.h"
#include "postgresbackend.h"
#include "relctlprocess.h"
#include "testdatabase.h"
#include "tracepanel.h"

#include <QAction>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMimeData>
#include <QPushButton>
#include <QScrollBar>
#include <QSettings>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QUrl>
#include <QtTest>

using namespace relctl::ui;
using Column = AuditModel::Column;

// A reviewer's audit browser on a test database, shown and started.
struct Browser
{
    explicit Browser(const TestDatabase& db)
        : session(std::make_unique<PostgresBackend>(
              ConnectionTarget::fromDsn(QString::fromStdString(db.dsn())), false)),
          view(&session)
    {
        view.show();
        session.start();
    }

    ConsoleSession session;
    AuditView view;
};

class TestAuditView final : public QObject
{
    Q_OBJECT

    std::unique_ptr<TestDatabase> m_db;

    // 2,000 events over two environments, with a job on most of them.
    void seed()
    {
        m_db->exec("INSERT INTO relctl.events (at, env, operation, outcome, job, generation) "
                   "SELECT clock_timestamp() - (2000 - i) * interval '1 second', "
                   "(ARRAY['prod', 'qa'])[1 + i % 2], 'renew', 'accepted', "
                   "CASE WHEN i % 9 = 0 THEN NULL ELSE 'job-' || (i % 89) END, i "
                   "FROM generate_series(1, 2000) AS i");
    }

private slots:
    void initTestCase()
    {
        // The export's remembered directory goes to a test's settings, not the user's.
        QStandardPaths::setTestModeEnabled(true);
        m_db = std::make_unique<TestDatabase>();
        seed();
    }

    // An operator's reason is found by typing it, and the row says who acted,
    // why, with which login from which address, as the exports do.
    void searchFindsAnOperatorsReason()
    {
        QCOMPARE(runRelctl(*m_db, {"env", "add", "web"}).exitCode, 0);
        QCOMPARE(runRelctl(*m_db, {"lease", "acquire", "--env", "web", "--job", "deploy-7", "--release", "v7",
                                   "--generation", "7"})
                     .exitCode,
                 0);
        QCOMPARE(runRelctl(*m_db,
                           {"lease", "revoke", "--env", "web", "--by", "alice", "--reason", "canary failed"})
                     .exitCode,
                 0);
        const auto revoke =
            m_db->rows("SELECT id, db_user, coalesce(host(client_addr), '') FROM relctl.events "
                       "WHERE operation = 'revoke' AND detail->>'reason' = 'canary failed'");
        QCOMPARE(revoke.size(), std::size_t(1));
        QVERIFY(!revoke[0][1].empty() && revoke[0][1] != "<null>");

        Browser browser(*m_db);
        ConsoleSession& session = browser.session;
        AuditView& view = browser.view;
        AuditModel* model = session.audit();
        QTRY_VERIFY_WITH_TIMEOUT(model->rowCount() > 1, 15000);
        auto* search = view.findChild<QLineEdit*>(QStringLiteral("searchText"));
        QVERIFY(search);
        QTest::keyClicks(search, QStringLiteral("Canary Failed"));
        QTest::keyClick(search, Qt::Key_Return);
        QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 1, 10000);
        QCOMPARE(model->eventAt(0)->id, std::stoll(revoke[0][0]));
        const auto cell = [&](Column c) { return model->index(0, int(c)).data().toString(); };
        QCOMPARE(cell(Column::Operation), QStringLiteral("revoke"));
        QCOMPARE(cell(Column::Actor), QStringLiteral("alice"));
        QCOMPARE(cell(Column::Detail), QStringLiteral("reason: canary failed"));
        QCOMPARE(cell(Column::Login), QString::fromStdString(revoke[0][1]));
        QCOMPARE(cell(Column::Address), QString::fromStdString(revoke[0][2])); // none over a local socket
        QVERIFY(model->index(0, int(Column::Detail))
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QLatin1String("\"reason\": \"canary failed\"")));
        QCOMPARE(model->headerData(int(Column::Detail), Qt::Horizontal).toString(), QStringLiteral("Detail"));

        // Both exports carry the actor, the login, the address and the detail.
        QTemporaryDir dir;
        for (const bool json : {false, true}) {
            const QString path = dir.filePath(json ? QStringLiteral("r.json") : QStringLiteral("r.csv"));
            view.exportTo(path, json);
            QTRY_VERIFY_WITH_TIMEOUT(!session.isExporting(), 10000);
            QFile file(path);
            QVERIFY(file.open(QIODevice::ReadOnly));
            const QByteArray bytes = file.readAll();
            if (json) {
                const QJsonObject e = QJsonDocument::fromJson(bytes).array().at(0).toObject();
                QCOMPARE(e.value(QLatin1String("actor")).toString(), QStringLiteral("alice"));
                QCOMPARE(e.value(QLatin1String("db_user")).toString(), QString::fromStdString(revoke[0][1]));
                QVERIFY(e.contains(QLatin1String("client_addr")));
                QCOMPARE(
                    e.value(QLatin1String("detail")).toObject().value(QLatin1String("reason")).toString(),
                    QStringLiteral("canary failed"));
            } else {
                const QList<QByteArray> lines = bytes.split('\n');
                QVERIFY(lines.size() >= 2);
                QVERIFY(lines[0].contains("actor,db_user,client_addr,detail"));
                QVERIFY2(lines[1].contains(",alice," + QByteArray::fromStdString(revoke[0][1]) + ","),
                         lines[1].constData());
                QVERIFY2(lines[1].contains("canary failed"), lines[1].constData());
            }
        }
    }

    // The job filter applies as the reviewer types, once typing pauses: one
    // query for "job-1" typed key by key, matching part of a name (job-12).
    void jobFilterAppliesAsTypingPauses()
    {
        Browser browser(*m_db);
        ConsoleSession& session = browser.session;
        AuditView& view = browser.view;
        AuditModel* model = session.audit();
        QTRY_VERIFY_WITH_TIMEOUT(model->rowCount() > 0, 15000);
        auto* job = view.findChild<QLineEdit*>(QStringLiteral("jobFilter"));
        QVERIFY(job);
        QSignalSpy requests(model, &QAbstractItemModel::modelReset); // one reset: one first page asked for
        QTest::keyClicks(job, QStringLiteral("job-1"), Qt::NoModifier, AuditView::typingPauseMs / 6);
        QCOMPARE(requests.count(), 0); // still typing
        QTRY_COMPARE_WITH_TIMEOUT(requests.count(), 1, 5000);
        QCOMPARE(model->filter().job, std::optional<std::string>("job-1"));
        QTest::qWait(2 * AuditView::typingPauseMs);
        QCOMPARE(requests.count(), 1);

        const long long expected =
            m_db->count("SELECT count(*) FROM relctl.events WHERE strpos(lower(job), 'job-1') > 0");
        QVERIFY(expected > 0 && expected < m_db->count("SELECT count(*) FROM relctl.events"));
        QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), int(expected), 10000);
        QVERIFY(model->rowForEvent(m_db->count("SELECT max(id) FROM relctl.events WHERE job = 'job-12'")));
        for (int row = 0; row < model->rowCount(); ++row)
            QVERIFY(QString::fromStdString(model->eventAt(row)->job.value_or(""))
                        .contains(QLatin1String("job-1")));

        // Enter during the pause applies at once, and the pause then asks nothing more.
        QTest::keyClick(job, Qt::Key_2);
        QTest::keyClick(job, Qt::Key_Return);
        QCOMPARE(requests.count(), 2);
        QCOMPARE(model->filter().job, std::optional<std::string>("job-12"));
        QTest::qWait(2 * AuditView::typingPauseMs);
        QCOMPARE(requests.count(), 2);
    }

    // "Refused only" asks the server for the refusals alone.
    void refusedOnlyShowsOnlyRefusals()
    {
        QCOMPARE(runRelctl(*m_db, {"env", "add", "frozen"}).exitCode, 0);
        QCOMPARE(
            runRelctl(*m_db, {"freeze", "--env", "frozen", "--by", "bob", "--reason", "incident"}).exitCode,
            0);
        QVERIFY(runRelctl(*m_db, {"lease", "acquire", "--env", "frozen", "--job", "late", "--release", "v1",
                                  "--generation", "1"})
                    .exitCode != 0);
        const long long refusals =
            m_db->count("SELECT count(*) FROM relctl.events WHERE outcome = 'rejected'");
        QVERIFY(refusals > 0 && refusals < m_db->count("SELECT count(*) FROM relctl.events"));

        Browser browser(*m_db);
        ConsoleSession& session = browser.session;
        AuditView& view = browser.view;
        AuditModel* model = session.audit();
        QTRY_VERIFY_WITH_TIMEOUT(model->rowCount() > int(refusals), 15000);
        auto* refusedOnly = view.findChild<QCheckBox*>(QStringLiteral("refusedOnly"));
        QVERIFY(refusedOnly && !refusedOnly->isChecked());
        refusedOnly->click();
        QCOMPARE(model->filter().outcome, std::optional<std::string>("rejected"));
        QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), int(refusals), 10000);
        for (int row = 0; row < model->rowCount(); ++row)
            QVERIFY(model->index(row, 0).data(AuditModel::Rejected).toBool());
        refusedOnly->click();
        QVERIFY(!model->filter().outcome);
        QTRY_VERIFY_WITH_TIMEOUT(model->rowCount() > int(refusals), 10000);
    }

    // The operation and reason filters offer the whole vocabulary, as the
    // database checks it (relctl.audited_operations(), refusal_reasons()),
    // not only what this trail happens to hold: on an empty trail too.
    void filtersOfferEveryOperationAndReason()
    {
        TestDatabase emptyTrail;
        QCOMPARE(emptyTrail.count("SELECT count(*) FROM relctl.events"), 0LL);
        Browser browser(emptyTrail);
        ConsoleSession& session = browser.session;
        AuditView& view = browser.view;
        QComboBox* operation = nullptr;
        QComboBox* reason = nullptr;
        for (QComboBox* box : view.findChildren<QComboBox*>()) {
            if (box->toolTip() == QStringLiteral("Operation"))
                operation = box;
            if (box->toolTip() == QStringLiteral("Refusal reason"))
                reason = box;
        }
        QVERIFY(operation && reason);
        const auto choices = [](QComboBox* box) {
            QStringList items;
            for (int i = 1; i < box->count(); ++i) // after "(any)"
                items << box->itemText(i);
            return items.join(QLatin1Char(','));
        };
        QCOMPARE(choices(operation), QString::fromStdString(emptyTrail.scalar(
                                         "SELECT array_to_string(relctl.audited_operations(), ',')")));
        QCOMPARE(choices(reason), QString::fromStdString(emptyTrail.scalar(
                                      "SELECT array_to_string(relctl.refusal_reasons(), ',')")));
        for (const char* op : {"env-add", "env-set", "supersession-requested", "promotion-requested",
                               "promotion-approve", "rollback"})
            QVERIFY2(operation->findText(QLatin1String(op)) > 0, op);
        QVERIFY(reason->findText(QStringLiteral("SELF_APPROVAL")) > 0);

        // Nothing recorded yet, and it says so; picking an operation the
        // trail does not hold is a filter like any other.
        auto* empty = view.findChild<QLabel*>(QStringLiteral("emptyResult"));
        QVERIFY(empty);
        QTRY_VERIFY_WITH_TIMEOUT(empty->isVisible(), 15000);
        QCOMPARE(empty->text(), QStringLiteral("No events recorded yet."));
        operation->setCurrentText(QStringLiteral("promotion-approve"));
        QCOMPARE(session.audit()->filter().operation, std::optional<std::string>("promotion-approve"));
        QTRY_VERIFY_WITH_TIMEOUT(empty->text().contains(QLatin1String("operation promotion-approve")), 10000);
    }

    // An empty answer says so in the table, naming the filters that left
    // nothing; the message goes as soon as another filter is asked for.
    void anEmptyResultSaysSo()
    {
        Browser browser(*m_db);
        ConsoleSession& session = browser.session;
        AuditView& view = browser.view;
        AuditModel* model = session.audit();
        QTRY_VERIFY_WITH_TIMEOUT(model->rowCount() > 0, 15000);
        auto* empty = view.findChild<QLabel*>(QStringLiteral("emptyResult"));
        QVERIFY(empty && !empty->isVisible());
        QCOMPARE(empty->parentWidget()->parentWidget(), view.table()); // in the table's viewport

        auto* job = view.findChild<QLineEdit*>(QStringLiteral("jobFilter"));
        view.findChild<QCheckBox*>(QStringLiteral("refusedOnly"))->click();
        QTest::keyClicks(job, QStringLiteral("no-such-job"));
        QTest::keyClick(job, Qt::Key_Return);
        QCOMPARE(m_db->count("SELECT count(*) FROM relctl.events WHERE job ILIKE '%no-such-job%'"), 0LL);
        QTRY_VERIFY_WITH_TIMEOUT(empty->isVisible(), 10000);
        QCOMPARE(model->rowCount(), 0);
        QCOMPARE(empty->text(), QStringLiteral("No events match these filters.\n"
                                               "job containing \u201cno-such-job\u201d \u00b7 refused only"));
        QVERIFY(empty->geometry().intersects(view.table()->viewport()->rect()));

        job->clear();
        QTest::keyClick(job, Qt::Key_Return);
        QVERIFY(!empty->isVisible()); // asked again: not known to be empty
        QTRY_VERIFY_WITH_TIMEOUT(model->rowCount() > 0, 10000);
        QVERIFY(!empty->isVisible());
    }

    void headerClicksSortOnTheServer()
    {
        Browser browser(*m_db);
        ConsoleSession& session = browser.session;
        AuditView& view = browser.view;
        AuditModel* model = session.audit();
        QTRY_VERIFY_WITH_TIMEOUT(model->rowCount() > 0, 15000);
        QHeaderView* header = view.table()->horizontalHeader();
        QVERIFY(view.table()->isSortingEnabled());
        QCOMPARE(header->sortIndicatorSection(), int(Column::Time));
        QCOMPARE(header->sortIndicatorOrder(), Qt::DescendingOrder);

        header->setSortIndicator(int(Column::Job), Qt::AscendingOrder); // what a click does
        QCOMPARE(model->auditSort(), (relctl::AuditSort{relctl::AuditSort::Column::Job, false}));
        QTRY_VERIFY_WITH_TIMEOUT(model->rowCount() > 0, 10000);
        const std::string first =
            m_db->scalar("SELECT id FROM relctl.events ORDER BY job ASC, id ASC LIMIT 1");
        QCOMPARE(model->eventAt(0)->id, std::stoll(first));

        // A column the server cannot sort by: the indicator stays on the real sort.
        header->setSortIndicator(int(Column::OpId), Qt::AscendingOrder);
        QCOMPARE(header->sortIndicatorSection(), int(Column::Job));
        QCOMPARE(header->sortIndicatorOrder(), Qt::AscendingOrder);
        QCOMPARE(model->auditSort().column, relctl::AuditSort::Column::Job);
    }

    void liveEventsKeepTheReviewersPlace()
    {
        Browser browser(*m_db);
        ConsoleSession& session = browser.session;
        AuditView& view = browser.view;
        AuditModel* model = session.audit();
        QTRY_VERIFY_WITH_TIMEOUT(model->rowCount() > 10, 15000);
        QTableView* table = view.table();
        QWidget* bar = view.findChild<QWidget*>(QStringLiteral("newEvents"));
        auto* count = view.findChild<QLabel*>(QStringLiteral("newEventsCount"));
        auto* show = view.findChild<QPushButton*>(QStringLiteral("newEventsShow"));
        QVERIFY(bar && count && show && !bar->isVisible());
        QSignalSpy resets(model, &QAbstractItemModel::modelReset);

        // At the top with nothing selected: new events appear on top, in place.
        QCOMPARE(table->verticalScrollBar()->value(), 0);
        QCOMPARE(runRelctl(*m_db, {"env", "add", "canary"}).exitCode, 0);
        QTRY_VERIFY_WITH_TIMEOUT(model->eventAt(0)->env == "canary", 10000);
        QVERIFY(!bar->isVisible());

        // A row further down is being read: the new event waits behind the
        // bar, and the row stays where it is in the viewport.
        table->selectionModel()->setCurrentIndex(model->index(3, 0), QItemSelectionModel::ClearAndSelect |
                                                                         QItemSelectionModel::Rows);
        const qint64 selected = model->eventAt(3)->id;
        const auto onScreen = [&](int row) {
            return table->viewport()->mapToGlobal(table->visualRect(model->index(row, 0)).topLeft());
        };
        const QPoint read = onScreen(3);
        QCOMPARE(runRelctl(*m_db, {"env", "add", "canary-1"}).exitCode, 0);
        QTRY_VERIFY_WITH_TIMEOUT(bar->isVisible(), 10000);
        QCOMPARE(count->text(), QStringLiteral("1 new event"));
        QCOMPARE(model->rowForEvent(selected), std::optional<int>(3));
        QCOMPARE(onScreen(3), read); // nor did the hint push the table down
        // The hint floats over the top of the rows.
        QVERIFY(table->viewport()->geometry().contains(bar->geometry().topLeft()));
        QCOMPARE(model->eventAt(0)->env, std::string("canary"));
        QCOMPARE(table->selectionModel()->currentIndex().data(AuditModel::EventId).toLongLong(), selected);
        // Shown when asked: on top, the selection still on its event.
        show->click();
        QCOMPARE(model->eventAt(0)->env, std::string("canary-1"));
        QCOMPARE(model->rowForEvent(selected), std::optional<int>(4));
        QCOMPARE(table->selectionModel()->currentIndex().data(AuditModel::EventId).toLongLong(), selected);
        QVERIFY(!bar->isVisible());
        QCOMPARE(table->verticalScrollBar()->value(), 0);

        // Scrolled down with nothing selected: the row at the top of the
        // viewport stays; back at the top, the new events appear by themselves.
        table->clearSelection();
        table->resize(600, 300);
        QTRY_VERIFY_WITH_TIMEOUT(model->rowCount() > 200, 10000); // the view fetches as it needs
        table->scrollTo(model->index(150, 0), QAbstractItemView::PositionAtTop);
        const qint64 top = table->indexAt(QPoint(0, 0)).data(AuditModel::EventId).toLongLong();
        QCOMPARE(top, model->eventAt(150)->id);
        QCOMPARE(runRelctl(*m_db, {"env", "add", "canary-2"}).exitCode, 0);
        QTRY_VERIFY_WITH_TIMEOUT(bar->isVisible(), 10000);
        QCOMPARE(table->indexAt(QPoint(0, 0)).data(AuditModel::EventId).toLongLong(), top);
        QCOMPARE(model->eventAt(0)->env, std::string("canary-1"));
        table->scrollToTop();
        QCOMPARE(model->eventAt(0)->env, std::string("canary-2"));
        QVERIFY(!bar->isVisible());
        QCOMPARE(resets.count(), 0);

        // Another sort: counted, offered, read again only on request.
        table->horizontalHeader()->setSortIndicator(int(Column::Job), Qt::AscendingOrder);
        QTRY_VERIFY_WITH_TIMEOUT(model->rowCount() > 10, 10000);
        resets.clear();
        QCOMPARE(runRelctl(*m_db, {"env", "add", "canary-3"}).exitCode, 0);
        QTRY_VERIFY_WITH_TIMEOUT(bar->isVisible(), 10000);
        QVERIFY(model->pendingNewEvents() >= 1);
        QCOMPARE(resets.count(), 0);
        show->click();
        QCOMPARE(resets.count(), 1);
        QVERIFY(!bar->isVisible());
        QCOMPARE(model->pendingNewEvents(), 0);
    }

    // A custom range is typed (UTC), validated as it is typed and applied
    // by the server; showing its fields moves none of the filters.
    void customRangeIsValidatedAndAppliedByTheServer()
    {
        Browser browser(*m_db);
        ConsoleSession& session = browser.session;
        AuditView& view = browser.view;
        AuditModel* model = session.audit();
        QTRY_VERIFY_WITH_TIMEOUT(model->rowCount() > 0, 15000);
        QComboBox* since = nullptr;
        for (QComboBox* box : view.findChildren<QComboBox*>())
            if (box->toolTip() == QStringLiteral("Time range"))
                since = box;
        QVERIFY(since);
        auto* from = view.findChild<QLineEdit*>(QStringLiteral("rangeFrom"));
        auto* to = view.findChild<QLineEdit*>(QStringLiteral("rangeTo"));
        auto* note = view.findChild<QLabel*>(QStringLiteral("rangeNote"));
        auto* search = view.findChild<QLineEdit*>(QStringLiteral("searchText"));
        QVERIFY(from && to && note && search && !from->isVisible());
        const QPoint searchAt = search->mapTo(&view, QPoint());
        const QPoint tableAt = view.table()->mapTo(&view, QPoint());

        // Custom: the fields appear where their room was kept, filled with
        // the hour up to now (not up to when the console opened).
        since->setCurrentIndex(since->findText(QStringLiteral("Custom\u2026")));
        QVERIFY(from->isVisible() && to->isVisible());
        QCOMPARE(search->mapTo(&view, QPoint()), searchAt);
        QCOMPARE(view.table()->mapTo(&view, QPoint()), tableAt);
        QVERIFY(model->filter().from && model->filter().to);
        QVERIFY(qAbs(model->filter().to->millis() - QDateTime::currentMSecsSinceEpoch()) < 61'000);

        // Typed digits count at once; a range that ends before it starts,
        // or text that is no time, is said and not applied.
        const relctl::AuditFilter before = model->filter();
        from->clear();
        QTest::keyClicks(from, QStringLiteral("2026-12-06 14:30"));
        to->clear();
        QTest::keyClicks(to, QStringLiteral("2026-12-06 14:00"));
        QTest::keyClick(to, Qt::Key_Return);
        QVERIFY2(note->text().contains(QStringLiteral("ends before it starts")), qPrintable(note->text()));
        QVERIFY(to->property("invalid").toBool());
        QCOMPARE(model->filter(), before);
        to->clear();
        QTest::keyClicks(to, QStringLiteral("half past two"));
        QTest::keyClick(to, Qt::Key_Return);
        QVERIFY(note->text().contains(QStringLiteral("2026-12-06 14:30")));
        QVERIFY(to->property("invalid").toBool() && !from->property("invalid").toBool());
        QCOMPARE(model->filter(), before);

        // 100 s of the seeded 2,000: the server returns what the range holds.
        const QDateTime now = QDateTime::currentDateTimeUtc();
        const QString format = QStringLiteral("yyyy-MM-dd HH:mm:ss");
        from->setText(now.addSecs(-1000 - 60).toString(format));
        to->setText(now.addSecs(-900 - 60).toString(format));
        emit to->editingFinished();
        QVERIFY(note->text().isEmpty());
        QVERIFY(model->filter().from && model->filter().to);
        QVERIFY(qAbs(model->filter().from->millis() - now.addSecs(-1060).toMSecsSinceEpoch()) < 1000);
        QVERIFY(*model->filter().to > *model->filter().from);
        const long long expected =
            m_db->count("SELECT count(*) FROM relctl.events WHERE at BETWEEN '" +
                        model->filter().from->iso() + "' AND '" + model->filter().to->iso() + "'");
        QVERIFY(expected > 50 && expected < 200);
        QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), int(expected), 10000);
        // The whole result is loaded: the count is exact.
        auto* count = view.findChild<QLabel*>(QStringLiteral("eventCount"));
        QVERIFY(count);
        QTRY_COMPARE_WITH_TIMEOUT(count->text(), QStringLiteral("%1 events").arg(expected), 10000);

        // Back to a preset: the fields go, nothing moves.
        since->setCurrentIndex(since->findText(QStringLiteral("Last hour")));
        QVERIFY(!from->isVisible());
        QCOMPARE(search->mapTo(&view, QPoint()), searchAt);
        QVERIFY(model->filter().from && !model->filter().to);
    }

    // The presets: the last hour is the hour before now, and the minutes
    // around the selected event hold it and keep it selected.
    void rangePresetsFollowTheClockAndTheSelection()
    {
        Browser browser(*m_db);
        ConsoleSession& session = browser.session;
        AuditView& view = browser.view;
        AuditModel* model = session.audit();
        QTRY_VERIFY_WITH_TIMEOUT(model->rowCount() > 0, 15000);
        auto* since = view.findChild<QComboBox*>(QStringLiteral("timeRange"));
        QVERIFY(since);
        for (const char* preset : {"Any time", "Last hour", "Today (UTC)", "Yesterday (UTC)", "Last 7 days",
                                   "Around selected event (\u00b110 min)", "Custom\u2026"})
            QVERIFY2(since->findText(QString::fromUtf8(preset)) >= 0, preset);

        since->setCurrentIndex(since->findText(QStringLiteral("Last hour")));
        QVERIFY(model->filter().from);
        QVERIFY(qAbs(model->filter().from->millis() - (QDateTime::currentMSecsSinceEpoch() - 3'600'000)) <
                2000);
        QCOMPARE(model->rangePreset(), relctl::ui::auditrange::Preset::LastHour);

        // Around an event: nothing selected says so; a selected row narrows to ±10 min.
        since->setCurrentIndex(since->findText(QStringLiteral("Any time")));
        QTRY_VERIFY_WITH_TIMEOUT(model->rowCount() > 100, 10000);
        view.table()->clearSelection();
        view.table()->selectionModel()->setCurrentIndex({}, QItemSelectionModel::Clear);
        auto* note = view.findChild<QLabel*>(QStringLiteral("rangeNote"));
        since->setCurrentIndex(since->findText(QStringLiteral("Around selected event (\u00b110 min)")));
        QVERIFY(note->text().contains(QStringLiteral("select an event")));
        const qint64 eventId = model->index(100, 0).data(AuditModel::EventId).toLongLong();
        const qint64 atMs = model->index(100, 0).data(AuditModel::AtMs).toLongLong();
        since->setCurrentIndex(0); // any time: read again
        QTRY_VERIFY_WITH_TIMEOUT(model->rowForEvent(eventId).has_value(), 10000);
        view.selectEvent(eventId);
        since->setCurrentIndex(since->findText(QStringLiteral("Around selected event (\u00b110 min)")));
        QCOMPARE(model->filter().from, relctl::Timestamp::fromMillis(atMs - 600'000));
        QCOMPARE(model->filter().to, relctl::Timestamp::fromMillis(atMs + 600'000));
        QTRY_VERIFY_WITH_TIMEOUT(model->rowForEvent(eventId).has_value(), 10000);
        QTRY_COMPARE_WITH_TIMEOUT(view.table()->selectionModel()->currentIndex().data(AuditModel::EventId),
                                  QVariant(eventId), 5000);
    }

    // What a reviewer does with the rows: every filter is labelled, Tab
    // leaves the table, Ctrl+C copies the selected rows with a header, and
    // the count says how many events match as far as it is known.
    void reviewersToolsOnTheTable()
    {
        Browser browser(*m_db);
        ConsoleSession& session = browser.session;
        AuditView& view = browser.view;
        AuditModel* model = session.audit();
        QTRY_VERIFY_WITH_TIMEOUT(model->rowCount() > 0, 15000);
        for (QComboBox* box : view.findChildren<QComboBox*>()) {
            QVERIFY2(!box->accessibleName().isEmpty(), qPrintable(box->toolTip()));
            bool labelled = false;
            for (QLabel* label : view.findChildren<QLabel*>())
                labelled = labelled || (label->buddy() == box && label->text().endsWith(QLatin1Char(':')));
            QVERIFY2(labelled, qPrintable(box->accessibleName()));
        }

        // Not every event is loaded: the count says "at least".
        auto* count = view.findChild<QLabel*>(QStringLiteral("eventCount"));
        QVERIFY(model->canFetchMore({}));
        QTRY_COMPARE_WITH_TIMEOUT(count->text(), QStringLiteral("at least %1 events").arg(model->rowCount()),
                                  5000);

        QVERIFY(!view.table()->tabKeyNavigation());
        view.activateWindow();
        view.table()->setFocus();
        QTRY_VERIFY(view.table()->hasFocus());
        QTest::keyClick(view.table(), Qt::Key_Tab);
        QVERIFY(!view.table()->hasFocus());

        view.table()->selectRow(1);
        view.table()->selectionModel()->select(model->index(3, 0),
                                               QItemSelectionModel::Select | QItemSelectionModel::Rows);
        QGuiApplication::clipboard()->clear();
        view.table()->setFocus();
        QTest::keyClick(view.table(), Qt::Key_C, Qt::ControlModifier);
        const QStringList lines = QGuiApplication::clipboard()->text().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 4);
        QVERIFY(lines[0].startsWith(QStringLiteral("Time\tEnvironment\tOperation\t")));
        QCOMPARE(lines[1].split(QLatin1Char('\t')).value(int(Column::Time)),
                 model->index(1, int(Column::Time)).data().toString());
        QCOMPARE(lines[2].split(QLatin1Char('\t')).value(int(Column::Generation)),
                 model->index(3, int(Column::Generation)).data().toString());
        QCOMPARE(view.selectedRowsText(), QGuiApplication::clipboard()->text());
    }

    // A login that cannot read the trail sees why where the rows would be,
    // with the filters disabled; readable again, the table is back.
    void anUnreadableTrailSaysWhy()
    {
        Browser browser(*m_db);
        AuditView& view = browser.view;
        const QString why =
            QStringLiteral("This login may not read the audit trail (it is not in relctl_audit).");
        view.setTrailReadable(false, why);
        auto* sentence = view.findChild<QLabel*>(QStringLiteral("trailUnreadable"));
        QVERIFY(sentence && sentence->isVisible());
        QCOMPARE(sentence->text(), why);
        QVERIFY(!view.table()->isVisible());
        QVERIFY(!view.findChild<QLineEdit*>(QStringLiteral("searchText"))->isEnabled());
        QVERIFY(!view.findChild<QComboBox*>(QStringLiteral("timeRange"))->isEnabled());
        QVERIFY(!view.findChild<QPushButton*>(QStringLiteral("export"))->isEnabled());
        view.setTrailReadable(true, {});
        QVERIFY(view.table()->isVisible() && !sentence->isVisible());
        QVERIFY(view.findChild<QLineEdit*>(QStringLiteral("searchText"))->isEnabled());
        QVERIFY(view.findChild<QPushButton*>(QStringLiteral("export"))->isEnabled());
    }

    // An export starts in the documents folder (then where the last one
    // went) under a dated name, and offers to open the file or its folder; a
    // failure to open says so beside the export's outcome, which stays.
    void exportOffersToOpenWhatItWrote()
    {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().remove(QStringLiteral("audit/exportDirectory"));
        QCOMPARE(AuditView::exportFileName(1'796'567'415'000, false),
                 QStringLiteral("relctl-audit-2026-12-06-1430.csv"));
        QCOMPARE(AuditView::exportFileName(1'796'567'415'000, true),
                 QStringLiteral("relctl-audit-2026-12-06-1430.json"));

        Browser browser(*m_db);
        ConsoleSession& session = browser.session;
        AuditView& view = browser.view;
        QTRY_VERIFY_WITH_TIMEOUT(session.audit()->rowCount() > 0, 15000);
        const QString documents = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
        QCOMPARE(view.exportDirectory(), QFileInfo(documents).isDir() ? documents : QDir::homePath());
        QVERIFY(view.exportDirectory() != QDir::currentPath() || QDir::currentPath() == QDir::homePath());

        QList<QUrl> opened;
        bool opens = true;
        view.setUrlOpener([&](const QUrl& url) {
            opened << url;
            return opens;
        });
        QTemporaryDir dir;
        view.exportTo(dir.filePath(QStringLiteral("review")), false);
        QTRY_VERIFY_WITH_TIMEOUT(!session.isExporting(), 30000);
        auto* status = view.findChild<QLabel*>(QStringLiteral("exportStatus"));
        auto* open = view.findChild<QPushButton*>(QStringLiteral("exportOpen"));
        auto* folder = view.findChild<QPushButton*>(QStringLiteral("exportShowInFolder"));
        auto* failed = view.findChild<QLabel*>(QStringLiteral("exportOpenFailed"));
        QVERIFY(open && folder && failed);
        QVERIFY(open->isVisible() && folder->isVisible() && !failed->isVisible());
        open->click();
        folder->click();
        QCOMPARE(opened,
                 (QList<QUrl>{QUrl::fromLocalFile(
                                  QFileInfo(dir.filePath(QStringLiteral("review.csv"))).absoluteFilePath()),
                              QUrl::fromLocalFile(QFileInfo(dir.path()).absoluteFilePath())}));
        opens = false;
        open->click();
        QVERIFY(failed->isVisible() && failed->text().contains(QStringLiteral("review.csv")));
        QVERIFY(status->text().startsWith(QStringLiteral("Exported ")));

        // The dialog starts where the last export went, in the next session too.
        QSettings().setValue(QStringLiteral("audit/exportDirectory"), dir.path());
        AuditView again(&session);
        QCOMPARE(again.exportDirectory(), dir.path());
        QSettings().remove(QStringLiteral("audit/exportDirectory"));
    }

    // The environment filter lists "(any)" and the session's environments,
    // replaced whole when they change; the one chosen stays chosen while it
    // exists, and "(any)" is chosen once it is gone. (No database: the
    // session is not started.)
    void theEnvironmentFilterFollowsTheEnvironments()
    {
        ConsoleSession session(std::make_unique<PostgresBackend>(
            ConnectionTarget::fromDsn(QStringLiteral("host=/nonexistent dbname=none")), false));
        AuditView view(&session);
        auto* env = view.findChild<QComboBox*>(QStringLiteral("environmentFilter"));
        QVERIFY(env);
        QCOMPARE(env->count(), 1);
        view.setEnvironments({QStringLiteral("prod"), QStringLiteral("staging")});
        QCOMPARE(env->count(), 3);
        QCOMPARE(env->itemText(0), QStringLiteral("(any)"));
        env->setCurrentIndex(env->findText(QStringLiteral("staging")));
        view.setEnvironments({QStringLiteral("canary"), QStringLiteral("prod"), QStringLiteral("staging")});
        QCOMPARE(env->count(), 4);
        QCOMPARE(env->currentText(), QStringLiteral("staging"));
        view.setEnvironments({QStringLiteral("prod")});
        QCOMPARE(env->count(), 2);
        QCOMPARE(env->currentIndex(), 0);
        QCOMPARE(env->currentText(), QStringLiteral("(any)"));
    }

    // "Copy trace" gives the refusal's story as plain text, not HTML, with
    // the console's times. (Here because the trace panel is copied from the
    // audit browser's rows; the panel needs no database.)
    void aTraceCopiesAsPlainText()
    {
        TracePanel panel;
        auto* copy = panel.findChild<QPushButton*>(QStringLiteral("copyTrace"));
        QVERIFY(copy && !copy->isEnabled());
        relctl::RefusalTrace t;
        t.event.id = 41;
        t.event.at = relctl::Timestamp::fromMillis(1'796'567'415'250); // 2026-12-06 14:30:15.250 UTC
        t.event.env = "web";
        t.event.operation = "acquire";
        t.event.outcome = "rejected";
        t.event.reason = "SUPERSEDED";
        t.event.job = "job-<2>";
        panel.showTrace(t);
        QVERIFY(copy->isEnabled());
        QGuiApplication::clipboard()->clear();
        copy->click();
        const QString text = QGuiApplication::clipboard()->text();
        QVERIFY2(text.startsWith(QStringLiteral("acquire on web refused: SUPERSEDED\n")), qPrintable(text));
        QVERIFY(text.contains(QStringLiteral("Job job-<2>")));
        QVERIFY(text.contains(QStringLiteral("at 2026-12-06 14:30:15.250 UTC")));
        QVERIFY(!text.contains(QLatin1Char('<') + QStringLiteral("p>")) &&
                !text.contains(QStringLiteral("&lt;")));
        QVERIFY(!QGuiApplication::clipboard()->mimeData()->hasHtml());
    }

    void exportWritesEveryFilteredEventInTheBackground()
    {
        Browser browser(*m_db);
        ConsoleSession& session = browser.session;
        AuditView& view = browser.view;
        AuditModel* model = session.audit();
        QTRY_VERIFY_WITH_TIMEOUT(model->rowCount() > 0, 15000);
        QVERIFY(model->canFetchMore({})); // not everything is loaded: the export reads it all
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("all.json"));
        view.exportTo(path, true);
        QVERIFY(session.isExporting());
        auto* status = view.findChild<QLabel*>(QStringLiteral("exportStatus"));
        QTRY_VERIFY_WITH_TIMEOUT(!session.isExporting(), 30000);
        const long long total = m_db->count("SELECT count(*) FROM relctl.events");
        QVERIFY2(status->text().contains(QStringLiteral("Exported %1 events").arg(total)),
                 qPrintable(status->text()));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonDocument doc = QJsonDocument::fromJson(file.readAll());
        QCOMPARE(doc.array().size(), int(total));
        QCOMPARE(doc.array().at(0).toObject().value(QStringLiteral("id")).toInteger(),
                 m_db->count("SELECT max(id) FROM relctl.events")); // the table's order: newest first
    }

    // An export gets its format's extension: the dialog proposes and filters
    // it and adds it as its default suffix, and a path without one gets it.
    void exportsGetTheirExtension()
    {
        Browser browser(*m_db);
        ConsoleSession& session = browser.session;
        AuditView& view = browser.view;
        QTRY_VERIFY_WITH_TIMEOUT(session.audit()->rowCount() > 0, 15000);
        auto* status = view.findChild<QLabel*>(QStringLiteral("exportStatus"));
        QTemporaryDir dir;
        view.exportTo(dir.filePath(QStringLiteral("incident")), false);
        QTRY_VERIFY_WITH_TIMEOUT(!session.isExporting(), 30000);
        QVERIFY2(status->text().contains(QLatin1String("to incident.csv")), qPrintable(status->text()));
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("incident.csv"))));
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("incident"))));
        view.exportTo(dir.filePath(QStringLiteral("incident")), true);
        QTRY_VERIFY_WITH_TIMEOUT(!session.isExporting(), 30000);
        QFile json(dir.filePath(QStringLiteral("incident.json")));
        QVERIFY(json.open(QIODevice::ReadOnly));
        QVERIFY(QJsonDocument::fromJson(json.readAll()).isArray());
        // An extension of the reviewer's own is kept.
        view.exportTo(dir.filePath(QStringLiteral("incident.txt")), false);
        QTRY_VERIFY_WITH_TIMEOUT(!session.isExporting(), 30000);
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("incident.txt"))));
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("incident.txt.csv"))));

        for (const bool isJson : {false, true}) {
            const QString suffix = isJson ? QStringLiteral("json") : QStringLiteral("csv");
            QVERIFY(view.findChild<QPushButton*>(QStringLiteral("export"))->menu()->actions().size() == 2);
            view.findChild<QAction*>(isJson ? QStringLiteral("exportJson") : QStringLiteral("exportCsv"))
                ->trigger();
            QFileDialog* dialog = nullptr;
            QTRY_VERIFY_WITH_TIMEOUT((dialog = view.findChild<QFileDialog*>(QStringLiteral("exportDialog"))),
                                     5000);
            QCOMPARE(dialog->acceptMode(), QFileDialog::AcceptSave);
            QCOMPARE(dialog->defaultSuffix(), suffix);
            QCOMPARE(dialog->nameFilters().size(), 1);
            QVERIFY(
                dialog->nameFilters().first().contains(QStringLiteral("(*.") + suffix + QLatin1Char(')')));
            QVERIFY2(dialog->selectedFiles().value(0).endsWith(QLatin1Char('.') + suffix),
                     qPrintable(dialog->selectedFiles().value(0)));
            dialog->selectFile(dir.filePath(QStringLiteral("from-dialog")));
            QCOMPARE(dialog->selectedFiles(),
                     QStringList{dir.filePath(QStringLiteral("from-dialog.") + suffix)});
            static_cast<QDialog*>(dialog)->accept(); // what Save does (QFileDialog hides it)
            QTRY_VERIFY_WITH_TIMEOUT(!session.isExporting(), 30000);
            QTRY_VERIFY_WITH_TIMEOUT(!view.findChild<QFileDialog*>(QStringLiteral("exportDialog")), 5000);
            QVERIFY2(QFile::exists(dir.filePath(QStringLiteral("from-dialog.") + suffix)),
                     qPrintable(suffix));
        }
    }
};

QTEST_MAIN(TestAuditView)
#include "test_auditview.moc"
