#pragma once

#include "connectiontarget.h"
#include "consoletypes.h"

#include <QMainWindow>
#include <QPointer>
#include <QSet>
#include <QString>

class QDockWidget;
class QLabel;
class QLineEdit;

namespace relctl::ui {

class SupersessionsView;
class AuditView;
class ConnectionDialog;
class ConsoleSession;
class DecisionNotifier;
class EnvironmentsView;
class ManifestHistoryDialog;
class PromotionsView;
class QueueView;
class RehearsalsView;
class StatusDialog;
class TimelineWidget;
class TracePanel;

// Composes the console: the timeline in the centre, environments above,
// the audit browser below, trace, queue, approvals, promotions and
// rehearsals at the side, connection state in the status bar; an
// environment's manifest history and a job's or an op id's status card in
// windows of their own. The views talk to
// each other only through here. Every view has a focus shortcut (View menu,
// Ctrl+1..8); every operator action is in the Actions menu too.
class MainWindow final : public QMainWindow
{
    Q_OBJECT

public:
    explicit MainWindow(ConsoleSession* session, QWidget* parent = nullptr);

    // The size the window opens at: `preferred`, within a screen's
    // available area (`available`, invalid when unknown) where that is smaller.
    static QSize firstSize(QSize preferred, QSize available);

    TimelineWidget* timeline() const { return m_timeline; }
    AuditView* auditView() const { return m_audit; }
    TracePanel* tracePanel() const { return m_trace; }
    EnvironmentsView* environmentsView() const { return m_environments; }
    SupersessionsView* supersessionsView() const { return m_supersessions; }
    PromotionsView* promotionsView() const { return m_promotions; }
    // How many times the timeline was given the environments' groups (each
    // reads every environment: tests check a load does it once).
    int timelineGroupings() const { return m_timelineGroupings; }
    // The open manifest history window, if any.
    ManifestHistoryDialog* manifestHistory() const;
    // Opens (or brings up) the manifest history of env and reads it.
    ManifestHistoryDialog* showManifestHistory(const QString& env);
    // The open status card ("What became of …?"), if any.
    StatusDialog* statusDialog() const;
    // Opens (or brings up) the status card and, for a key, looks it up; an
    // empty key leaves the card waiting for one to be typed.
    StatusDialog* showStatus(const StatusLookup& lookup);
    RehearsalsView* rehearsalsView() const { return m_rehearsals; }
    QueueView* queueView() const { return m_queue; }

    // A demo run (release-console --demo): the title and the status bar say
    // so, since its history is fabricated.
    void setDemo(bool demo);
    bool isDemo() const { return m_demo; }
    // Whether what the views show is what was last read from a database that
    // is now unreachable (greyed, countdowns stopped).
    bool isStale() const { return m_stale; }
    // What waits for this console's login (tab counts, "Needs me", desktop
    // notices).
    DecisionNotifier* decisions() const { return m_decisions; }
    // The console proper (not a test's window) keeps its docks and size
    // between runs: restores what was saved now, saves on close.
    void setRemembersLayout(bool remember);

    // Where the session was started (--dsn, or the saved settings); the
    // connection dialog opens on it.
    void setConnectionTarget(const ConnectionTarget& target) { m_target = target; }
    // Opens the connection dialog (File ▸ Connection…); accepting it stores the
    // choice and switches the session at once.
    ConnectionDialog* editConnection();
    // Selects the event on the timeline and, when loaded, in the audit
    // browser, and traces it if it was a refusal: what a click does.
    void selectEvent(qint64 eventId, qint64 atMs, bool rejected);

private:
    // The constructor's parts, in the order it calls them.
    void createCentre();    // the connection banner above the timeline
    void createDocks();     // a dock for every view, tabbed by side
    void createToolBar();   // Follow now, Reload, Connection…
    void createMenus();     // File, View (a focus shortcut per view), Actions, Help
    void createStatusBar(); // where, which server, how fast, whether live; the demo badge
    void connectViews();    // the views follow one another's selection through here
    void connectSession();  // what the session reads goes to the views; their requests to it
    void createActionsMenu();
    void setStale(bool stale);
    void updateDockTitles();
    // The audit browser's environment list, and the dock fitted to the rows.
    void showEnvironmentNames();
    // The queue view, fed only the environments that have a queue.
    void showQueues();
    void fitEnvironmentsDock();
    void keepTabTitlesWhole();
    void showConnection(const ConnectionState& state);
    void traceOrExplain(qint64 eventId, bool rejected);
    void about();
    void closeEvent(QCloseEvent* event) override;
    void applyPermissions(const ConnectionState& state);
    void showOperatorName();
    // The environments' groups, search and collapsed groups, onto the timeline.
    void showGroupsOnTimeline();
    // The first rows arrived: Needs attention for an organisation.
    void openEnvironments();

    ConsoleSession* m_session;
    ConnectionTarget m_target;
    TimelineWidget* m_timeline;
    EnvironmentsView* m_environments;
    AuditView* m_audit;
    TracePanel* m_trace;
    SupersessionsView* m_supersessions;
    PromotionsView* m_promotions;
    QPointer<ManifestHistoryDialog> m_history;
    QPointer<StatusDialog> m_statusDialog;
    RehearsalsView* m_rehearsals;
    QueueView* m_queue;
    QDockWidget* m_environmentsDock = nullptr;
    QDockWidget* m_auditDock = nullptr;
    QDockWidget* m_rehearsalsDock = nullptr;
    QDockWidget* m_queueDock = nullptr;
    QDockWidget* m_traceDock = nullptr;
    QDockWidget* m_supersessionsDock = nullptr;
    QDockWidget* m_promotionsDock = nullptr;
    QAction* m_follow = nullptr;
    bool m_demo = false;
    bool m_stale = false;
    bool m_remembersLayout = false;
    bool m_modeDecided = false; // the environments' mode was set by the opening rule or a person
    int m_timelineGroupings = 0;
    std::size_t m_fittedRows = 0;
    // The environments whose queue the queue view shows.
    QSet<QString> m_queued;
    QLabel* m_demoLabel;
    QLabel* m_banner;
    QLabel* m_targetLabel;
    QLabel* m_server;
    QLabel* m_rtt;
    QLabel* m_live;
    DecisionNotifier* m_decisions;
    QLabel* m_identity;
    QLineEdit* m_operator = nullptr;
};

} // namespace relctl::ui
