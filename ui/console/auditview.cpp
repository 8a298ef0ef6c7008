#include "auditview.h"

#include "auditmodel.h"
#include "consolesession.h"
#include "jobstatus.h"
#include "relctl/catalogue.h"
#include "timeformat.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QDateTimeEdit>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFrame>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollBar>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <nlohmann/json.hpp>

namespace relctl::ui {

namespace {

std::optional<std::string> value(const QString& text)
{
    const QString t = text.trimmed();
    if (t.isEmpty() || t.startsWith(QLatin1Char('(')))
        return std::nullopt;
    return t.toStdString();
}

QComboBox* choices(QWidget* parent, const QStringList& items)
{
    auto* box = new QComboBox(parent);
    box->addItem(QObject::tr("(any)"));
    box->addItems(items);
    return box;
}

// A vocabulary's choices (operations, reasons), in a box of its own width.
QComboBox* vocabulary(QWidget* parent, const QStringList& items)
{
    QComboBox* box = choices(parent, items);
    // As wide as a usual choice, not the longest ("REQUEST_SECRET_MISMATCH"):
    // on a narrow window the search field needs the room. The list opens
    // wide enough for every choice.
    const int full = box->sizeHint().width();
    box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    box->setMinimumContentsLength(16);
    box->view()->setMinimumWidth(full);
    return box;
}

// The catalogue's operations or reasons, as filter choices.
template <typename List> QStringList catalogueChoices(const List& list)
{
    QStringList items;
    for (const auto& entry : list) {
        std::string_view name;
        if constexpr (std::is_same_v<std::decay_t<decltype(entry)>, catalogue::Reason>)
            name = entry.code;
        else
            name = entry;
        items << QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size()));
    }
    return items;
}

QString exportSuffix(bool json)
{
    return json ? QStringLiteral("json") : QStringLiteral("csv");
}

// "1 event", "2002 events": the count in full, as the file will hold it.
QString events(qint64 n)
{
    return n == 1 ? QObject::tr("1 event") : QObject::tr("%1 events").arg(n);
}

// The range preset that opens the from/to fields.
constexpr int customRange = -1;

QDateTimeEdit* utcEdit(QWidget* parent, const QString& tip)
{
    auto* edit = new QDateTimeEdit(parent);
    edit->setTimeSpec(Qt::UTC);
    edit->setDisplayFormat(QStringLiteral("yyyy-MM-dd HH:mm:ss 'UTC'"));
    edit->setCalendarPopup(true);
    edit->setToolTip(tip);
    edit->hide();
    return edit;
}

} // namespace

AuditView::AuditView(ConsoleSession* session, QWidget* parent)
    : QWidget(parent), m_session(session), m_model(session->audit()), m_env(choices(this, {})),
      m_job(new QLineEdit(this)), m_operation(vocabulary(this, catalogueChoices(catalogue::kOperations))),
      m_reason(vocabulary(this, catalogueChoices(catalogue::kReasons))),
      m_refusedOnly(new QCheckBox(tr("Refused only"), this)), m_text(new QLineEdit(this)),
      m_typing(new QTimer(this)), m_since(new QComboBox(this)),
      m_from(utcEdit(this, tr("From (UTC, inclusive)"))), m_to(utcEdit(this, tr("To (UTC, inclusive)"))),
      m_table(new QTableView(this)), m_empty(new QLabel(m_table->viewport())),
      m_newEvents(new QFrame(m_table)), m_newEventsLabel(new QLabel(this)), m_exporting(new QWidget(this)),
      m_exportProgress(new QProgressBar(this)), m_exportLabel(new QLabel(this)),
      m_exportCancel(new QPushButton(tr("Cancel"), this)), m_export(new QPushButton(tr("E&xport"), this)),
      m_status(new QPushButton(tr("&Status…"), this)), m_csv(new QAction(tr("&CSV…"), this)),
      m_json(new QAction(tr("&JSON…"), this))
{
    QHBoxLayout* filters = buildFilterRow();
    buildNewEventsBar();
    buildExportStatus();
    buildTable();

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(filters);
    layout->addWidget(m_table);
    // Below the rows, like a status line: appearing, it moves none of them.
    layout->addWidget(m_exporting);

    connectFilters();
    connectActions();
}

QHBoxLayout* AuditView::buildFilterRow()
{
    // The time range, as incident reviews ask for it: the last so much, or
    // a range of their own.
    m_since->addItem(tr("any time"), QVariant());
    m_since->addItem(tr("last 15 minutes"), 15 * 60);
    m_since->addItem(tr("last hour"), 60 * 60);
    m_since->addItem(tr("last 24 hours"), 24 * 60 * 60);
    m_since->addItem(tr("last 7 days"), 7 * 24 * 60 * 60);
    m_since->addItem(tr("custom range…"), customRange);
    m_since->setToolTip(tr("Time range"));
    const QDateTime now = QDateTime::currentDateTimeUtc();
    m_from->setDateTime(now.addSecs(-60 * 60));
    m_to->setDateTime(now);
    m_job->setPlaceholderText(tr("job"));
    m_job->setToolTip(tr("Part of a job's name (any case)"));
    m_job->setMinimumWidth(m_job->fontMetrics().horizontalAdvance(QLatin1Char('x')) * 14);
    m_text->setPlaceholderText(tr("search job, release, actor, reason, detail, host…"));
    m_text->setToolTip(tr("Part of a job, release, op id, host, reason, actor, job URL, login or detail"));
    m_env->setToolTip(tr("Environment"));
    m_operation->setToolTip(tr("Operation"));
    m_reason->setToolTip(tr("Refusal reason"));
    m_refusedOnly->setToolTip(tr("Only the refusals (outcome rejected), whatever their reason"));
    m_refusedOnly->setObjectName(QStringLiteral("refusedOnly"));
    // One button, two formats: the filter row must fit a 1024-pixel window.
    m_export->setToolTip(tr("Exports every event the filter matches, in the table's order, as CSV or JSON"));
    m_export->setObjectName(QStringLiteral("export"));
    m_status->setObjectName(QStringLiteral("statusLookup"));
    m_status->setToolTip(tr("What became of a job or an op id (the selected row's job, or one you type)"));
    // As narrow as its text, not the style's usual button width: the filter
    // row must fit a 1024-pixel window.
    m_status->setMinimumWidth(m_status->fontMetrics().horizontalAdvance(m_status->text()) + 16);
    m_csv->setObjectName(QStringLiteral("exportCsv"));
    m_json->setObjectName(QStringLiteral("exportJson"));
    auto* formats = new QMenu(m_export);
    formats->addAction(m_csv);
    formats->addAction(m_json);
    m_export->setMenu(formats);
    m_job->setObjectName(QStringLiteral("jobFilter"));
    m_text->setObjectName(QStringLiteral("searchText"));
    m_from->setObjectName(QStringLiteral("rangeFrom"));
    m_to->setObjectName(QStringLiteral("rangeTo"));

    auto* filters = new QHBoxLayout;
    filters->addWidget(m_env);
    filters->addWidget(m_job);
    filters->addWidget(m_operation);
    filters->addWidget(m_reason);
    filters->addWidget(m_refusedOnly);
    filters->addWidget(m_since);
    filters->addWidget(m_from);
    filters->addWidget(m_to);
    // A quarter of its hint at the least: with Status… and Export beside it,
    // the row still fits a 1024-pixel window (the field grows on a wider one).
    m_text->setMinimumWidth(m_text->fontMetrics().horizontalAdvance(m_text->placeholderText()) / 4);
    filters->addWidget(m_text, 1);
    filters->addWidget(m_status);
    filters->addWidget(m_export);
    return filters;
}

void AuditView::buildNewEventsBar()
{
    // "N new events — Show": nothing moves above the row being read, and
    // no reset the reviewer did not ask for. It floats over the top of the
    // rows, where the new events will be: a bar in the layout would push the
    // table, and the row being read with it, down as it appears.
    auto* show = new QPushButton(tr("Show"), m_newEvents);
    auto* newLayout = new QHBoxLayout(m_newEvents);
    newLayout->setContentsMargins(8, 2, 2, 2);
    m_newEventsLabel->setParent(m_newEvents);
    newLayout->addWidget(m_newEventsLabel);
    newLayout->addWidget(show);
    m_newEvents->setFrameShape(QFrame::StyledPanel);
    m_newEvents->setAutoFillBackground(true);
    m_newEvents->hide();
    m_table->installEventFilter(this); // keeps it placed as the table resizes
    m_newEvents->setObjectName(QStringLiteral("newEvents"));
    show->setObjectName(QStringLiteral("newEventsShow"));
    m_newEventsLabel->setObjectName(QStringLiteral("newEventsCount"));
    connect(show, &QPushButton::clicked, this, [this] {
        const bool onTop = m_model->auditSort() == relctl::AuditSort{}; // newest first: inserted on top
        m_model->showNewEvents();
        if (onTop)
            m_table->scrollToTop();
    });
    connect(m_model, &AuditModel::newEventsPending, this, &AuditView::showNewEvents);
}

void AuditView::buildExportStatus()
{
    // Export progress: non-modal, the console keeps updating meanwhile.
    auto* exportLayout = new QHBoxLayout(m_exporting);
    exportLayout->setContentsMargins(0, 0, 0, 0);
    m_exportProgress->setParent(m_exporting);
    m_exportProgress->setRange(0, 0); // the total is not known in advance: busy
    m_exportProgress->setMaximumWidth(160);
    m_exportCancel->setParent(m_exporting);
    exportLayout->addWidget(m_exportProgress);
    exportLayout->addWidget(m_exportLabel, 1);
    exportLayout->addWidget(m_exportCancel);
    m_exportLabel->setParent(m_exporting);
    m_exportLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_exportProgress->hide();
    m_exportCancel->hide();
    m_exporting->hide();
    connect(m_exportCancel, &QPushButton::clicked, m_session, &ConsoleSession::cancelExport);
    connect(m_session, &ConsoleSession::exportProgress, this, [this](qint64 rows) {
        m_exportLabel->setText(tr("Exporting to %1: %2…").arg(m_exportPath, events(rows)));
    });
    connect(m_session, &ConsoleSession::exportFinished, this,
            [this](bool ok, qint64 rows, const QString& message) {
                m_exportProgress->hide();
                m_exportCancel->hide();
                m_export->setEnabled(true);
                m_exportLabel->setText(ok ? tr("Exported %1 to %2").arg(events(rows), m_exportPath)
                                          : tr("Export to %1 failed: %2").arg(m_exportPath, message));
            });
    m_exportLabel->setObjectName(QStringLiteral("exportStatus"));
    m_exportCancel->setObjectName(QStringLiteral("exportCancel"));
}

void AuditView::buildTable()
{
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setWordWrap(false);
    // The server sorts (a reset and the first page under the new order); the
    // indicator starts on the model's sort, so enabling sorting asks nothing new.
    m_table->horizontalHeader()->setSortIndicator(m_model->sortColumn(), m_model->sortOrder());
    m_table->setSortingEnabled(true);
    // A column the server cannot sort by keeps the indicator where the real sort is.
    connect(m_table->horizontalHeader(), &QHeaderView::sortIndicatorChanged, this, [this](int column) {
        if (!AuditModel::isSortable(column))
            m_table->horizontalHeader()->setSortIndicator(m_model->sortColumn(), m_model->sortOrder());
    });
    // New events inserted on top must not move what the reviewer reads: while
    // they read (scrolled down, or a row selected below the newest), new
    // events wait behind the bar; at the top with nothing selected (or the
    // newest), they appear in place. Asked again whenever any of that changes.
    connect(m_table->verticalScrollBar(), &QScrollBar::valueChanged, this, &AuditView::updateReading);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &AuditView::updateReading);
    connect(m_model, &QAbstractItemModel::rowsInserted, this, &AuditView::updateReading);
    connect(m_model, &QAbstractItemModel::modelReset, this, &AuditView::updateReading);
    // Sized once from the first page: ResizeToContents would measure every loaded row on each change.
    // And from a hundred of its rows (those in view, then their neighbours),
    // not all 500: laying out every cell's text is what showing the first
    // page costs most (about 27 ms for 500 rows here, 6 ms for a hundred).
    m_table->horizontalHeader()->setResizeContentsPrecision(100);
    connect(m_model, &QAbstractItemModel::rowsInserted, this, [this] {
        if (!m_sized) {
            m_table->resizeColumnsToContents();
            // Long values elide (their tooltip holds them whole): one wide
            // detail or URL must not push every other column off screen.
            for (const auto column : {AuditModel::Column::Detail, AuditModel::Column::JobUrl,
                                      AuditModel::Column::OpId, AuditModel::Column::Current})
                m_table->setColumnWidth(int(column), std::min(m_table->columnWidth(int(column)), 320));
            m_sized = true;
        }
    });

    // An empty answer says so where the rows would be, naming the filters
    // that left nothing, so a blank table is never mistaken for "still
    // loading" or "nothing happened".
    m_empty->setObjectName(QStringLiteral("emptyResult"));
    m_empty->setTextFormat(Qt::PlainText); // it quotes what the reviewer typed
    m_empty->setAlignment(Qt::AlignCenter);
    m_empty->setWordWrap(true);
    m_empty->setAttribute(Qt::WA_TransparentForMouseEvents);
    m_empty->hide();
    auto* emptyLayout = new QVBoxLayout(m_table->viewport());
    emptyLayout->addWidget(m_empty);
    connect(m_model, &AuditModel::emptyResultChanged, this, &AuditView::showEmptyResult);
}

void AuditView::connectFilters()
{
    for (QComboBox* box : {m_env, m_operation, m_reason})
        connect(box, &QComboBox::currentIndexChanged, this, &AuditView::applyFilter);
    connect(m_refusedOnly, &QCheckBox::toggled, this, &AuditView::applyFilter);
    connect(m_since, &QComboBox::currentIndexChanged, this, &AuditView::rangeChanged);
    for (QDateTimeEdit* edit : {m_from, m_to})
        connect(edit, &QDateTimeEdit::editingFinished, this, &AuditView::rangeChanged);
    // The job and search fields apply as the reviewer types, once typing
    // pauses; Enter applies at once. A field that loses focus after the
    // pause asks nothing again.
    m_typing->setSingleShot(true);
    m_typing->setInterval(typingPauseMs);
    connect(m_typing, &QTimer::timeout, this, &AuditView::applyFilter);
    for (QLineEdit* edit : {m_job, m_text}) {
        edit->setClearButtonEnabled(true);
        connect(edit, &QLineEdit::textChanged, m_typing, qOverload<>(&QTimer::start));
        connect(edit, &QLineEdit::editingFinished, this, [this] {
            if (m_typing->isActive())
                applyFilter();
        });
    }
}

void AuditView::connectActions()
{
    // What became of the selected row's job (its newest operation), else of
    // one the reviewer types in the card.
    connect(m_status, &QPushButton::clicked, this, [this] {
        const QModelIndex current = m_table->selectionModel()->currentIndex();
        const relctl::Event* e = current.isValid() ? m_model->eventAt(current.row()) : nullptr;
        emit statusRequested(
            {StatusLookup::Kind::Job, e && e->job ? QString::fromStdString(*e->job) : QString()});
    });
    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_table, &QWidget::customContextMenuRequested, this, &AuditView::showRowMenu);
    connect(m_csv, &QAction::triggered, this, [this] { exportRows(false); });
    connect(m_json, &QAction::triggered, this, [this] { exportRows(true); });
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (!current.isValid())
                    return;
                emit eventSelected(current.data(AuditModel::EventId).toLongLong(),
                                   current.data(AuditModel::AtMs).toLongLong(),
                                   current.data(AuditModel::Rejected).toBool());
            });
}

QSize AuditView::sizeHint() const
{
    // Room for about ten events under the filters: the main window gives its
    // dock what this asks, and a reviewer reading two rows at a time loses
    // the story.
    const int rows = 10;
    const int table = m_table->horizontalHeader()->sizeHint().height() +
                      rows * m_table->verticalHeader()->defaultSectionSize() +
                      m_table->horizontalScrollBar()->sizeHint().height() + 2 * m_table->frameWidth();
    const QSize base = QWidget::sizeHint();
    return {base.width(), std::max(base.height(), m_env->sizeHint().height() + table)};
}

void AuditView::setEnvironments(const QStringList& names)
{
    const QString current = m_env->currentText();
    QSignalBlocker block(m_env);
    while (m_env->count() > 1)
        m_env->removeItem(1);
    m_env->addItems(names);
    m_env->setCurrentText(current);
}

bool AuditView::customRangeValid() const
{
    return m_from->dateTime() <= m_to->dateTime();
}

void AuditView::rangeChanged()
{
    const bool custom = m_since->currentData() == customRange;
    m_from->setVisible(custom);
    m_to->setVisible(custom);
    if (custom && !customRangeValid()) {
        // Not applied: the table keeps showing the last valid filter.
        for (QDateTimeEdit* edit : {m_from, m_to}) {
            edit->setStyleSheet(QStringLiteral("QDateTimeEdit { color: #dc322f; }"));
            edit->setToolTip(tr("The range ends before it starts"));
        }
        return;
    }
    m_from->setStyleSheet({});
    m_to->setStyleSheet({});
    m_from->setToolTip(tr("From (UTC, inclusive)"));
    m_to->setToolTip(tr("To (UTC, inclusive)"));
    applyFilter();
}

void AuditView::applyFilter()
{
    m_typing->stop(); // what was typed is in this filter
    relctl::AuditFilter filter;
    filter.env = value(m_env->currentText());
    filter.job = value(m_job->text());
    filter.operation = value(m_operation->currentText());
    filter.reason = value(m_reason->currentText());
    filter.text = value(m_text->text());
    if (m_refusedOnly->isChecked())
        filter.outcome = "rejected";
    if (const QVariant preset = m_since->currentData(); preset == customRange) {
        if (!customRangeValid())
            return;
        filter.from = relctl::Timestamp::fromMillis(m_from->dateTime().toMSecsSinceEpoch());
        // The edit shows whole seconds: "to" includes the whole of its last second.
        filter.to = relctl::Timestamp::fromMillis(m_to->dateTime().toMSecsSinceEpoch() + 999);
    } else if (preset.isValid()) {
        filter.from =
            relctl::Timestamp::fromMillis(QDateTime::currentMSecsSinceEpoch() - preset.toLongLong() * 1000);
    }
    m_model->setFilter(filter);
}

void AuditView::updateReading()
{
    const QModelIndexList selected = m_table->selectionModel()->selectedRows();
    m_model->setHoldNewEvents(m_table->verticalScrollBar()->value() > 0 ||
                              (!selected.isEmpty() && selected.first().row() > 0));
}

bool AuditView::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_table && event->type() == QEvent::Resize)
        placeNewEvents();
    return QWidget::eventFilter(watched, event);
}

void AuditView::placeNewEvents()
{
    // Top centre of the rows, in the table's coordinates: not the viewport's
    // child, which scrolling would carry away with the rows.
    const QRect rows = m_table->viewport()->geometry();
    const QSize size = m_newEvents->sizeHint();
    m_newEvents->setGeometry(rows.left() + std::max(0, (rows.width() - size.width()) / 2), rows.top() + 4,
                             std::min(size.width(), rows.width()), size.height());
    m_newEvents->raise();
}

void AuditView::showNewEvents(int count)
{
    m_newEventsLabel->setText(count == 1 ? tr("1 new event") : tr("%1 new events").arg(count));
    m_newEvents->setVisible(count > 0);
    placeNewEvents();
}

void AuditView::showEmptyResult(bool empty)
{
    if (empty)
        m_empty->setText(emptyResultText());
    m_empty->setVisible(empty);
}

QString AuditView::emptyResultText() const
{
    const relctl::AuditFilter& f = m_model->filter();
    const auto quoted = [](const std::string& s) {
        return tr("\u201c%1\u201d").arg(QString::fromStdString(s));
    };
    QStringList named;
    if (f.env)
        named << tr("environment %1").arg(QString::fromStdString(*f.env));
    if (f.job)
        named << tr("job containing %1").arg(quoted(*f.job));
    if (f.operation)
        named << tr("operation %1").arg(QString::fromStdString(*f.operation));
    if (f.reason)
        named << tr("reason %1").arg(QString::fromStdString(*f.reason));
    if (f.outcome)
        named << tr("refused only");
    if (f.text)
        named << tr("search %1").arg(quoted(*f.text));
    if (f.from && f.to)
        named << tr("from %1 to %2").arg(formatTime(*f.from), formatTime(*f.to));
    else if (f.from)
        named << m_since->currentText();
    if (named.isEmpty())
        return tr("No events recorded yet.");
    return tr("No events match these filters.") + QLatin1Char('\n') + named.join(QStringLiteral(" \u00b7 "));
}

void AuditView::selectEvent(qint64 eventId)
{
    if (auto row = m_model->rowForEvent(eventId)) {
        const QModelIndex index = m_model->index(*row, 0);
        QSignalBlocker block(m_table->selectionModel());
        m_table->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect |
                                                              QItemSelectionModel::Rows);
        m_table->scrollTo(index);
        updateReading(); // the selection's signals were blocked
    }
}

void AuditView::showRowMenu(const QPoint& at)
{
    const QModelIndex index = m_table->indexAt(at);
    const relctl::Event* e = index.isValid() ? m_model->eventAt(index.row()) : nullptr;
    if (!e || (!e->job && !e->opId))
        return;
    // The row's op id is what this event was; its job is the run as a
    // whole (its newest operation): both questions, each named.
    auto* menu = new QMenu(this);
    menu->setAttribute(Qt::WA_DeleteOnClose);
    if (e->job) {
        const QString job = QString::fromStdString(*e->job);
        QAction* a = menu->addAction(tr("What became of job %1?").arg(job));
        a->setObjectName(QStringLiteral("statusOfJob"));
        connect(a, &QAction::triggered, this, [this, job] {
            emit statusRequested({StatusLookup::Kind::Job, job});
        });
    }
    if (e->opId) {
        const QString op = QString::fromStdString(*e->opId);
        QAction* a = menu->addAction(tr("What became of operation %1?").arg(op));
        a->setObjectName(QStringLiteral("statusOfOperation"));
        connect(a, &QAction::triggered, this, [this, op] {
            emit statusRequested({StatusLookup::Kind::Operation, op});
        });
    }
    menu->popup(m_table->viewport()->mapToGlobal(at));
}

void AuditView::exportRows(bool json)
{
    // Not the static getSaveFileName(): its nested event loop would hold the
    // console's updates, and only an instance takes a default suffix.
    auto* dialog = new QFileDialog(this, tr("Export audit events"), m_exportDir);
    dialog->setObjectName(QStringLiteral("exportDialog"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setAcceptMode(QFileDialog::AcceptSave);
    dialog->setNameFilter(json ? tr("JSON (*.json)") : tr("CSV (*.csv)"));
    dialog->setDefaultSuffix(exportSuffix(json));
    // A name that says what and when (UTC, like every time in the console).
    dialog->selectFile(QStringLiteral("audit-%1.%2")
                           .arg(QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMdd-HHmmss")),
                                exportSuffix(json)));
    connect(dialog, &QFileDialog::fileSelected, this, [this, json](const QString& path) {
        m_exportDir = QFileInfo(path).absolutePath();
        exportTo(path, json);
    });
    dialog->open();
}

void AuditView::exportTo(const QString& path, bool json)
{
    // A name without an extension gets the format's, as the dialog's default
    // suffix does, so the file opens in what reads CSV or JSON; a name with
    // an extension of its own is the reviewer's choice and kept.
    const QString file =
        QFileInfo(path).suffix().isEmpty() ? path + QLatin1Char('.') + exportSuffix(json) : path;
    if (!m_session->exportAudit(file, json))
        return; // one at a time: the button is disabled meanwhile
    m_exportPath = QFileInfo(file).fileName();
    m_export->setEnabled(false);
    m_exportLabel->setText(tr("Exporting to %1…").arg(m_exportPath));
    m_exportProgress->show();
    m_exportCancel->show();
    m_exporting->show();
}

QString AuditView::stopNote(qint64 eventId) const
{
    for (int row = 0; row < m_model->rowCount(); ++row) {
        const relctl::Event* event = m_model->eventAt(row);
        if (event == nullptr || event->id != eventId || !event->detail)
            continue;
        const auto detail = nlohmann::json::parse(*event->detail, nullptr, false);
        const auto stopped = detail.is_object() ? detail.find("stopped") : detail.end();
        if (stopped == detail.end() || !stopped->is_object())
            return {};
        const QString caveat = jobstatus::caveat(detail);
        return jobstatus::sentence(jobstatus::stoppedWords(*stopped).toStdString()) +
               (caveat.isEmpty() ? QString() : QLatin1Char(' ') + caveat);
    }
    return {};
}

} // namespace relctl::ui
