#include "rehearsalsview.h"

#include "consolesession.h"
#include "environmentsmodel.h"
#include "icons.h"
#include "rehearsalstepmodel.h"
#include "savelocation.h"
#include "timelinewidget.h"

#include <QAbstractListModel>
#include <QComboBox>
#include <QCompleter>
#include <QDateTime>
#include <QDesktopServices>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QResizeEvent>
#include <QScrollBar>
#include <QSettings>
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

// The "Like environment" choices: none, then every environment, read from
// the environments model as its rows come and go. Nothing is copied: an
// organisation's 10,000 names were added to the combo box one by one on
// every first load (12 ms), and again whenever an environment came or went.
class LikeChoices final : public QAbstractListModel
{
public:
    LikeChoices(const EnvironmentsModel* environments, QObject* parent)
        : QAbstractListModel(parent), m_environments(environments)
    {
        // Row r of the environments is row r + 1 here.
        connect(environments, &QAbstractItemModel::rowsAboutToBeInserted, this,
                [this](const QModelIndex& under, int first, int last) {
                    if (!under.isValid())
                        beginInsertRows({}, first + 1, last + 1);
                });
        connect(environments, &QAbstractItemModel::rowsInserted, this, [this](const QModelIndex& under) {
            if (!under.isValid())
                endInsertRows();
        });
        connect(environments, &QAbstractItemModel::rowsAboutToBeRemoved, this,
                [this](const QModelIndex& under, int first, int last) {
                    if (!under.isValid())
                        beginRemoveRows({}, first + 1, last + 1);
                });
        connect(environments, &QAbstractItemModel::rowsRemoved, this, [this](const QModelIndex& under) {
            if (!under.isValid())
                endRemoveRows();
        });
        connect(environments, &QAbstractItemModel::modelAboutToBeReset, this, [this] { beginResetModel(); });
        connect(environments, &QAbstractItemModel::modelReset, this, [this] { endResetModel(); });
        connect(environments, &QAbstractItemModel::layoutAboutToBeChanged, this,
                [this] { beginResetModel(); });
        connect(environments, &QAbstractItemModel::layoutChanged, this, [this] { endResetModel(); });
    }

    static QString none() { return RehearsalsView::tr("none (the scenarios' defaults)"); }

    int rowCount(const QModelIndex& parent = {}) const override
    {
        return parent.isValid() ? 0 : 1 + int(m_environments->environments().size());
    }

    QVariant data(const QModelIndex& index, int role) const override
    {
        if (!index.isValid() || index.row() >= rowCount())
            return {};
        if (role != Qt::DisplayRole && role != Qt::EditRole && role != Qt::UserRole)
            return {};
        if (index.row() == 0)
            return role == Qt::UserRole ? QString() : none();
        return QString::fromStdString(m_environments->environments()[std::size_t(index.row() - 1)].name);
    }

private:
    const EnvironmentsModel* m_environments;
};

namespace rh = relctl::rehearsal;

// The audit browser's red: a failure looks the same on every page.
const QColor failedRed(0xdc, 0x32, 0x2f);
const QColor passedGreen(0x2e, 0x8b, 0x57);

constexpr int kScenarioName = Qt::UserRole + 1; // QString: the scenario an item belongs to
constexpr int kPassed = Qt::UserRole + 2;       // bool: the item's verdict

// Where the last report was saved: the next one is proposed beside it.
const QString kReportFolder = QStringLiteral("rehearsals/reportFolder");

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
    // Its own minimum counts a legend laid out at whatever width the tab last
    // had (hundreds of pixels when hidden), and would hold the whole page
    // taller than a dock below the timeline. A lane and the axis are enough:
    // the splitter gives it more.
    m_timeline->setMinimumHeight(fontMetrics().height() * 6);

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

    // Never squeezed to nothing: a header and three rows, whatever the splitter says.
    m_verdicts->setMinimumHeight(m_verdicts->header()->sizeHint().height() +
                                 3 * (fontMetrics().height() + 4) + 2 * m_verdicts->frameWidth());

    m_tabs->setObjectName(QStringLiteral("rehearsalTabs"));
    m_tabs->addTab(createChooser(), tr("Scenarios"));
    m_tabs->addTab(m_log, tr("Steps"));
    m_tabs->addTab(m_timeline, tr("Timeline"));

    // The verdicts are what a run is for: they keep their own pane beside the
    // chooser, the log and the timeline (which take turns in the tabs) instead
    // of being one more tab, and a splitter shares the space between them.
    m_splitter = new QSplitter(Qt::Vertical, this);
    m_splitter->setObjectName(QStringLiteral("rehearsalSplitter"));
    m_splitter->setChildrenCollapsible(false);
    m_splitter->addWidget(m_tabs);
    m_splitter->addWidget(m_verdicts);
    // The run's controls and its verdict sit above the splitter, outside
    // anything that scrolls, so Run, Cancel and Like stay within reach
    // however the panes are sized.
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(createRunControls());
    layout->addWidget(createNotice());
    layout->addWidget(m_splitter, 1);
    arrange(false);
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

    updateButtons();
}

RehearsalsView::~RehearsalsView() = default;

void RehearsalsView::setUrlOpener(std::function<bool(const QUrl&)> open)
{
    m_openUrl = std::move(open);
}

QString RehearsalsView::notice() const
{
    return m_noticeBar->isHidden() ? QString() : m_notice->text();
}

void RehearsalsView::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    // Below the timeline the dock is wide and a few rows tall; at the side,
    // or floating, it is narrow and tall. Stacking everything in a short dock
    // left a row and a half for the verdicts.
    const QSize size = event->size();
    arrange(size.width() >= 2 * size.height());
}

void RehearsalsView::arrange(bool wide)
{
    if (m_wide == int(wide))
        return;
    m_wide = int(wide);
    m_bar->setDirection(wide ? QBoxLayout::LeftToRight : QBoxLayout::TopToBottom);
    m_splitter->setOrientation(wide ? Qt::Horizontal : Qt::Vertical);
    // Shares, not pixels (the splitter keeps their ratio): the verdicts get
    // the larger one.
    m_splitter->setSizes(wide ? QList<int>{500, 500} : QList<int>{400, 600});
}

RehearsalRunner* RehearsalsView::runner() const
{
    return m_session->rehearsalRunner();
}

QSize RehearsalsView::sizeHint() const
{
    return {std::max(minimumSizeHint().width(), fontMetrics().horizontalAdvance(QLatin1Char('m')) * 34),
            QWidget::sizeHint().height()};
}

int RehearsalsView::heightForWidth(int width) const
{
    int height = m_controls->heightForWidth(width);
    if (!m_noticeBar->isHidden())
        height += layout()->spacing() + m_noticeBar->heightForWidth(width);
    return height + layout()->spacing() + m_splitter->minimumSizeHint().height();
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

    auto* scenarios = new QHBoxLayout;
    scenarios->addWidget(m_scenarios);
    scenarios->addWidget(m_explanation, 1);
    auto* layout = new QVBoxLayout(chooser);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addLayout(scenarios, 1);
    m_scenarios->setCurrentRow(0);
    return chooser;
}

QWidget* RehearsalsView::createRunControls()
{
    auto* controls = new QWidget(this);
    m_controls = controls;
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

    m_like = new QComboBox(controls);
    m_like->setObjectName(QStringLiteral("rehearsalLike"));
    m_like->setToolTip(tr("Copy this environment's queue policy, supersede mode and serialization (read "
                          "only) into the scratch environments. A scenario still forces what its story "
                          "needs, and its log says so."));
    m_like->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_like->setMinimumContentsLength(12);
    // Thousands of environments are no list to scroll: a name is typed, and
    // the list narrows to the names containing what was typed.
    m_like->setModel(new LikeChoices(m_session->environments(), m_like));
    m_like->setEditable(true);
    m_like->setInsertPolicy(QComboBox::NoInsert);
    if (auto* list = qobject_cast<QListView*>(m_like->view()))
        list->setUniformItemSizes(true);
    m_like->completer()->setCompletionMode(QCompleter::PopupCompletion);
    m_like->completer()->setFilterMode(Qt::MatchContains);
    m_like->completer()->setCaseSensitivity(Qt::CaseInsensitive);
    m_like->lineEdit()->setPlaceholderText(LikeChoices::none());
    m_like->setCurrentIndex(0);
    auto* likeLabel = new QLabel(tr("&Like environment:"), controls);
    likeLabel->setBuddy(m_like);

    auto* buttons = new QHBoxLayout;
    buttons->setSpacing(4);
    for (QPushButton* button : {m_run, m_cancel, m_save, m_open})
        buttons->addWidget(button, 1);
    auto* like = new QHBoxLayout;
    like->setSpacing(4);
    like->addWidget(likeLabel);
    like->addWidget(m_like, 1);
    // One line in a wide dock, three in a narrow one (arrange() turns it):
    // every line spent here is one less verdict.
    m_bar = new QBoxLayout(QBoxLayout::TopToBottom);
    m_bar->setSpacing(4);
    m_bar->addLayout(buttons, 1);
    m_bar->addLayout(like, 2); // the environments' names read whole
    m_bar->addWidget(m_progress, 1);

    auto* layout = new QVBoxLayout(controls);
    layout->setContentsMargins(2, 2, 2, 0);
    layout->setSpacing(2);
    layout->addLayout(m_bar);
    layout->addWidget(m_status);
    return controls;
}

QWidget* RehearsalsView::createNotice()
{
    // Where a saved report went, or why it did not open: a line of its own,
    // so the verdict above stays as the run left it.
    m_noticeBar = new QWidget(this);
    m_noticeBar->setObjectName(QStringLiteral("rehearsalNoticeBar"));
    m_notice = new QLabel(m_noticeBar);
    m_notice->setObjectName(QStringLiteral("rehearsalNotice"));
    m_notice->setTextFormat(Qt::PlainText); // it quotes a path
    m_notice->setWordWrap(true);
    // The path is for copying into a browser or a mail by hand.
    m_notice->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    m_openSaved = new QPushButton(tr("Open"), m_noticeBar);
    m_openSaved->setObjectName(QStringLiteral("rehearsalOpenSaved"));
    m_openSaved->setToolTip(tr("Open the saved report in the browser"));
    m_showSaved = new QPushButton(tr("Show in folder"), m_noticeBar);
    m_showSaved->setObjectName(QStringLiteral("rehearsalShowSaved"));
    m_showSaved->setToolTip(tr("Open the folder that holds the saved report"));
    connect(m_openSaved, &QPushButton::clicked, this, [this] {
        openUrl(QUrl::fromLocalFile(m_savedPath), tr("No program could open the report. It is saved at %1")
                                                      .arg(QDir::toNativeSeparators(m_savedPath)));
    });
    connect(m_showSaved, &QPushButton::clicked, this, [this] {
        const QString folder = QFileInfo(m_savedPath).absolutePath();
        openUrl(QUrl::fromLocalFile(folder),
                tr("No program could show the folder %1").arg(QDir::toNativeSeparators(folder)));
    });
    auto* layout = new QHBoxLayout(m_noticeBar);
    layout->setContentsMargins(2, 0, 2, 0);
    layout->addWidget(m_notice, 1);
    layout->addWidget(m_openSaved, 0, Qt::AlignTop);
    layout->addWidget(m_showSaved, 0, Qt::AlignTop);
    m_noticeBar->hide();
    return m_noticeBar;
}

void RehearsalsView::showNotice(const QString& text, bool failed, bool saved)
{
    m_notice->setText(text);
    // The verdict's red, for a report that could not be written.
    QPalette palette = m_notice->parentWidget()->palette();
    if (failed)
        palette.setColor(QPalette::WindowText, failedRed);
    m_notice->setPalette(palette);
    m_notice->setProperty("failed", failed);
    m_openSaved->setVisible(saved);
    m_showSaved->setVisible(saved);
    m_noticeBar->show();
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
    // What the box says, typed or chosen: a name typed without Enter is
    // not the box's current item.
    if (const QString like = m_like->currentText().trimmed();
        !like.isEmpty() && like != LikeChoices::none()) {
        if (m_session->environments()->rowOf(like) < 0) {
            showStatus(tr("No environment is named %1: choose one from the list, or none.").arg(like));
            return;
        }
        options.like = like.toStdString();
    }
    if (!m_session->runRehearsal(options))
        return; // one is running: its Cancel is the way out
    m_steps->clear();
    m_verdicts->clear();
    m_slices.clear();
    m_report = {};
    m_hasReport = false;
    m_savedPath.clear();
    m_noticeBar->hide();
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
        showNotice(tr("Could not write the report to %1: %2")
                       .arg(QDir::toNativeSeparators(path), file.errorString()),
                   true, false);
        return false;
    }
    return true;
}

QString RehearsalsView::proposedReportPath() const
{
    return QDir(saveFolder(QSettings().value(kReportFolder).toString()))
        .filePath(datedFileName(QStringLiteral("rehearsal"), QStringLiteral("html"),
                                QDateTime::currentMSecsSinceEpoch()));
}

void RehearsalsView::chooseReportFile()
{
    auto* dialog = new QFileDialog(this, tr("Save the rehearsal report"), proposedReportPath(),
                                   tr("HTML pages (*.html)"));
    dialog->setObjectName(QStringLiteral("rehearsalSaveDialog"));
    dialog->setAcceptMode(QFileDialog::AcceptSave);
    dialog->setDefaultSuffix(QStringLiteral("html"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QFileDialog::fileSelected, this, [this](const QString& path) {
        if (saveReport(path))
            reportSaved(path);
    });
    // Not exec(): the console keeps updating while the dialog is open.
    dialog->open();
}

void RehearsalsView::reportSaved(const QString& path)
{
    m_savedPath = QFileInfo(path).absoluteFilePath();
    QSettings().setValue(kReportFolder, QFileInfo(path).absolutePath());
    m_save->setToolTip(tr("Last saved to %1").arg(QDir::toNativeSeparators(m_savedPath)));
    showNotice(tr("Report saved to %1").arg(QDir::toNativeSeparators(m_savedPath)), false, true);
}

bool RehearsalsView::openUrl(const QUrl& url, const QString& failure)
{
    if (m_openUrl ? m_openUrl(url) : QDesktopServices::openUrl(url))
        return true;
    // Beside the verdict, never over it: the run's outcome is what the
    // operator came for, and the file is still there to copy.
    showNotice(failure, false, !m_savedPath.isEmpty());
    return false;
}

void RehearsalsView::openReport()
{
    if (!m_reportDir)
        m_reportDir = std::make_unique<QTemporaryDir>();
    const QString path = m_reportDir->filePath(QStringLiteral("rehearsal-report.html"));
    if (!m_reportDir->isValid() || !saveReport(path))
        return;
    openUrl(QUrl::fromLocalFile(path),
            tr("No program could open the report. A copy is at %1 until the console closes; Save report… "
               "keeps one.")
                .arg(QDir::toNativeSeparators(path)));
}

} // namespace relctl::ui
