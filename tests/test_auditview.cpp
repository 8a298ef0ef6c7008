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

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDateTimeEdit>
#include <QFile>
#include <QFileDialog>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QScrollBar>
#include <QTableView>
#include <QTemporaryDir>
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
        auto* from = view.findChild<QDateTimeEdit*>(QStringLiteral("rangeFrom"));
        auto* to = view.findChild<QDateTimeEdit*>(QStringLiteral("rangeTo"));
        QVERIFY(from && to && !from->isVisible());
        QCOMPARE(from->timeSpec(), Qt::UTC);
        QVERIFY(from->displayFormat().contains(QStringLiteral("UTC")));

        // The range ends before it starts: not applied.
        const QDateTime now = QDateTime::currentDateTimeUtc();
        from->setDateTime(now);
        to->setDateTime(now.addSecs(-3600));
        since->setCurrentIndex(since->count() - 1); // custom range…
        QVERIFY(from->isVisible() && to->isVisible());
        QVERIFY(!model->filter().from && !model->filter().to);

        // 100 s of the seeded 2,000: the server returns what the range holds.
        from->setDateTime(now.addSecs(-1000 - 60));
        to->setDateTime(now.addSecs(-900 - 60));
        emit to->editingFinished();
        QVERIFY(model->filter().from && model->filter().to);
        QVERIFY(qAbs(model->filter().from->millis() - now.addSecs(-1060).toMSecsSinceEpoch()) < 1000);
        QVERIFY(*model->filter().to > *model->filter().from);
        const long long expected =
            m_db->count("SELECT count(*) FROM relctl.events WHERE relctl.epoch_ms(at) BETWEEN " +
                        std::to_string(model->filter().from->millis()) + " AND " +
                        std::to_string(model->filter().to->millis()));
        QVERIFY(expected > 50 && expected < 200);
        QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), int(expected), 10000);
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
