#include "mainwindow.h"

#include "actiondialog.h"
#include "auditmodel.h"
#include "auditview.h"
#include "connectiondialog.h"
#include "consolesession.h"
#include "consolestart.h"
#include "decisionnotifier.h"
#include "environmentsmodel.h"
#include "environmentstree.h"
#include "environmentsview.h"
#include "icons.h"
#include "manifesthistorydialog.h"
#include "promotionsview.h"
#include "queueview.h"
#include "rehearsalsview.h"
#include "statusdialog.h"
#include "supersessionsview.h"
#include "timelinewidget.h"
#include "tracepanel.h"

#include <QAction>
#include <QCloseEvent>
#include <QDateTime>
#include <QDockWidget>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QStatusBar>
#include <QTabBar>
#include <QTableView>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>
#include <algorithm>

namespace relctl::ui {

namespace {

// Bumped when the docks change, so a layout saved by an older console is
// not restored onto a different set of docks.
constexpr int kLayoutVersion = 1;

// Above this many environments the console opens on "Needs attention".
constexpr int kAttentionAbove = 50;

// The most the connection's target takes of the status bar, in pixels.
constexpr int kTargetLabelWidth = 260;

QDockWidget* dock(QMainWindow* window, const QString& title, QWidget* content, Qt::DockWidgetArea area)
{
    auto* d = new QDockWidget(title, window);
    d->setObjectName(title);
    d->setWidget(content);
    window->addDockWidget(area, d);
    return d;
}

// A view whose form is taller than a small window can spare, in a scroll
// area: its dock then does not set the whole side's minimum height (a
// 1024x700 window must still fit on the screen).
QWidget* scrollable(QWidget* content)
{
    auto* area = new QScrollArea;
    area->setWidget(content);
    area->setWidgetResizable(true);
    area->setFrameShape(QFrame::NoFrame);
    area->setFocusProxy(content);
    return area;
}

} // namespace

MainWindow::MainWindow(ConsoleSession* session, QWidget* parent)
    : QMainWindow(parent), m_session(session), m_target(ConnectionTarget::load(QSettings())),
      m_timeline(new TimelineWidget(this)),
      m_environments(new EnvironmentsView(session->environments(), this)),
      m_audit(new AuditView(session, this)), m_trace(new TracePanel(this)),
      m_supersessions(new SupersessionsView(this)), m_promotions(new PromotionsView(this)),
      m_rehearsals(new RehearsalsView(session, this)), m_queue(new QueueView(this)),
      m_demoLabel(new QLabel(this)), m_banner(new QLabel(this)), m_targetLabel(new QLabel(this)),
      m_server(new QLabel(this)), m_rtt(new QLabel(this)), m_live(new QLabel(this)),
      m_decisions(new DecisionNotifier(this)), m_identity(new QLabel(this))
{
    setWindowTitle(tr("relctl release console"));
    setWindowIcon(consoleIcon(QStringLiteral("app")));
    createCentre();
    createDocks();
    createToolBar();
    createMenus();
    createStatusBar();
    connectViews();
    connectSession();

    showConnection(m_session->connection());
    // Open on the last few minutes, following now: release incidents are
    // minutes long; the wheel zooms out to days.
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    m_timeline->setVisibleRange(now - 10 * 60 * 1000, now);
    m_timeline->setFollowNow(true);
    // Room for the timeline, the audit browser and the side docks at once,
    // but never more than the screen offers: a window larger than a laptop's
    // screen opened with its status bar and the audit browser's lower rows
    // off the screen.
    const QScreen* where = screen();
    resize(firstSize(QSize(1400, 900), where ? where->availableGeometry().size() : QSize()));
    // The side docks wide enough for a trace's sentences and an approval's
    // winner and skipped candidates to read without scrolling sideways.
    resizeDocks({m_traceDock}, {440}, Qt::Horizontal);
    // The audit browser below with room for a screenful of events; the
    // timeline keeps the middle.
    resizeDocks({m_auditDock}, {300}, Qt::Vertical);
}

void MainWindow::createCentre()
{
    // The banner sits above the timeline; it never blocks: the console keeps
    // showing what it last read while the worker reconnects.
    auto* centre = new QWidget(this);
    auto* layout = new QVBoxLayout(centre);
    layout->setContentsMargins(0, 0, 0, 0);
    m_banner->setWordWrap(true);
    m_banner->setAutoFillBackground(true);
    QPalette warning = m_banner->palette();
    warning.setColor(QPalette::Window, QColor(0xb0, 0x3a, 0x2e));
    warning.setColor(QPalette::WindowText, Qt::white);
    m_banner->setPalette(warning);
    m_banner->setContentsMargins(8, 4, 8, 4);
    m_banner->hide();
    layout->addWidget(m_banner);
    layout->addWidget(m_timeline, 1);
    setCentralWidget(centre);
}

void MainWindow::createDocks()
{
    m_environmentsDock = dock(this, tr("Environments"), m_environments, Qt::TopDockWidgetArea);
    m_auditDock = dock(this, tr("Audit"), m_audit, Qt::BottomDockWidgetArea);
    m_traceDock = dock(this, tr("Trace"), m_trace, Qt::RightDockWidgetArea);
    m_queueDock = dock(this, tr("Queue"), m_queue, Qt::RightDockWidgetArea);
    m_supersessionsDock = dock(this, tr("Supersessions"), m_supersessions, Qt::RightDockWidgetArea);
    m_promotionsDock = dock(this, tr("Promotions"), m_promotions, Qt::RightDockWidgetArea);
    // Rehearsals are a workflow of their own: beside the audit browser, so
    // the side keeps four tabs whose titles (with their counts) fit unelided.
    m_rehearsalsDock = dock(this, tr("Rehearsals"), scrollable(m_rehearsals), Qt::BottomDockWidgetArea);
    tabifyDockWidget(m_traceDock, m_queueDock);
    tabifyDockWidget(m_queueDock, m_supersessionsDock);
    tabifyDockWidget(m_supersessionsDock, m_promotionsDock);
    tabifyDockWidget(m_auditDock, m_rehearsalsDock);
    m_traceDock->raise();
    m_auditDock->raise();
    keepTabTitlesWhole();
}

void MainWindow::keepTabTitlesWhole()
{
    // Tabs keep their words whole, and a bar too narrow for them scrolls.
    // Qt's main window elides them, taking the same width from each tab, so
    // the short ones went first: "Tr…" and "Qu…" beside "Promotions (27
    // for y…" in a 1600-wide window with the counts of 2,000 environments.
    for (QTabBar* bar : findChildren<QTabBar*>(QString(), Qt::FindDirectChildrenOnly)) {
        bar->setElideMode(Qt::ElideNone);
        bar->setUsesScrollButtons(true);
    }
}

void MainWindow::createToolBar()
{
    QToolBar* tools = addToolBar(tr("Console"));
    tools->setObjectName(QStringLiteral("console"));
    tools->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_follow = tools->addAction(tr("Follow &now"));
    m_follow->setObjectName(QStringLiteral("followNow"));
    m_follow->setIcon(consoleIcon(QStringLiteral("follow-now")));
    m_follow->setCheckable(true);
    m_follow->setChecked(true);
    // No window-wide Home: tables and line edits need it. Home on the focused
    // timeline turns following on (a toggle here would turn it off).
    m_follow->setToolTip(tr("Follow now: keep the server's present in view (Home on the timeline)"));
    QAction* reload =
        tools->addAction(tr("&Reload"), QKeySequence::Refresh, m_session, &ConsoleSession::reload);
    reload->setObjectName(QStringLiteral("reload"));
    reload->setIcon(consoleIcon(QStringLiteral("reload")));
    QAction* connection = tools->addAction(tr("&Connection…"), this, [this] { editConnection(); });
    connection->setObjectName(QStringLiteral("connection"));
    connection->setIcon(consoleIcon(QStringLiteral("connection")));
    connection->setShortcut(QKeySequence(tr("Ctrl+K")));

    // Who the trail will name beside the login, in plain sight and editable:
    // the login until a name is set, and a name typed in a confirmation
    // only once the server accepted the action.
    tools->addSeparator();
    auto* acting = new QLabel(tr(" Acting as: "), tools);
    m_operator = new QLineEdit(tools);
    m_operator->setObjectName(QStringLiteral("operatorName"));
    m_operator->setAccessibleName(tr("Operator name"));
    m_operator->setMaximumWidth(180);
    m_operator->setToolTip(tr("The name every action records beside your database login. It starts as your "
                              "login; a name typed in a confirmation is kept once the server accepts it."));
    acting->setBuddy(m_operator);
    tools->addWidget(acting);
    tools->addWidget(m_operator);
    connect(m_operator, &QLineEdit::editingFinished, this, [this] {
        const QString name = m_operator->text().trimmed();
        if (name.isEmpty())
            showOperatorName(); // an empty name is not a name: back to what it was
        else if (name != operatorName())
            setOperatorName(name);
    });
    showOperatorName();
}

void MainWindow::showOperatorName()
{
    if (m_operator && !m_operator->hasFocus())
        m_operator->setText(operatorName());
}

void MainWindow::createStatusBar()
{
    // Where, which server, how fast, whether live: the operator's first
    // question when the console looks quiet.
    m_targetLabel->setObjectName(QStringLiteral("connectionTarget"));
    m_server->setObjectName(QStringLiteral("connectionServer"));
    m_rtt->setObjectName(QStringLiteral("connectionRoundTrip"));
    m_live->setObjectName(QStringLiteral("connectionLive"));
    m_demoLabel->setObjectName(QStringLiteral("demoBadge"));
    m_demoLabel->setText(tr(" DEMO: a fabricated history "));
    m_demoLabel->setToolTip(tr("release-console --demo: this history was made up to show the console; it "
                               "lives only in the embedded database."));
    m_demoLabel->setAutoFillBackground(true);
    QPalette badge = m_demoLabel->palette();
    badge.setColor(QPalette::Window, QColor(0xc0, 0x7a, 0x00));
    badge.setColor(QPalette::WindowText, Qt::white);
    m_demoLabel->setPalette(badge);
    m_demoLabel->hide();
    statusBar()->addPermanentWidget(m_demoLabel);
    m_identity->setObjectName(QStringLiteral("connectionIdentity"));
    statusBar()->addPermanentWidget(m_identity);
    statusBar()->addPermanentWidget(m_targetLabel);
    statusBar()->addPermanentWidget(m_server);
    statusBar()->addPermanentWidget(m_rtt);
    statusBar()->addPermanentWidget(m_live);
    // A notice takes the connection's target and server while it shows: at
    // 1024 wide they left it a third of its line. The login, the round trip
    // and whether it is live stay; a lost connection has its banner.
    connect(statusBar(), &QStatusBar::messageChanged, this, [this](const QString& message) {
        m_targetLabel->setVisible(message.isEmpty());
        m_server->setVisible(message.isEmpty());
    });
}

void MainWindow::connectViews()
{
    connect(m_follow, &QAction::toggled, m_timeline, &TimelineWidget::setFollowNow);
    connect(m_timeline, &TimelineWidget::followNowChanged, m_follow, &QAction::setChecked);
    connect(m_timeline, &TimelineWidget::eventSelected, this, [this](qint64 eventId) {
        m_audit->selectEvent(eventId);
        m_session->requestTrace(eventId);
    });
    connect(m_audit, &AuditView::eventSelected, this, [this](qint64 eventId, qint64 atMs, bool rejected) {
        m_timeline->selectEvent(eventId, atMs);
        traceOrExplain(eventId, rejected);
    });
    connect(m_trace, &TracePanel::showOnTimeline, this, [this](qint64 eventId, qint64 atMs) {
        m_timeline->setFollowNow(false);
        m_timeline->selectEvent(eventId, atMs);
    });
    connect(m_audit, &AuditView::statusRequested, this, &MainWindow::showStatus);
    connect(m_environments, &EnvironmentsView::selectedEnvironmentChanged, m_queue,
            &QueueView::setSelectedEnvironment);
    connect(m_supersessions, &SupersessionsView::countChanged, this, &MainWindow::updateDockTitles);
    connect(m_environments, &EnvironmentsView::historyRequested, this, &MainWindow::showManifestHistory);

    // The environments' groups and search are the timeline's too: a group
    // collapsed in one is collapsed in the other, and the search narrows
    // both. Groups change only when environments come, go or move; a live
    // update of one environment's state does not pass here.
    EnvironmentsTree* tree = m_environments->tree();
    connect(tree, &EnvironmentsTree::membershipChanged, this, &MainWindow::showGroupsOnTimeline);
    connect(m_environments, &EnvironmentsView::searchChanged, this,
            [this, tree] { m_timeline->setLaneFilter(tree->searchMatches()); });
    connect(m_environments, &EnvironmentsView::collapsedGroupsChanged, m_timeline,
            &TimelineWidget::setCollapsedGroups);
    connect(m_timeline, &TimelineWidget::collapsedGroupsChanged, m_environments,
            &EnvironmentsView::setCollapsedGroups);
    // The person's choice of rows is theirs from then on (and kept, for the
    // console proper): the opening rule below applies only until then.
    connect(m_environments, &EnvironmentsView::modeChosen, this, [this](EnvironmentsView::Mode mode) {
        m_modeDecided = true;
        if (m_remembersLayout)
            QSettings().setValue(QStringLiteral("environments/mode"), int(mode));
    });
}

void MainWindow::showGroupsOnTimeline()
{
    EnvironmentsTree* tree = m_environments->tree();
    ++m_timelineGroupings;
    m_timeline->setGroups(tree->groupOf());
    m_timeline->setLaneFilter(tree->searchMatches());
    m_timeline->setCollapsedGroups(m_environments->collapsedGroups());
}

void MainWindow::openEnvironments()
{
    // An organisation's console opens on what needs a person: with more
    // than kAttentionAbove environments nobody reads them all. Once, on the
    // first rows; a mode the person chose (now or in an earlier run) wins.
    if (m_modeDecided)
        return;
    m_modeDecided = true;
    if (m_session->environments()->rowCount() > kAttentionAbove)
        m_environments->setMode(EnvironmentsView::Mode::Attention);
}

void MainWindow::connectSession()
{
    // A margin either side, so small pans (and following now) need no new
    // slice to look complete: the session asks only when the view leaves it.
    connect(m_timeline, &TimelineWidget::visibleRangeChanged, m_session, &ConsoleSession::coverTimeline);
    connect(m_session, &ConsoleSession::timelineReady, m_timeline, &TimelineWidget::setSlice);
    // A live event re-reads only the lanes it touched.
    connect(m_session, &ConsoleSession::timelineUpdated, m_timeline, &TimelineWidget::updateEnvironments);
    connect(m_session, &ConsoleSession::traceReady, m_trace, &TracePanel::showTrace);
    // A refusal's trace is what a reviewer picked it for (in the audit
    // browser or on the timeline): its tab comes to the front.
    connect(m_session, &ConsoleSession::traceReady, this,
            [this](const std::optional<relctl::RefusalTrace>& shown) {
                if (shown)
                    m_traceDock->raise();
            });
    connect(m_session, &ConsoleSession::supersessionsReady, m_supersessions,
            &SupersessionsView::setSupersessions);
    connect(m_session, &ConsoleSession::supersessionsReady, m_decisions, &DecisionNotifier::setSupersessions);
    connect(m_session, &ConsoleSession::promotionsReady, m_decisions, &DecisionNotifier::setPromotions);
    connect(m_decisions, &DecisionNotifier::changed, this, [this] {
        m_environments->setNeedsMe(m_decisions->environments());
        updateDockTitles();
    });
    connect(m_decisions, &DecisionNotifier::notified, this,
            [this](const QString& title, const QString& body) {
                // The status bar has one line: a notice of several decisions
                // is its title there, and Needs me lists them.
                statusBar()->showMessage(body.contains(QLatin1Char('\n'))
                                             ? tr("%1 (Needs me lists them)").arg(title)
                                             : QStringLiteral("%1: %2").arg(title, body),
                                         15000);
            });
    // A name is kept once the server accepted an action under it.
    connect(m_session, &ConsoleSession::actionSucceeded, this, [this](const ConsoleAction& action) {
        setOperatorName(action.by);
        showOperatorName();
    });
    connect(m_session, &ConsoleSession::connectionChanged, this, &MainWindow::showConnection);
    connect(m_session, &ConsoleSession::environmentsLoaded, this, [this] {
        showEnvironmentNames();
        showQueues();
        updateDockTitles();
        // The timeline's groups follow membershipChanged (an insertion, a
        // removal, a move, a reset of the rows): a load that changed none
        // of them leaves them as they are.
        openEnvironments();
    });
    // A live event changed these environments' rows (and only those): what
    // the other views take from them follows, at a cost that does not grow
    // with the organisation unless environments came or went.
    connect(m_session, &ConsoleSession::liveUpdateApplied, this,
            [this](const QString& kind, const QStringList& envs) {
                if (kind != QLatin1String("environments"))
                    return;
                if (m_session->environments()->environments().size() != m_fittedRows)
                    showEnvironmentNames();
                const EnvironmentsModel* model = m_session->environments();
                const bool queues = std::any_of(envs.begin(), envs.end(), [&](const QString& env) {
                    const int row = model->rowOf(env);
                    return m_queued.contains(env) ||
                           (row >= 0 && !model->environments()[std::size_t(row)].queue.empty());
                });
                if (queues)
                    showQueues();
                updateDockTitles();
            });
    // The queue's waiting times move with the environments' countdowns: once
    // a second, not on every changed row (each would measure the whole queue
    // table again).
    auto* queueClock = new QTimer(this);
    queueClock->setInterval(1000);
    connect(queueClock, &QTimer::timeout, this,
            [this] { m_queue->setNow(m_session->environments()->now()); });
    queueClock->start();
    connect(m_environments, &EnvironmentsView::actionRequested, m_session, &ConsoleSession::runAction);
    connect(m_supersessions, &SupersessionsView::actionRequested, m_session, &ConsoleSession::runAction);
    connect(m_session, &ConsoleSession::promotionsReady, m_promotions, &PromotionsView::setPromotions);
    connect(m_promotions, &PromotionsView::actionRequested, m_session, &ConsoleSession::runAction);
    connect(m_session, &ConsoleSession::actionFinished, this, [this](bool ok, const QString& message) {
        if (ok) {
            statusBar()->showMessage(tr("Done; the audit trail has recorded it."), 5000);
            return;
        }
        // Not exec(): the console keeps updating while the operator reads it.
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Refused"), message, QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    });
}

QSize MainWindow::firstSize(QSize preferred, QSize available)
{
    return available.isValid() && !available.isEmpty() ? preferred.boundedTo(available) : preferred;
}

void MainWindow::setDemo(bool demo)
{
    m_demo = demo;
    setWindowTitle(demo ? tr("relctl release console — DEMO (its own database)")
                        : tr("relctl release console"));
    m_demoLabel->setVisible(demo);
}

void MainWindow::showEnvironmentNames()
{
    QStringList names;
    const std::vector<relctl::EnvironmentRow>& rows = m_session->environments()->environments();
    names.reserve(qsizetype(rows.size()));
    for (const relctl::EnvironmentRow& row : rows)
        names << QString::fromStdString(row.name);
    m_audit->setEnvironments(names);
    // Fitted when the number of rows changes, not on every live read: a dock
    // the operator resized stays as they left it.
    if (rows.size() != m_fittedRows) {
        m_fittedRows = rows.size();
        fitEnvironmentsDock();
    }
}

void MainWindow::showQueues()
{
    // Only the environments with a queue: the queue view copies what it is
    // given, and an organisation's thousands of idle rows are nothing to it.
    std::vector<relctl::EnvironmentRow> queued;
    m_queued.clear();
    for (const relctl::EnvironmentRow& row : m_session->environments()->environments()) {
        if (row.queue.empty())
            continue;
        queued.push_back(row);
        m_queued.insert(QString::fromStdString(row.name));
    }
    m_queue->setEnvironments(queued);
}

void MainWindow::updateDockTitles()
{
    // Pending work shows on the tabs, so a release manager sees it from
    // whichever tab is raised.
    // What waits for this login's decision is said apart from the total,
    // so "6" and "3" never run together: "Promotions (6, 2 for you)", or
    // "Promotions (6 for you)" when all are. Short, as the four tabs share
    // one dock's width. An approval this login gave that a freeze holds or a
    // rollback undid is no decision: the notices tell it, and Needs me
    // shows its environment.
    const auto titled = [](QDockWidget* d, const QString& name, qint64 count, qint64 mine = 0) {
        if (count <= 0)
            d->setWindowTitle(name);
        else if (mine <= 0)
            d->setWindowTitle(QStringLiteral("%1 (%2)").arg(name).arg(count));
        else if (mine >= count)
            d->setWindowTitle(tr("%1 (%2 for you)").arg(name).arg(count));
        else
            d->setWindowTitle(tr("%1 (%2, %3 for you)").arg(name).arg(count).arg(mine));
    };
    qint64 waiting = 0;
    qint64 promotions = 0;
    for (const relctl::EnvironmentRow& row : m_session->environments()->environments()) {
        waiting += qint64(row.queue.size());
        promotions += row.pendingPromotions;
    }
    titled(m_queueDock, tr("Queue"), waiting);
    titled(m_supersessionsDock, tr("Supersessions"), m_supersessions->count(),
           m_decisions->supersessionsWaiting());
    titled(m_promotionsDock, tr("Promotions"), promotions, m_decisions->promotionsWaiting());
}

void MainWindow::fitEnvironmentsDock()
{
    // The view is no taller than its rows (its maximum height); here the
    // dock is given that height, so a new row shows without the operator
    // dragging the splitter. But no more than a third of the window: fifty
    // environments' rows would take the audit browser's and the timeline's
    // room, leaving them a row each; beyond that the table scrolls.
    resizeDocks({m_environmentsDock}, {std::min(m_environments->sizeHint().height(), height() / 3)},
                Qt::Vertical);
}

void MainWindow::createMenus()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(findChild<QAction*>(QStringLiteral("connection")));
    file->addAction(findChild<QAction*>(QStringLiteral("reload")));
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
    quit->setObjectName(QStringLiteral("quit"));

    // One shortcut per view: it shows the view's dock, raises its tab and puts
    // the keyboard focus in it, so every view is reachable without a mouse.
    QMenu* view = menuBar()->addMenu(tr("&View"));
    struct Target
    {
        QString title;
        QDockWidget* dock;
        QWidget* focus;
    };
    const Target targets[] = {
        {tr("&Timeline"), nullptr, m_timeline},
        {tr("&Environments"), m_environmentsDock, m_environments->table()},
        {tr("&Audit"), m_auditDock, m_audit->table()},
        {tr("T&race"), m_traceDock, m_trace},
        {tr("&Supersessions"), m_supersessionsDock, m_supersessions},
        {tr("Re&hearsals"), m_rehearsalsDock, m_rehearsals},
        {tr("Pro&motions"), m_promotionsDock, m_promotions},
        {tr("&Queue"), m_queueDock, m_queue},
    };
    int key = Qt::Key_1;
    for (const Target& t : targets) {
        QAction* a = view->addAction(t.title);
        a->setObjectName(QStringLiteral("focus") + QString(t.title).remove(QLatin1Char('&')));
        a->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(key++)));
        connect(a, &QAction::triggered, this, [dock = t.dock, focus = t.focus] {
            if (dock) {
                dock->show();
                dock->raise();
            }
            focus->setFocus(Qt::ShortcutFocusReason);
        });
    }
    // Ctrl+F finds environments wherever the focus is: the search narrows
    // the environments and the timeline's lanes together.
    QAction* find = view->addAction(tr("&Find environments…"));
    find->setObjectName(QStringLiteral("findEnvironments"));
    find->setShortcut(QKeySequence::Find);
    connect(find, &QAction::triggered, this, [this] {
        m_environmentsDock->show();
        m_environmentsDock->raise();
        m_environments->searchBox()->setFocus(Qt::ShortcutFocusReason);
        m_environments->searchBox()->selectAll();
    });
    view->addSeparator();
    view->addAction(m_follow);
    QMenu* docks = view->addMenu(tr("&Show"));
    for (QDockWidget* d : {m_environmentsDock, m_auditDock, m_traceDock, m_queueDock, m_supersessionsDock,
                           m_promotionsDock, m_rehearsalsDock})
        docks->addAction(d->toggleViewAction());

    createActionsMenu();

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About release console"), this, &MainWindow::about);
}

void MainWindow::createActionsMenu()
{
    // Every operator action, from the menu bar as well as from its view: the
    // environment's on the environment selected in the table, the
    // supersession's and the promotion's on the request selected in theirs.
    QMenu* actions = menuBar()->addMenu(tr("&Actions"));
    actions->setObjectName(QStringLiteral("actionsMenu"));
    actions->addActions(m_environments->operatorActions());
    actions->addAction(m_environments->historyAction());
    actions->addActions(m_environments->bulkActions());
    actions->addSeparator();
    actions->addAction(m_supersessions->approveAction());
    actions->addAction(m_supersessions->denyAction());
    actions->addSeparator();
    // The promotions view decides with buttons; the menu presses them, and
    // is enabled as they are when it opens.
    QAction* approvePromotion =
        actions->addAction(consoleIcon(QStringLiteral("approve")), tr("Approve &promotion…"));
    QAction* denyPromotion = actions->addAction(consoleIcon(QStringLiteral("deny")), tr("Deny pro&motion…"));
    approvePromotion->setObjectName(QStringLiteral("approvePromotion"));
    denyPromotion->setObjectName(QStringLiteral("denyPromotion"));
    connect(approvePromotion, &QAction::triggered, m_promotions->approveButton(), &QPushButton::click);
    connect(denyPromotion, &QAction::triggered, m_promotions->denyButton(), &QPushButton::click);
    const auto sync = [this, approvePromotion, denyPromotion] {
        approvePromotion->setEnabled(m_promotions->approveButton()->isEnabled());
        denyPromotion->setEnabled(m_promotions->denyButton()->isEnabled());
    };
    connect(actions, &QMenu::aboutToShow, this, sync);
    sync();
}

ManifestHistoryDialog* MainWindow::manifestHistory() const
{
    return m_history;
}

ManifestHistoryDialog* MainWindow::showManifestHistory(const QString& env)
{
    // One history window at a time: the session follows one environment's
    // history live, and a second window would show another's going stale.
    if (m_history && m_history->environment() != env) {
        m_history->close();
        m_history = nullptr; // deleted later (WA_DeleteOnClose); a new one is made now
    }
    if (!m_history) {
        m_history = new ManifestHistoryDialog(env, this);
        m_history->setAttribute(Qt::WA_DeleteOnClose);
        m_history->setSchemaVersion(m_session->connection().connected ? m_session->connection().schemaVersion
                                                                      : 0);
        m_history->setPermissions(m_session->connection().permissions);
        connect(m_session, &ConsoleSession::manifestHistoryReady, m_history,
                [dialog = m_history.data()](const relctl::ManifestHistory& history) {
                    if (QString::fromStdString(history.env) == dialog->environment())
                        dialog->setHistory(history);
                });
        connect(m_history, &ManifestHistoryDialog::actionRequested, m_session, &ConsoleSession::runAction);
        connect(m_history, &QDialog::finished, m_session, &ConsoleSession::clearManifestHistory);
    }
    m_session->requestManifestHistory(env);
    m_history->show();
    m_history->raise();
    return m_history;
}

StatusDialog* MainWindow::statusDialog() const
{
    return m_statusDialog;
}

StatusDialog* MainWindow::showStatus(const StatusLookup& lookup)
{
    // One card at a time: the session re-reads one lookup on every reload,
    // and a second card would show another's going stale.
    if (!m_statusDialog) {
        m_statusDialog = new StatusDialog(this);
        m_statusDialog->setAttribute(Qt::WA_DeleteOnClose);
        connect(m_statusDialog, &StatusDialog::lookupRequested, m_session, &ConsoleSession::requestStatus);
        connect(m_session, &ConsoleSession::statusReady, m_statusDialog, &StatusDialog::showStatus);
        connect(m_session, &ConsoleSession::statusFailed, m_statusDialog, &StatusDialog::showFailure);
        connect(m_statusDialog, &QDialog::finished, m_session, &ConsoleSession::clearStatus);
    }
    if (!lookup.key.isEmpty())
        m_statusDialog->lookUp(lookup);
    m_statusDialog->show();
    m_statusDialog->raise();
    m_statusDialog->activateWindow();
    m_statusDialog->setFocus(Qt::OtherFocusReason);
    return m_statusDialog;
}

ConnectionDialog* MainWindow::editConnection()
{
    auto* dialog = new ConnectionDialog(m_session, m_target, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        m_target = dialog->target();
        // The demo says so wherever it is opened from: its history is made up.
        setDemo(m_target.kind == ConnectionTarget::Kind::Demo);
        m_session->setTarget(m_target);
        statusBar()->showMessage(tr("Connecting to %1…").arg(m_target.describe()), 5000);
    });
    // Not exec(): the console keeps updating while the dialog is open.
    dialog->open();
    return dialog;
}

void MainWindow::selectEvent(qint64 eventId, qint64 atMs, bool rejected)
{
    m_timeline->selectEvent(eventId, atMs);
    m_audit->selectEvent(eventId);
    traceOrExplain(eventId, rejected);
}

void MainWindow::traceOrExplain(qint64 eventId, bool rejected)
{
    if (rejected) {
        m_session->requestTrace(eventId);
        return;
    }
    // A run that was cancelled or lost its lease left no refusal to trace,
    // but the reviewer must learn what it could not stop.
    if (const QString stopped = m_audit->stopNote(eventId); !stopped.isEmpty()) {
        m_trace->showNothing(
            tr("Event %1 records what relctl run stopped. %2 Status… says what became of the job.")
                .arg(eventId)
                .arg(stopped));
        return;
    }
    m_trace->showNothing(tr("Event %1 was accepted: select a refused write to trace it.").arg(eventId));
}

void MainWindow::setStale(bool stale)
{
    if (stale == m_stale)
        return;
    m_stale = stale;
    // What every view shows is what it last read: greyed (text in the
    // palette's disabled colours) while the database cannot be reached, yet
    // still readable, scrollable and selectable. The models stop their
    // countdowns themselves.
    for (QWidget* w : std::initializer_list<QWidget*>{m_environments, m_audit, m_trace, m_queue,
                                                      m_supersessions, m_promotions, m_timeline}) {
        if (!stale) {
            w->setPalette(QPalette()); // inherit the window's again
            continue;
        }
        QPalette p = w->palette();
        for (const QPalette::ColorRole role :
             {QPalette::Text, QPalette::WindowText, QPalette::ButtonText, QPalette::HighlightedText}) {
            const QColor dim = p.color(QPalette::Disabled, role);
            p.setColor(QPalette::Active, role, dim);
            p.setColor(QPalette::Inactive, role, dim);
        }
        w->setPalette(p);
    }
    m_session->environments()->setStale(stale);
    m_queue->setStale(stale);
    m_timeline->setStale(stale);
}

void MainWindow::showConnection(const ConnectionState& state)
{
    setStale(!state.connected && !m_session->environments()->environments().empty());
    m_banner->setVisible(!state.connected);
    m_banner->setText(tr("Database unavailable — reconnecting by itself every 2 s. %1").arg(state.message));
    // The target whole in its tooltip; on the status bar elided in the
    // middle, as a conninfo runs to 400 px and more and the notices need the
    // line's room (a label only clips, mid-word).
    m_targetLabel->setText(
        m_targetLabel->fontMetrics().elidedText(state.target, Qt::ElideMiddle, kTargetLabelWidth));
    m_targetLabel->setToolTip(state.target);
    m_server->setText(state.connected ? state.server : tr("not connected"));
    applyPermissions(state);
    m_rtt->setText(state.connected ? tr("round trip %1 ms").arg(state.rttMs, 0, 'f', 1) : QString());
    m_live->setText(state.live ? tr("● live") : tr("○ not live"));
    m_live->setToolTip(state.live ? tr("Listening for events: changes appear as they happen.")
                                  : tr("Not listening: the console shows what it last read."));
    m_environments->setSchemaVersion(state.connected ? state.schemaVersion : 0);
    m_supersessions->setSchemaVersion(state.connected ? state.schemaVersion : 0);
    m_promotions->setSchemaVersion(state.connected ? state.schemaVersion : 0);
    m_promotions->setLogin(state.connected ? state.login : QString());
    if (m_history)
        m_history->setSchemaVersion(state.connected ? state.schemaVersion : 0);
}

void MainWindow::applyPermissions(const ConnectionState& state)
{
    // The login is who the protocol says acted (approvals count per login),
    // whatever name an action is given; its roles say what it may do.
    const Permissions& p = state.permissions;
    if (!state.connected || !p.known()) {
        m_identity->clear();
        m_identity->setToolTip(QString());
    } else {
        const QString tls = state.tls ? tr("TLS") : tr("no TLS");
        QString text = tr("login %1 · %2 · %3").arg(state.login, p.roleSummary(), tls);
        if (!p.canReadTrail())
            text += tr(" · cannot read the trail");
        m_identity->setText(text);
        m_identity->setToolTip(
            tr("<p>Connected as <b>%1</b>.</p><p>relctl roles: %2.</p><p>%3</p>")
                .arg(state.login.toHtmlEscaped(),
                     p.roles().isEmpty() ? tr("none") : p.roles().join(QStringLiteral(", ")).toHtmlEscaped(),
                     state.tls
                         ? tr("The connection is encrypted (TLS).")
                         : tr("The connection is not encrypted (a local socket, or a server without TLS).")));
    }
    setConnectedLogin(state.connected ? state.login : QString());
    showOperatorName();
    m_environments->setPermissions(p);
    m_promotions->setPermissions(p);
    m_supersessions->setPermissions(p);
    if (m_history)
        m_history->setPermissions(p);
    m_audit->setTrailReadable(p.canReadTrail(), p.whyNotReadTrail());
    m_decisions->setScope(
        state.connected && p.known() ? QStringLiteral("%1@%2").arg(state.login, state.target) : QString());
    m_decisions->setPermissions(p);
}

void MainWindow::setRemembersLayout(bool remember)
{
    m_remembersLayout = remember;
    if (!remember)
        return;
    // The layout a person left: the window's size and place, which docks
    // are open, tabbed or floating, and their sizes.
    const QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray(), kLayoutVersion);
    // The rows the person last chose (All, Needs attention, Needs me).
    if (const QVariant mode = settings.value(QStringLiteral("environments/mode")); mode.isValid()) {
        m_modeDecided = true;
        m_environments->setMode(EnvironmentsView::Mode(std::clamp(mode.toInt(), 0, 2)));
    }
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    if (m_remembersLayout) {
        QSettings settings;
        settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
        settings.setValue(QStringLiteral("window/state"), saveState(kLayoutVersion));
    }
    QMainWindow::closeEvent(event);
}

void MainWindow::about()
{
    QMessageBox::about(this, tr("About release console"),
                       tr("<p><b>relctl release console</b></p>"
                          "<p>Leases with fencing tokens and an append-only audit trail, in PostgreSQL: "
                          "watch releases, approve supersessions and promotions, roll back, revoke "
                          "leases, freeze dispatch and trace refused writes.</p>"
                          "<p>%1</p>")
                           .arg(consoleVersion().toHtmlEscaped()));
}

} // namespace relctl::ui
