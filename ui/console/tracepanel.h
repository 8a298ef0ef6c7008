#pragma once

#include "relctl/console.h"

#include <QWidget>
#include <functional>
#include <optional>

class QLabel;
class QPushButton;
class QTextBrowser;
class QUrl;

namespace relctl::ui {

// The story of one refused write: first its cause (the winning candidate and
// the approval that let it go first, the newer holder, the operator and their
// reason, the publish that set the freshness bar), then the job (host, pid,
// job URL as a link: when no browser opens it, it is copied to the clipboard
// with a visible note), its lease and how it ended, the lease holding the
// environment at that moment, the manifest
// current at that moment and the time between them. "Copy trace" puts it on
// the clipboard as plain text. A promotion gate's
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
    // Puts the trace on the clipboard as plain text (not HTML), for an
    // incident write-up: what "Copy trace" does. Nothing without a trace.
    void copyTrace();
    QString notice() const; // the visible note under it (a copied link), or empty
    // How links are opened (QDesktopServices by default); false: they could
    // not be, and the URL goes to the clipboard. Tests replace it.
    void setUrlOpener(std::function<bool(const QUrl&)> open);
    void openLink(const QUrl& url);

    static QString html(const relctl::RefusalTrace& trace);

signals:
    void showOnTimeline(qint64 eventId, qint64 atMs);

private:
    QTextBrowser* m_browser;
    QLabel* m_notice;
    QPushButton* m_show;
    QPushButton* m_copy;
    std::function<bool(const QUrl&)> m_openUrl;
    std::optional<relctl::RefusalTrace> m_trace;
};

} // namespace relctl::ui
