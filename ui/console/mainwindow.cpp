#include "mainwindow.h"

#include "approvalsview.h"
#include "auditmodel.h"
#include "auditview.h"
#include "consolesession.h"
#include "environmentsmodel.h"
#include "environmentsview.h"
#include "timelinewidget.h"
#include "tracepanel.h"

#include <QAction>
#include <QDateTime>
#include <QDockWidget>
#include <QInputDialog>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QStatusBar>
#include <QToolBar>
#include <QVBoxLayout>

namespace relctl::ui {

namespace {

QDockWidget* dock(QMainWindow* window, const QString& title, QWidget* content, Qt::DockWidgetArea area)
{
    auto* d = new QDockWidget(title, window);
    d->setObjectName(title);
    d->setWidget(content);
    window->addDockWidget(area, d);
    return d;
}

} // namespace

MainWindow::MainWindow(ConsoleSession* session, QWidget* parent)
    : QMainWindow(parent), m_session(session), m_timeline(new TimelineWidget(this)),
      m_environments(new EnvironmentsView(session->environments(), this)),
      m_audit(new AuditView(session, this)), m_trace(new TracePanel(this)),
      m_approvals(new ApprovalsView(this)), m_banner(new QLabel(this)), m_server(new QLabel(this)),
      m_rtt(new QLabel(this)), m_live(new QLabel(this))
{
    setWindowTitle(tr("relctl release console"));
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

    dock(this, tr("Environments"), m_environments, Qt::TopDockWidgetArea);
    dock(this, tr("Audit"), m_audit, Qt::BottomDockWidgetArea);
    QDockWidget* trace = dock(this, tr("Trace"), m_trace, Qt::RightDockWidgetArea);
    QDockWidget* approvals = dock(this, tr("Approvals"), m_approvals, Qt::RightDockWidgetArea);
    tabifyDockWidget(trace, approvals);
    trace->raise();

    QToolBar* tools = addToolBar(tr("Console"));
    tools->setObjectName(QStringLiteral("console"));
    QAction* follow = tools->addAction(tr("Follow &now"));
    follow->setCheckable(true);
    follow->setChecked(true);
    follow->setShortcut(Qt::Key_Home);
    tools->addAction(tr("&Reload"), QKeySequence::Refresh, session, &ConsoleSession::reload);
    tools->addAction(tr("&Connection…"), this, &MainWindow::editConnection);

    statusBar()->addPermanentWidget(m_server);
    statusBar()->addPermanentWidget(m_rtt);
    statusBar()->addPermanentWidget(m_live);

    connect(follow, &QAction::toggled, m_timeline, &TimelineWidget::setFollowNow);
    connect(m_timeline, &TimelineWidget::followNowChanged, follow, &QAction::setChecked);
    connect(m_timeline, &TimelineWidget::visibleRangeChanged, session,
            [session](relctl::EpochMs from, relctl::EpochMs to) {
                // A margin either side, so small pans need no new slice to look complete.
                const relctl::EpochMs span = to - from;
                session->requestTimeline(from - span / 2, to + span / 2);
            });
    connect(session, &ConsoleSession::timelineReady, m_timeline, &TimelineWidget::setSlice);
    connect(m_timeline, &TimelineWidget::eventSelected, this, [this](qint64 eventId) {
        m_audit->selectEvent(eventId);
        m_session->requestTrace(eventId);
    });
    connect(m_audit, &AuditView::eventSelected, this, &MainWindow::selectEvent);
    connect(m_trace, &TracePanel::showOnTimeline, this, [this](qint64 eventId, qint64 atMs) {
        m_timeline->setFollowNow(false);
        m_timeline->selectEvent(eventId, atMs);
    });
    connect(session, &ConsoleSession::traceReady, m_trace, &TracePanel::showTrace);
    connect(session, &ConsoleSession::approvalsReady, m_approvals, &ApprovalsView::setApprovals);
    connect(session, &ConsoleSession::connectionChanged, this, &MainWindow::showConnection);
    connect(session, &ConsoleSession::environmentsLoaded, this, [this] {
        QStringList names;
        for (const relctl::EnvironmentRow& row : m_session->environments()->environments())
            names << QString::fromStdString(row.name);
        m_audit->setEnvironments(names);
    });
    connect(m_environments, &EnvironmentsView::actionRequested, session, &ConsoleSession::runAction);
    connect(m_approvals, &ApprovalsView::actionRequested, session, &ConsoleSession::runAction);
    connect(session, &ConsoleSession::actionFinished, this, [this](bool ok, const QString& message) {
        if (ok) {
            statusBar()->showMessage(tr("Done; the audit trail has recorded it."), 5000);
            return;
        }
        // Not exec(): the console keeps updating while the operator reads it.
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Refused"), message, QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    });

    showConnection(session->connection());
    // Open on the last few minutes, following now: release incidents are
    // minutes long; the wheel zooms out to days.
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    m_timeline->setVisibleRange(now - 10 * 60 * 1000, now);
    m_timeline->setFollowNow(true);
    resize(1400, 900);
}

void MainWindow::selectEvent(qint64 eventId, qint64 atMs, bool rejected)
{
    m_timeline->selectEvent(eventId, atMs);
    if (rejected)
        m_session->requestTrace(eventId);
    else
        m_trace->showNothing(tr("Event %1 was accepted: select a refused write to trace it.").arg(eventId));
}

void MainWindow::showConnection(const ConnectionState& state)
{
    m_banner->setVisible(!state.connected);
    m_banner->setText(tr("Database unavailable — reconnecting by itself every 2 s. %1").arg(state.message));
    m_server->setText(state.connected ? state.server : tr("not connected"));
    m_rtt->setText(state.connected ? tr("round trip %1 ms").arg(state.rttMs, 0, 'f', 1) : QString());
    m_live->setText(state.live ? tr("● live") : tr("○ not live"));
    m_environments->setSchemaVersion(state.connected ? state.schemaVersion : 0);
    m_approvals->setSchemaVersion(state.connected ? state.schemaVersion : 0);
}

void MainWindow::editConnection()
{
    QSettings settings;
    bool ok = false;
    const QString dsn = QInputDialog::getText(
        this, tr("Connection"),
        tr("libpq connection string or URI (empty: $RELCTL_DSN, else the embedded default database).\n"
           "Takes effect when the console starts again."),
        QLineEdit::Normal, settings.value(QStringLiteral("connection/dsn")).toString(), &ok);
    if (ok)
        settings.setValue(QStringLiteral("connection/dsn"), dsn.trimmed());
}

} // namespace relctl::ui
