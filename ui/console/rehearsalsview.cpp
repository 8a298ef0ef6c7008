#include "rehearsalsview.h"

#include "consolesession.h"
#include "environmentsmodel.h"
#include "icons.h"
#include "rehearsalstepmodel.h"
#include "timelinewidget.h"

#include <QComboBox>
#include <QDateTime>
#include <QDesktopServices>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollBar>
#include <QSplitter>
#include <QStyle>
#include <QStyledItemDelegate>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QTreeWidget>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>

namespace relctl::ui {

namespace {

namespace rh = relctl::rehearsal;

// The audit browser's red: a failure looks the same on every page.
const QColor failedRed(0xdc, 0x32, 0x2f);
const QColor passedGreen(0x2e, 0x8b, 0x57);

constexpr int kScenarioName = Qt::UserRole + 1; // QString: the scenario an item belongs to
constexpr int kPassed = Qt::UserRole + 2;       // bool: the item's verdict

const rh::Scenario* scenarioNamed(const QString& name)
{
    const auto& all = rh::scenarios();
    const auto found = std::find_if(all.begin(), all.end(), [&](const rh::Scenario& s) {
        return QString::fromStdString(s.name) == name;
    });
    return found == all.end() ? nullptr : &*found;
}

QString colored(const QString& text, const QColor& color)
{
    return QStringLiteral("<span style=\"color:%1\"><b>%2</b></span>")
        .arg(color.name(), text.toHtmlEscaped());
}

// The scenario's leases and markers with a margin either side; empty when it has none.
std::optional<std::pair<qint64, qint64>> extent(const relctl::TimelineSlice& slice)
{
    std::optional<std::pair<qint64, qint64>> out;
    const auto widen = [&out](qint64 from, qint64 to) {
        out = out ? std::pair{std::min(out->first, from), std::max(out->second, to)} : std::pair{from, to};
    };
    for (const relctl::LeaseSpan& l : slice.leases)
        widen(l.acquiredAt.millis(), l.endsAt.millis());
    for (const relctl::TimelineMarker& m : slice.markers)
        widen(m.at.millis(), m.at.millis());
    if (out) {
        const qint64 margin = std::max<qint64>(out->second - out->first, 1000) / 8;
        out = std::pair{out->first - margin, out->second + margin};
    }
    return out;
}

// Word wrap in a tree view: the view asks for a row's height without saying
// how wide its column is, so wrapped text got one line's height and was cut.
// Telling the style the column's width gives the wrapped height. (The
// indentation of column 0 is not subtracted: its names do not wrap.)
class WrappingDelegate final : public QStyledItemDelegate
{
public:
    explicit WrappingDelegate(QTreeView* view) : QStyledItemDelegate(view), m_view(view) {}

    QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override
    {
        QStyleOptionViewItem sized(option);
        // A valid rectangle (the style ignores the width of an empty one), as tall as it likes.
        sized.rect = QRect(0, 0, m_view->columnWidth(index.column()), QWIDGETSIZE_MAX);
        return QStyledItemDelegate::sizeHint(sized, index);
    }

private:
    QTreeView* m_view;
};

} // namespace

RehearsalsView::RehearsalsView(ConsoleSession* session, QWidget* parent)
    : QWidget(parent), m_session(session), m_steps(new RehearsalStepModel(this)),
      m_timeline(new TimelineWidget(this)), m_tabs(new QTabWidget(this)), m_log(new QTableView(this)),
      m_verdicts(new QTreeWidget(this))
{
    m_timeline->setObjectName(QStringLiteral("rehearsalTimeline"));

    m_log->setObjectName(QStringLiteral("rehearsalSteps"));
    m_log->setModel(m_steps);
    m_log->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_log->setWordWrap(false);
    m_log->verticalHeader()->hide();
    m_log->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    m_log->horizontalHeader()->setStretchLastSection(true);
    // Wide enough for what the engine writes there; the dock is narrow, so the
    // log scrolls sideways rather than eliding every cell.
    const int em = fontMetrics().horizontalAdvance(QLatin1Char('m'));
    const int widths[] = {7, 6, 6, 20, 8, 13, 5, 7};
    for (int column = 0; column < int(std::size(widths)); ++column)
        m_log->setColumnWidth(column, widths[column] * em);
    // Follow the newest step unless the reader scrolled up to look at an older one.
    connect(m_steps, &QAbstractItemModel::rowsInserted, this, [this] {
        QScrollBar* bar = m_log->verticalScrollBar();
        if (bar->value() >= bar->maximum() - m_log->verticalHeader()->defaultSectionSize() * 2)
            m_log->scrollToBottom();
    });

    m_verdicts->setObjectName(QStringLiteral("rehearsalVerdicts"));
    m_verdicts->setColumnCount(2);
    m_verdicts->setHeaderLabels({tr("Scenario / invariant"), tr("Verdict")});
    // The detail wraps instead of being elided: it is the sentence that says
    // what was checked, and the dock is narrow.
    m_verdicts->setWordWrap(true);
    m_verdicts->setItemDelegate(new WrappingDelegate(m_verdicts));
    m_verdicts->setTextElideMode(Qt::ElideNone);
    m_verdicts->setUniformRowHeights(false);
    m_verdicts->header()->setStretchLastSection(true);
    // Names whole (they are what a failure is called by); the detail wraps in what is left.
    m_verdicts->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    // Row heights follow the detail column's width: the view computes them only on a layout.
    connect(m_verdicts->header(), &QHeaderView::sectionResized, m_verdicts,
            [this] { m_verdicts->doItemsLayout(); });
    connect(m_verdicts, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* item) {
        // The finished scenario's lease story next to its verdicts.
        if (!item || m_session->isRehearsing())
            return;
        const QString name = item->data(0, kScenarioName).toString();
        if (m_slices.contains(name))
            showSlice(m_slices.value(name), false);
    });

    m_tabs->setObjectName(QStringLiteral("rehearsalTabs"));
    m_tabs->addTab(createChooser(), tr("Scenarios"));
    m_tabs->addTab(m_log, tr("Steps"));
    m_tabs->addTab(m_verdicts, tr("Verdicts"));

    // Stacked, not side by side: the page shares a narrow dock with Supersessions.
    // The run's controls stay in view; the chooser, the log and the verdicts
    // take turns below the timeline, so each gets the dock's height.
    auto* splitter = new QSplitter(Qt::Vertical, this);
    splitter->setObjectName(QStringLiteral("rehearsalSplitter"));
    splitter->setChildrenCollapsible(false);
    splitter->addWidget(m_timeline);
    splitter->addWidget(m_tabs);
    splitter->setStretchFactor(0, 1);
    splitter->setStretchFactor(1, 3);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(createRunControls());
    layout->addWidget(splitter, 1);
    setFocusProxy(m_scenarios);

    connect(m_session, &ConsoleSession::rehearsalScenarioStarted, this, &RehearsalsView::scenarioStarted);
    connect(m_session, &ConsoleSession::rehearsalStepLogged, m_steps, &RehearsalStepModel::appendStep);
    connect(m_session, &ConsoleSession::rehearsalTimelineUpdated, this,
            [this](const QString&, const relctl::TimelineSlice& slice) {
                m_shownSlice = slice;
                m_timeline->setSlice(slice);
            });
    connect(m_session, &ConsoleSession::rehearsalScenarioFinished, this, &RehearsalsView::scenarioFinished);
    connect(m_session, &ConsoleSession::rehearsalFinished, this, &RehearsalsView::finished);

    EnvironmentsModel* environments = m_session->environments();
    connect(environments, &QAbstractItemModel::modelReset, this, &RehearsalsView::updateLike);
    connect(environments, &QAbstractItemModel::rowsInserted, this, &RehearsalsView::updateLike);
    connect(environments, &QAbstractItemModel::rowsRemoved, this, &RehearsalsView::updateLike);
    updateLike();
    updateButtons();
}

RehearsalsView::~RehearsalsView() = default;

RehearsalRunner* RehearsalsView::runner() const
{
    return m_session->rehearsalRunner();
}

QSize RehearsalsView::sizeHint() const
{
    return {std::max(minimumSizeHint().width(), fontMetrics().horizontalAdvance(QLatin1Char('m')) * 34),
            QWidget::sizeHint().height()};
}

QWidget* RehearsalsView::createChooser()
{
    auto* chooser = new QWidget(this);
    m_scenarios = new QListWidget(chooser);
    m_scenarios->setObjectName(QStringLiteral("rehearsalScenarios"));
    for (const rh::Scenario& s : rh::scenarios()) {
        // The name only: the title and explanation wrap in the pane beside it,
        // where a narrow dock cannot cut them off.
        auto* item = new QListWidgetItem(QString::fromStdString(s.name), m_scenarios);
        item->setData(kScenarioName, QString::fromStdString(s.name));
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        item->setCheckState(Qt::Checked);
        item->setToolTip(QStringLiteral("<p><b>%1</b></p><p>%2</p>")
                             .arg(QString::fromStdString(s.title).toHtmlEscaped(),
                                  QString::fromStdString(s.explanation).toHtmlEscaped()));
    }
    m_scenarios->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    int widest = 0;
    for (int row = 0; row < m_scenarios->count(); ++row)
        widest = std::max(widest, fontMetrics().horizontalAdvance(m_scenarios->item(row)->text()));
    // The check box, its gap and the frame; a vertical scroll bar when the dock is short.
    m_scenarios->setFixedWidth(widest + fontMetrics().height() * 3 + 2 * m_scenarios->frameWidth() +
                               style()->pixelMetric(QStyle::PM_ScrollBarExtent));
    connect(m_scenarios, &QListWidget::currentItemChanged, this, &RehearsalsView::explainSelected);

    m_explanation = new QTextBrowser(chooser);
    m_explanation->setObjectName(QStringLiteral("rehearsalExplanation"));
    m_explanation->setPlaceholderText(tr("Select a scenario to read what it plays and proves."));

    m_like = new QComboBox(chooser);
    m_like->setObjectName(QStringLiteral("rehearsalLike"));
    m_like->setToolTip(tr("Copy this environment's queue policy, supersede mode and serialization (read "
                          "only) into the scratch environments. A scenario still forces what its story "
                          "needs, and its log says so."));
    auto* likeLabel = new QLabel(tr("&Like environment:"), chooser);
    likeLabel->setBuddy(m_like);
    auto* like = new QHBoxLayout;
    like->addWidget(likeLabel);
    like->addWidget(m_like, 1);

    auto* scenarios = new QHBoxLayout;
    scenarios->addWidget(m_scenarios);
    scenarios->addWidget(m_explanation, 1);
    auto* layout = new QVBoxLayout(chooser);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addLayout(scenarios, 1);
    layout->addLayout(like);
    m_scenarios->setCurrentRow(0);
    return chooser;
}

QWidget* RehearsalsView::createRunControls()
{
    auto* controls = new QWidget(this);
    m_run = new QPushButton(consoleIcon(QStringLiteral("rehearsal")), tr("&Run"), controls);
    m_run->setObjectName(QStringLiteral("rehearsalRun"));
    m_run->setToolTip(tr("Play the checked scenarios on a scratch database of the connected server; it is "
                         "dropped afterwards."));
    m_cancel = new QPushButton(tr("&Cancel"), controls);
    m_cancel->setObjectName(QStringLiteral("rehearsalCancel"));
    m_cancel->setToolTip(
        tr("Stop at the next step: the actors are killed and the scratch database dropped."));
    m_save = new QPushButton(tr("&Save report…"), controls);
    m_save->setObjectName(QStringLiteral("rehearsalSave"));
    m_open = new QPushButton(tr("&Open report"), controls);
    m_open->setObjectName(QStringLiteral("rehearsalOpen"));
    m_open->setToolTip(
        tr("The HTML report (explanations, lease timelines, step logs, verdicts) in the browser."));
    connect(m_run, &QPushButton::clicked, this, &RehearsalsView::run);
    connect(m_cancel, &QPushButton::clicked, this, &RehearsalsView::reportCancel);
    connect(m_save, &QPushButton::clicked, this, &RehearsalsView::chooseReportFile);
    connect(m_open, &QPushButton::clicked, this, &RehearsalsView::openReport);

    m_progress = new QProgressBar(controls);
    m_progress->setObjectName(QStringLiteral("rehearsalProgress"));
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    m_progress->setFormat(tr("not run yet"));
    m_status = new QLabel(tr("Check the scenarios to play, then Run."), controls);
    m_status->setObjectName(QStringLiteral("rehearsalStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* layout = new QGridLayout(controls);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->setVerticalSpacing(2);
    // One row in equal columns: every line of the dock's height spent here is one less log line.
    layout->addWidget(m_run, 0, 0);
    layout->addWidget(m_cancel, 0, 1);
    layout->addWidget(m_save, 0, 2);
    layout->addWidget(m_open, 0, 3);
    layout->addWidget(m_progress, 1, 0, 1, 4);
    layout->addWidget(m_status, 2, 0, 1, 4);
    for (int column = 0; column < 4; ++column)
        layout->setColumnStretch(column, 1);
    return controls;
}

void RehearsalsView::explainSelected()
{
    const QListWidgetItem* item = m_scenarios->currentItem();
    const rh::Scenario* s = item ? scenarioNamed(item->data(kScenarioName).toString()) : nullptr;
    if (!s)
        return;
    m_explanation->setHtml(QStringLiteral("<p><b>%1</b>: %2</p><p>%3</p>")
                               .arg(QString::fromStdString(s->name).toHtmlEscaped(),
                                    QString::fromStdString(s->title).toHtmlEscaped(),
                                    QString::fromStdString(s->explanation).toHtmlEscaped()));
}

void RehearsalsView::updateLike()
{
    const QString chosen = m_like->currentData().toString();
    m_like->clear();
    m_like->addItem(tr("none (the scenarios' defaults)"), QString());
    for (const relctl::EnvironmentRow& row : m_session->environments()->environments()) {
        const QString name = QString::fromStdString(row.name);
        m_like->addItem(name, name);
    }
    m_like->setCurrentIndex(std::max(0, m_like->findData(chosen)));
}

void RehearsalsView::updateButtons()
{
    const bool running = m_session->isRehearsing();
    m_run->setEnabled(!running);
    m_cancel->setEnabled(running);
    m_like->setEnabled(!running);
    m_save->setEnabled(!running && m_hasReport);
    m_open->setEnabled(!running && m_hasReport);
}

void RehearsalsView::showStatus(const QString& text, Tone tone)
{
    switch (tone) {
    case Tone::Plain:
        m_status->setText(text.toHtmlEscaped());
        break;
    case Tone::Passed:
        m_status->setText(colored(text, passedGreen));
        break;
    case Tone::Failed:
        m_status->setText(colored(text, failedRed));
        break;
    }
    m_status->setProperty("failed", tone == Tone::Failed);
}

void RehearsalsView::run()
{
    rh::Options options;
    for (int row = 0; row < m_scenarios->count(); ++row)
        if (const QListWidgetItem* item = m_scenarios->item(row); item->checkState() == Qt::Checked)
            options.scenarios.push_back(item->data(kScenarioName).toString().toStdString());
    if (options.scenarios.empty()) {
        showStatus(tr("Check at least one scenario."));
        return;
    }
    if (const QString like = m_like->currentData().toString(); !like.isEmpty())
        options.like = like.toStdString();
    if (!m_session->runRehearsal(options))
        return; // one is running: its Cancel is the way out
    m_steps->clear();
    m_verdicts->clear();
    m_slices.clear();
    m_report = {};
    m_hasReport = false;
    m_progress->setRange(0, static_cast<int>(options.scenarios.size()));
    m_progress->setValue(0);
    m_progress->setFormat(tr("%v of %m scenario(s)"));
    m_tabs->setCurrentWidget(m_log);
    showStatus(tr("Creating and migrating the scratch database…"));
    updateButtons();
}

void RehearsalsView::reportCancel()
{
    m_session->cancelRehearsal();
    m_cancel->setEnabled(false);
    showStatus(tr("Cancelling: the actors are stopped and the scratch database is dropped…"));
}

void RehearsalsView::showSlice(const relctl::TimelineSlice& slice, bool following)
{
    m_shownSlice = slice;
    m_timeline->setSlice(slice);
    if (following) {
        // The last ten seconds, moving: a scenario takes a few, its TTL 1.5 s.
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        m_timeline->setVisibleRange(now - 9000, now + 1000);
        m_timeline->setFollowNow(true);
    } else if (const auto range = extent(slice)) {
        m_timeline->setVisibleRange(range->first, range->second);
    }
}

void RehearsalsView::scenarioStarted(const rh::Scenario& scenario, int index, int count)
{
    m_progress->setRange(0, count);
    m_progress->setValue(index);
    showStatus(tr("Playing %1 (%2 of %3): %4")
                   .arg(QString::fromStdString(scenario.name))
                   .arg(index + 1)
                   .arg(count)
                   .arg(QString::fromStdString(scenario.title)));
    relctl::TimelineSlice lane;
    lane.environments = {scenario.name};
    showSlice(lane, true);
}

void RehearsalsView::scenarioFinished(const rh::ScenarioResult& result)
{
    const QString name = QString::fromStdString(result.name);
    m_slices.insert(name, result.timeline);
    showSlice(result.timeline, false);
    m_progress->setValue(std::min(m_progress->value() + 1, m_progress->maximum()));

    auto* item = new QTreeWidgetItem(m_verdicts);
    item->setData(0, kScenarioName, name);
    item->setData(0, kPassed, result.passed);
    item->setText(0, name);
    item->setText(1, result.passed ? tr("PASSED in %1 s").arg(double(result.durationMs) / 1000.0, 0, 'f', 1)
                                   : tr("FAILED"));
    QFont bold = item->font(0);
    bold.setBold(true);
    for (int column : {0, 1}) {
        item->setFont(column, bold);
        item->setForeground(column, result.passed ? QBrush(passedGreen) : QBrush(failedRed));
    }
    const auto add = [&](const QString& invariant, bool passed, const QString& detail) {
        auto* child = new QTreeWidgetItem(item);
        child->setData(0, kScenarioName, name);
        child->setData(0, kPassed, passed);
        child->setText(0, invariant);
        child->setText(1, (passed ? tr("passed: %1") : tr("FAILED: %1")).arg(detail));
        child->setToolTip(0, invariant);
        child->setToolTip(1, detail);
        // The name beside the first line of its wrapped detail.
        for (int column : {0, 1})
            child->setTextAlignment(column, Qt::AlignLeft | Qt::AlignTop);
        if (!passed)
            for (int column : {0, 1})
                child->setForeground(column, QBrush(failedRed));
    };
    if (!result.error.empty())
        add(tr("error"), false, QString::fromStdString(result.error));
    for (const relctl::history::Verdict& v : result.invariants)
        add(QString::fromStdString(v.name), v.passed, QString::fromStdString(v.detail));
    item->setExpanded(true);
    m_verdicts->doItemsLayout();
}

void RehearsalsView::finished(const rh::Report& report, const QString& error)
{
    m_report = report;
    m_hasReport = error.isEmpty() && !report.scenarios.empty();
    const QString database = QString::fromStdString(report.database);
    const QString dropped = report.dropped ? tr("the scratch database %1 was dropped").arg(database)
                                           : tr("the scratch database %1 was NOT dropped").arg(database);
    if (!error.isEmpty()) {
        showStatus(tr("The rehearsal could not start: %1").arg(error), Tone::Failed);
    } else if (report.cancelled) {
        showStatus(
            tr("Cancelled after %n scenario(s); %1.", nullptr, static_cast<int>(report.scenarios.size()))
                .arg(dropped),
            report.dropped ? Tone::Plain : Tone::Failed);
    } else if (report.passed()) {
        m_progress->setValue(m_progress->maximum());
        showStatus(tr("PASSED: every invariant held in %n scenario(s); %1.", nullptr,
                      static_cast<int>(report.scenarios.size()))
                       .arg(dropped),
                   Tone::Passed);
    } else {
        // The first broken invariant, where the operator looks first.
        QString broken;
        for (const rh::ScenarioResult& s : report.scenarios) {
            if (s.passed)
                continue;
            const auto v = std::find_if(s.invariants.begin(), s.invariants.end(),
                                        [](const relctl::history::Verdict& x) { return !x.passed; });
            broken = QString::fromStdString(s.name) + QStringLiteral(": ") +
                     (v != s.invariants.end() ? QString::fromStdString(v->name + " — " + v->detail)
                                              : QString::fromStdString(s.error));
            break;
        }
        showStatus(tr("FAILED — %1 (%2)").arg(broken, dropped), Tone::Failed);
    }
    if (!report.scenarios.empty())
        m_tabs->setCurrentWidget(m_verdicts);
    updateButtons();
}

bool RehearsalsView::saveReport(const QString& path)
{
    if (!m_hasReport)
        return false;
    QFile file(path);
    const std::string html = rh::toHtml(m_report);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
        file.write(html.data(), static_cast<qint64>(html.size())) != static_cast<qint64>(html.size())) {
        showStatus(tr("Could not write the report to %1: %2").arg(path, file.errorString()), Tone::Failed);
        return false;
    }
    return true;
}

void RehearsalsView::chooseReportFile()
{
    auto* dialog =
        new QFileDialog(this, tr("Save the rehearsal report"),
                        QDir::home().filePath(QStringLiteral("rehearsal.html")), tr("HTML pages (*.html)"));
    dialog->setAcceptMode(QFileDialog::AcceptSave);
    dialog->setDefaultSuffix(QStringLiteral("html"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QFileDialog::fileSelected, this, [this](const QString& path) {
        if (saveReport(path))
            m_save->setToolTip(tr("Last saved to %1").arg(path));
    });
    // Not exec(): the console keeps updating while the dialog is open.
    dialog->open();
}

void RehearsalsView::openReport()
{
    if (!m_reportDir)
        m_reportDir = std::make_unique<QTemporaryDir>();
    const QString path = m_reportDir->filePath(QStringLiteral("rehearsal-report.html"));
    if (!m_reportDir->isValid() || !saveReport(path))
        return;
    if (!QDesktopServices::openUrl(QUrl::fromLocalFile(path)))
        showStatus(tr("No browser could be started; the report is at %1").arg(path));
}

} // namespace relctl::ui
