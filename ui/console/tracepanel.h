#pragma once

#include "relctl/console.h"

#include <QWidget>
#include <optional>

class QPushButton;
class QTextBrowser;

namespace relctl::ui {

// The story of one refused write: the job (host, pid, job URL as a link), its
// lease and how it ended, the lease and job that superseded it, the manifest
// current at that moment and the time between them. A promotion gate's
// refusal is explained first: for NOT_PROMOTED what the upstream had not
// accepted (or not long enough), for APPROVAL_REQUIRED the approvals missing,
// for APPROVAL_DENIED who denied it and why.
class TracePanel final : public QWidget
{
    Q_OBJECT

public:
    explicit TracePanel(QWidget* parent = nullptr);

    void showTrace(const std::optional<relctl::RefusalTrace>& trace);
    void showNothing(const QString& why);
    QString text() const; // the panel's plain text, for tests and copying

    static QString html(const relctl::RefusalTrace& trace);

signals:
    void showOnTimeline(qint64 eventId, qint64 atMs);

private:
    QTextBrowser* m_browser;
    QPushButton* m_show;
    std::optional<relctl::RefusalTrace> m_trace;
};

} // namespace relctl::ui
