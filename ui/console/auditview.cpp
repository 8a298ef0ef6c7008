#include "auditview.h"

#include "auditcells.h"
#include "auditmodel.h"
#include "auditrange.h"
#include "consolesession.h"
#include "jobstatus.h"
#include "relctl/catalogue.h"
#include "savelocation.h"
#include "timeformat.h"

#include <QAction>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDateTime>
#include <QDesktopServices>
#include <QDir>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFrame>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollBar>
#include <QSettings>
#include <QStackedWidget>
#include <QStringListModel>
#include <QTableView>
#include <QTimer>
#include <QUrl>
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
    // on a narrow window the labelled filters need the room. The list opens
    // wide enough for every choice.
    const int full = box->sizeHint().width();
    box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    box->setMinimumContentsLength(12);
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

using auditrange::Preset;

// Where the last export's directory is kept between runs.
const QString exportDirKey = QStringLiteral("audit/exportDirectory");

// A typed moment, as the field shows it when the console fills it in.
QString typedText(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}

QLineEdit* rangeField(QWidget* parent, const QString& name, const QString& tip)
{
    auto* edit = new QLineEdit(parent);
    edit->setObjectName(name);
    edit->setPlaceholderText(QStringLiteral("2026-12-06 14:30"));
    edit->setToolTip(tip);
    edit->setAccessibleName(tip);
    // "2026-12-06 14:30:15", and a little room.
    edit->setMinimumWidth(edit->fontMetrics().horizontalAdvance(QStringLiteral("2026-12-06 14:30:15")) + 16);
    edit->setMaximumWidth(edit->minimumWidth() + 24);
    edit->setClearButtonEnabled(false);
    return edit;
}

// A visible label for a filter, which screen readers also hear as its name.
QLabel* labelFor(QWidget* parent, const QString& text, QWidget* field, const QString& accessibleName)
{
    auto* label = new QLabel(text, parent);
    label->setBuddy(field);
    field->setAccessibleName(accessibleName);
    return label;
}

} // namespace

AuditView::AuditView(ConsoleSession* session, QWidget* parent)
    : QWidget(parent), m_session(session), m_model(session->audit()), m_env(choices(this, {})),
      m_job(new QLineEdit(this)), m_operation(vocabulary(this, catalogueChoices(catalogue::kOperations))),
      m_reason(vocabulary(this, catalogueChoices(catalogue::kReasons))),
      m_refusedOnly(new QCheckBox(tr("Refused only"), this)), m_text(new QLineEdit(this)),
      m_typing(new QTimer(this)), m_range(new QComboBox(this)),
      m_from(rangeField(this, QStringLiteral("rangeFrom"), tr("From (UTC, inclusive)"))),
      m_to(rangeField(this, QStringLiteral("rangeTo"), tr("To (UTC, inclusive)"))),
      m_rangeNote(new QLabel(this)), m_tableArea(new QStackedWidget(this)), m_unreadable(new QLabel(this)),
      m_count(new QLabel(this)), m_table(new QTableView(this)), m_empty(new QLabel(m_table->viewport())),
      m_newEvents(new QFrame(m_table)), m_newEventsLabel(new QLabel(this)), m_exporting(new QWidget(this)),
      m_exportProgress(new QProgressBar(this)), m_exportLabel(new QLabel(this)),
      m_exportCancel(new QPushButton(tr("Cancel"), this)), m_exportOpen(new QPushButton(tr("Open"), this)),
      m_exportShow(new QPushButton(tr("Show in folder"), this)), m_exportNote(new QLabel(this)),
      m_export(new QPushButton(tr("E&xport"), this)), m_status(new QPushButton(tr("&Status…"), this)),
      m_csv(new QAction(tr("&CSV…"), this)), m_json(new QAction(tr("&JSON…"), this)),
      m_exportDir(QSettings().value(exportDirKey).toString()),
      m_openUrl([](const QUrl& url) { return QDesktopServices::openUrl(url); })
{
    QVBoxLayout* filters = buildFilterRows();
    buildNewEventsBar();
    buildExportStatus();
    buildTable();

    // The table, or in its place why the trail cannot be read: a blank
    // table would read as "nothing happened".
    m_unreadable->setObjectName(QStringLiteral("trailUnreadable"));
    m_unreadable->setTextFormat(Qt::PlainText);
    m_unreadable->setAlignment(Qt::AlignCenter);
    m_unreadable->setWordWrap(true);
    m_unreadable->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_tableArea->addWidget(m_table);
    m_tableArea->addWidget(m_unreadable);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(filters);
    layout->addWidget(m_tableArea, 1);
    // Below the rows, like a status line: appearing, it moves none of them.
    layout->addWidget(m_exporting);

    connectFilters();
    connectActions();
}

QVBoxLayout* AuditView::buildFilterRows()
{
    // The time range, as incident reviews ask for it. The presets that
    // follow the clock are computed again each time the trail is read.
    for (const Preset preset : {Preset::AnyTime, Preset::LastHour, Preset::Today, Preset::Yesterday,
                                Preset::Last7Days, Preset::AroundEvent, Preset::Custom})
        m_range->addItem(auditrange::name(preset), int(preset));
    m_range->setToolTip(tr("Time range"));
    m_range->setObjectName(QStringLiteral("timeRange"));
    // As wide as the usual presets; the list opens wide enough for all.
    const int full = m_range->sizeHint().width();
    m_range->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_range->setMinimumContentsLength(14);
    m_range->view()->setMinimumWidth(full);
    m_rangeNote->setObjectName(QStringLiteral("rangeNote"));
    m_rangeNote->setTextFormat(Qt::PlainText);
    // Its text never changes the row's layout: it takes the room it is given.
    m_rangeNote->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_job->setPlaceholderText(tr("part of a name"));
    m_job->setToolTip(tr("Part of a job's name (any case)"));
    m_job->setMinimumWidth(m_job->fontMetrics().horizontalAdvance(QLatin1Char('x')) * 12);
    m_text->setPlaceholderText(tr("job, release, actor, reason, detail, host…"));
    m_text->setToolTip(tr("Part of a job, release, op id, host, reason, actor, job URL, login or detail"));
    m_env->setObjectName(QStringLiteral("environmentFilter"));
    m_env->setToolTip(tr("Environment"));
    // "(any)", then the environments: a list model, replaced whole by setEnvironments.
    m_env->setModel(new QStringListModel({m_env->itemText(0)}, m_env));
    m_operation->setToolTip(tr("Operation"));
    m_reason->setToolTip(tr("Refusal reason"));
    m_refusedOnly->setToolTip(tr("Only the refusals (outcome rejected), whatever their reason"));
    m_refusedOnly->setObjectName(QStringLiteral("refusedOnly"));
    m_refusedOnly->setAccessibleName(tr("Refused only"));
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

    QLabel* envLabel = labelFor(this, tr("Environment:"), m_env, tr("Environment"));
    QLabel* jobLabel = labelFor(this, tr("Job:"), m_job, tr("Job"));
    QLabel* operationLabel = labelFor(this, tr("Operation:"), m_operation, tr("Operation"));
    QLabel* reasonLabel = labelFor(this, tr("Reason:"), m_reason, tr("Refusal reason"));
    QLabel* rangeLabel = labelFor(this, tr("Range:"), m_range, tr("Time range"));
    QLabel* fromLabel = labelFor(this, tr("From:"), m_from, tr("From (UTC, inclusive)"));
    QLabel* toLabel = labelFor(this, tr("To:"), m_to, tr("To (UTC, inclusive)"));
    QLabel* textLabel = labelFor(this, tr("Search:"), m_text, tr("Search"));

    // Who and what on the first row; when and free text on the second. The
    // from/to fields keep their place while hidden, so choosing a custom
    // range moves nothing.
    auto* first = new QHBoxLayout;
    for (QWidget* w : std::initializer_list<QWidget*>{envLabel, m_env, jobLabel, m_job, operationLabel,
                                                      m_operation, reasonLabel, m_reason, m_refusedOnly})
        first->addWidget(w);
    first->addStretch(1);
    first->addWidget(m_status);
    first->addWidget(m_export);
    auto* second = new QHBoxLayout;
    for (QWidget* w : std::initializer_list<QWidget*>{rangeLabel, m_range, fromLabel, m_from, toLabel, m_to})
        second->addWidget(w);
    second->addWidget(m_rangeNote, 3);
    second->addWidget(textLabel);
    m_text->setMinimumWidth(m_text->fontMetrics().horizontalAdvance(m_text->placeholderText()) / 2);
    second->addWidget(m_text, 2);
    // The count ends the row, wide enough for the usual texts that its
    // changes do not move the search field.
    m_count->setMinimumWidth(m_count->fontMetrics().horizontalAdvance(tr("at least 10,000 events")) + 8);
    m_count->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    second->addWidget(m_count);
    m_rangeFields = {fromLabel, m_from, toLabel, m_to};
    for (QWidget* w : m_rangeFields) {
        QSizePolicy policy = w->sizePolicy();
        policy.setRetainSizeWhenHidden(true);
        w->setSizePolicy(policy);
        w->hide();
    }
    m_filterWidgets = {envLabel,    m_env,    jobLabel,      m_job,       operationLabel, m_operation,
                       reasonLabel, m_reason, m_refusedOnly, rangeLabel,  m_range,        fromLabel,
                       m_from,      toLabel,  m_to,          m_rangeNote, textLabel,      m_text};

    auto* rows = new QVBoxLayout;
    rows->setSpacing(2);
    rows->addLayout(first);
    rows->addLayout(second);
    return rows;
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
    m_table->installEventFilter(this); // keeps it placed as the table resizes; Ctrl+C
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
    m_exportOpen->setParent(m_exporting);
    m_exportShow->setParent(m_exporting);
    m_exportNote->setParent(m_exporting);
    exportLayout->addWidget(m_exportProgress);
    exportLayout->addWidget(m_exportLabel, 1);
    exportLayout->addWidget(m_exportNote);
    exportLayout->addWidget(m_exportCancel);
    exportLayout->addWidget(m_exportOpen);
    exportLayout->addWidget(m_exportShow);
    m_exportLabel->setParent(m_exporting);
    m_exportLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_exportNote->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_exportNote->setStyleSheet(QStringLiteral("QLabel { color: #dc322f; }"));
    for (QWidget* w : std::initializer_list<QWidget*>{m_exportProgress, m_exportCancel, m_exportOpen,
                                                      m_exportShow, m_exportNote, m_exporting})
        w->hide();
    // What the reviewer does next with the file: look at it, or attach it.
    m_exportOpen->setToolTip(tr("Opens the exported file"));
    m_exportShow->setToolTip(tr("Opens the folder that holds the exported file"));
    m_exportOpen->setObjectName(QStringLiteral("exportOpen"));
    m_exportShow->setObjectName(QStringLiteral("exportShowInFolder"));
    m_exportNote->setObjectName(QStringLiteral("exportOpenFailed"));
    connect(m_exportOpen, &QPushButton::clicked, this, [this] { openExported(false); });
    connect(m_exportShow, &QPushButton::clicked, this, [this] { openExported(true); });
    connect(m_exportCancel, &QPushButton::clicked, m_session, &ConsoleSession::cancelExport);
    connect(m_session, &ConsoleSession::exportProgress, this, [this](qint64 rows) {
        m_exportLabel->setText(tr("Exporting to %1: %2…").arg(m_exportPath, events(rows)));
    });
    connect(m_session, &ConsoleSession::exportFinished, this,
            [this](bool ok, qint64 rows, const QString& message) {
                m_exportProgress->hide();
                m_exportCancel->hide();
                m_export->setEnabled(m_readable);
                m_exportLabel->setText(ok ? tr("Exported %1 to %2").arg(events(rows), m_exportPath)
                                          : tr("Export to %1 failed: %2").arg(m_exportPath, message));
                m_exportOpen->setVisible(ok);
                m_exportShow->setVisible(ok);
            });
    // How many events the filter matches, as far as it is known.
    m_count->setObjectName(QStringLiteral("eventCount"));
    m_count->setTextInteractionFlags(Qt::TextSelectableByMouse);
    connect(m_model, &AuditModel::countChanged, this, &AuditView::updateCount);
    connect(m_model, &QAbstractItemModel::rowsInserted, this, &AuditView::updateCount);
    connect(m_model, &AuditModel::newEventsPending, this, &AuditView::updateCount);
    m_exportLabel->setObjectName(QStringLiteral("exportStatus"));
    m_exportCancel->setObjectName(QStringLiteral("exportCancel"));
}

void AuditView::buildTable()
{
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    // Several rows at once: a reviewer copies the events an incident turned on.
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    // Tab leaves the table for the next control instead of walking its
    // columns one by one; the arrow keys still move between cells.
    m_table->setTabKeyNavigation(false);
    m_table->setAccessibleName(tr("Audit events"));
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
    connect(m_range, &QComboBox::currentIndexChanged, this, &AuditView::rangeChanged);
    for (QLineEdit* edit : {m_from, m_to}) {
        // Said as it is typed; applied on Enter or on leaving the field.
        connect(edit, &QLineEdit::textEdited, this, [this] { showRangeState(); });
        connect(edit, &QLineEdit::editingFinished, this, &AuditView::typedRangeEdited);
    }
    // The row "around selected event" was chosen for, once the narrowed list has it.
    connect(m_model, &QAbstractItemModel::rowsInserted, this, [this] {
        if (m_reselectAround && m_aroundEvent && m_model->rowForEvent(*m_aroundEvent)) {
            m_reselectAround = false;
            selectEvent(*m_aroundEvent);
        }
    });
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
    const int filters = 2 * m_env->sizeHint().height();
    return {base.width(), std::max(base.height(), filters + table)};
}

void AuditView::setEnvironments(const QStringList& names)
{
    const QString current = m_env->currentText();
    QSignalBlocker block(m_env);
    // The list replaced at once: 10,000 names added one item at a time cost
    // the first load 8 ms, and removing them one at a time (each removal
    // moving the rest) took seconds when an environment came or went.
    auto* list = qobject_cast<QStringListModel*>(m_env->model());
    list->setStringList(QStringList{list->stringList().value(0)} + names);
    m_env->setCurrentIndex(std::max(0, m_env->findText(current)));
}

bool AuditView::showRangeState()
{
    // Only for a typed range: the presets cannot be wrong.
    const auto preset = Preset(m_range->currentData().toInt());
    const bool typed = preset == Preset::Custom || preset == Preset::AroundEvent;
    for (QWidget* w : m_rangeFields)
        w->setVisible(typed);
    QString problem;
    QList<QLineEdit*> wrong;
    if (preset == Preset::AroundEvent && !m_aroundEvent) {
        problem = tr("select an event in the table first");
    } else if (preset == Preset::Custom) {
        for (QLineEdit* edit : {m_from, m_to})
            if (!auditrange::parseTyped(edit->text()))
                wrong << edit;
        if (!wrong.isEmpty())
            problem = tr("type a UTC time as 2026-12-06 14:30");
        else if (!auditrange::typedRange(m_from->text(), m_to->text())) {
            problem = tr("the range ends before it starts");
            wrong = {m_from, m_to};
        }
    }
    for (QLineEdit* edit : {m_from, m_to}) {
        const bool bad = wrong.contains(edit);
        edit->setStyleSheet(bad ? QStringLiteral("QLineEdit { border: 2px solid #dc322f; }") : QString());
        edit->setProperty("invalid", bad);
    }
    m_rangeNote->setText(problem.isEmpty() ? QString() : tr("Not applied: %1").arg(problem));
    m_rangeNote->setToolTip(m_rangeNote->text());
    m_rangeNote->setStyleSheet(problem.isEmpty() ? QString() : QStringLiteral("QLabel { color: #dc322f; }"));
    return problem.isEmpty();
}

void AuditView::rangeChanged()
{
    const auto preset = Preset(m_range->currentData().toInt());
    if (preset == Preset::AroundEvent) {
        // The selected row's event, or none: then it says what to do.
        const QModelIndex current = m_table->selectionModel()->currentIndex();
        m_aroundEvent.reset();
        if (current.isValid()) {
            m_aroundEvent = current.data(AuditModel::EventId).toLongLong();
            m_aroundAtMs = current.data(AuditModel::AtMs).toLongLong();
            m_from->setText(typedText(m_aroundAtMs - auditrange::aroundEventMs));
            m_to->setText(typedText(m_aroundAtMs + auditrange::aroundEventMs));
            m_aroundText = m_from->text() + QLatin1Char('\n') + m_to->text();
            m_reselectAround = true;
        }
    } else if (preset == Preset::Custom && m_from->text().isEmpty() && m_to->text().isEmpty()) {
        // A starting point to edit: the hour up to now (not up to when the
        // console opened), to the minute.
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        const QString format = QStringLiteral("yyyy-MM-dd HH:mm");
        m_from->setText(QDateTime::fromMSecsSinceEpoch(now - 60 * 60 * 1000, Qt::UTC).toString(format));
        m_to->setText(QDateTime::fromMSecsSinceEpoch(now, Qt::UTC).toString(format));
    }
    if (showRangeState())
        applyFilter();
}

void AuditView::typedRangeEdited()
{
    // Typed over the range around an event: now it is a range of the reviewer's own.
    const auto preset = Preset(m_range->currentData().toInt());
    if (preset == Preset::AroundEvent) {
        if (m_from->text() + QLatin1Char('\n') + m_to->text() == m_aroundText)
            return; // left as it was filled in
        QSignalBlocker block(m_range);
        m_range->setCurrentIndex(m_range->findData(int(Preset::Custom)));
    } else if (preset != Preset::Custom) {
        return;
    }
    if (showRangeState())
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
    const auto preset = Preset(m_range->currentData().toInt());
    switch (preset) {
    case Preset::AroundEvent:
        if (!m_aroundEvent)
            return; // nothing to be around: the note says so
        // The event's own time, to the millisecond, not the fields' whole seconds.
        auditrange::around(m_aroundAtMs, filter);
        m_model->setFilter(filter);
        return;
    case Preset::Custom: {
        const auto range = auditrange::typedRange(m_from->text(), m_to->text());
        if (!range)
            return; // not applied: the table keeps showing the last valid filter
        filter.from = range->first;
        filter.to = range->second;
        m_model->setFilter(filter);
        return;
    }
    default:
        // Any time, or a preset the model computes from now on every read.
        m_model->setFilter(filter, preset);
        return;
    }
}

void AuditView::updateCount()
{
    m_count->setText(m_model->countText());
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
    // Ctrl+C copies the selected rows whole, not the current cell's text
    // (what the table does by itself); the key is the table's, before any
    // window shortcut.
    if (watched == m_table &&
        (event->type() == QEvent::ShortcutOverride || event->type() == QEvent::KeyPress) &&
        static_cast<QKeyEvent*>(event)->matches(QKeySequence::Copy)) {
        event->accept();
        if (event->type() == QEvent::KeyPress)
            copySelectedRows();
        return true;
    }
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
    if (auditrange::followsClock(m_model->rangePreset()))
        named << auditrange::name(m_model->rangePreset()).toLower();
    else if (f.from && f.to)
        named << tr("from %1 to %2").arg(formatTime(*f.from), formatTime(*f.to));
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
    if (!e)
        return;
    // A click outside the selection selects that row, as everywhere: what
    // is copied is what is highlighted.
    if (!m_table->selectionModel()->isRowSelected(index.row(), {}))
        m_table->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect |
                                                              QItemSelectionModel::Rows);
    auto* menu = new QMenu(this);
    menu->setAttribute(Qt::WA_DeleteOnClose);
    QAction* copy = menu->addAction(tr("Copy rows"), this, &AuditView::copySelectedRows);
    copy->setObjectName(QStringLiteral("copyRows"));
    copy->setShortcut(QKeySequence::Copy); // shown; the table handles the key itself
    copy->setShortcutVisibleInContextMenu(true);
    copy->setToolTip(tr("The selected rows as text with a header line, separated by tabs"));
    // The row's op id is what this event was; its job is the run as a
    // whole (its newest operation): both questions, each named.
    if (e->job || e->opId)
        menu->addSeparator();
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
    auto* dialog = new QFileDialog(this, tr("Export audit events"), exportDirectory());
    dialog->setObjectName(QStringLiteral("exportDialog"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setAcceptMode(QFileDialog::AcceptSave);
    dialog->setNameFilter(json ? tr("JSON (*.json)") : tr("CSV (*.csv)"));
    dialog->setDefaultSuffix(exportSuffix(json));
    dialog->selectFile(exportFileName(QDateTime::currentMSecsSinceEpoch(), json));
    connect(dialog, &QFileDialog::fileSelected, this, [this, json](const QString& path) {
        // Remembered for the next export, in this run and the next.
        m_exportDir = QFileInfo(path).absolutePath();
        QSettings().setValue(exportDirKey, m_exportDir);
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
    m_exportFile = QFileInfo(file).absoluteFilePath();
    m_export->setEnabled(false);
    m_exportLabel->setText(tr("Exporting to %1…").arg(m_exportPath));
    m_exportLabel->setToolTip(QDir::toNativeSeparators(m_exportFile));
    m_exportNote->hide();
    m_exportOpen->hide();
    m_exportShow->hide();
    m_exportProgress->show();
    m_exportCancel->show();
    m_exporting->show();
}

QString AuditView::exportDirectory() const
{
    return saveFolder(m_exportDir);
}

QString AuditView::exportFileName(qint64 nowMs, bool json)
{
    return datedFileName(QStringLiteral("audit"), exportSuffix(json), nowMs);
}

void AuditView::setUrlOpener(std::function<bool(const QUrl&)> open)
{
    m_openUrl = std::move(open);
}

void AuditView::openExported(bool folder)
{
    const QString target = folder ? QFileInfo(m_exportFile).absolutePath() : m_exportFile;
    if (m_openUrl(QUrl::fromLocalFile(target))) {
        m_exportNote->hide();
        return;
    }
    // Said beside the export's outcome, which stays: the file was written.
    m_exportNote->setText(
        folder ? tr("Could not open the folder %1.").arg(QDir::toNativeSeparators(target))
               : tr("Could not open %1: no application opens this kind of file here.").arg(m_exportPath));
    m_exportNote->show();
}

QString AuditView::selectedRowsText() const
{
    // In the table's order, whatever order the rows were picked in.
    QList<int> rows;
    for (const QModelIndex& index : m_table->selectionModel()->selectedRows())
        rows << index.row();
    std::sort(rows.begin(), rows.end());
    std::vector<const relctl::Event*> events;
    for (const int row : rows)
        if (const relctl::Event* e = m_model->eventAt(row))
            events.push_back(e);
    return events.empty() ? QString() : auditcells::tabSeparated(events);
}

void AuditView::copySelectedRows()
{
    const QString text = selectedRowsText();
    if (!text.isEmpty())
        QGuiApplication::clipboard()->setText(text);
}

void AuditView::setTrailReadable(bool readable, const QString& why)
{
    m_readable = readable;
    m_unreadable->setText(why);
    m_tableArea->setCurrentWidget(readable ? static_cast<QWidget*>(m_table) : m_unreadable);
    for (QWidget* w : m_filterWidgets)
        w->setEnabled(readable);
    // Nothing to export from a trail this login cannot read.
    m_export->setEnabled(readable && !m_session->isExporting());
    m_count->setVisible(readable);
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
