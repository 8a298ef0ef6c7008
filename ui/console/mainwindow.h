#pragma once

#include "consoleworker.h"

#include <QMainWindow>

class QLabel;

namespace relctl::ui {

class ApprovalsView;
class AuditView;
class ConsoleSession;
class EnvironmentsView;
class TimelineWidget;
class TracePanel;

// Composes the console: the timeline in the centre, environments above,
// the audit browser below, trace and approvals at the side, connection state
// in the status bar. The views talk to each other only through here.
class MainWindow final : public QMainWindow
{
    Q_OBJECT

public:
    explicit MainWindow(ConsoleSession* session, QWidget* parent = nullptr);

    TimelineWidget* timeline() const { return m_timeline; }
    AuditView* auditView() const { return m_audit; }
    TracePanel* tracePanel() const { return m_trace; }
    EnvironmentsView* environmentsView() const { return m_environments; }
    ApprovalsView* approvalsView() const { return m_approvals; }

private:
    void showConnection(const ConnectionState& state);
    void selectEvent(qint64 eventId, qint64 atMs, bool rejected);
    void editConnection();

    ConsoleSession* m_session;
    TimelineWidget* m_timeline;
    EnvironmentsView* m_environments;
    AuditView* m_audit;
    TracePanel* m_trace;
    ApprovalsView* m_approvals;
    QLabel* m_banner;
    QLabel* m_server;
    QLabel* m_rtt;
    QLabel* m_live;
};

} // namespace relctl::ui
