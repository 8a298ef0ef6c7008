#pragma once

#include "consoletypes.h"

#include <QElapsedTimer>
#include <QTimer>
#include <QWidget>

class QLabel;
class QListWidget;
class QPushButton;
class QTextBrowser;

namespace relctl::ui {

// Promotions: each environment's promotion path with the release current on
// every step, the open promotion requests, and for the selected one where it
// stands upstream (accepted when, soak elapsed and to go), who asked, the
// approvals so far of those required and what its manifest changes against
// the environment's current one. Approve and deny are confirmed and recorded
// under the operator's name and the console's login; the requester's own
// request (their login, or their name) cannot be approved from their console
// (the protocol would refuse it: SELF_APPROVAL).
class PromotionsView final : public QWidget
{
    Q_OBJECT

public:
    explicit PromotionsView(QWidget* parent = nullptr);

    void setPromotions(const PromotionsSnapshot& snapshot);
    // Promotions need schema version kPromotionsSchemaVersion in the database.
    void setSchemaVersion(int version);
    // The console's database login (session_user), which the protocol
    // compares with the requester's: Approve is disabled on the requester's
    // own login.
    void setLogin(const QString& login);
    int count() const;
    QListWidget* list() const { return m_list; }
    // Approve and deny the selected request (the Actions menu uses them too).
    QPushButton* approveButton() const { return m_approve; }
    QPushButton* denyButton() const { return m_deny; }
    QString pathsText() const;
    QString detailsText() const;

    static QString pathsHtml(const std::vector<relctl::Environment>& environments);
    // elapsedMs: time since the request was read, so soak times move on.
    static QString detailsHtml(const relctl::Promotion& promotion, qint64 elapsedMs);

signals:
    void actionRequested(const ConsoleAction& action);

private:
    const relctl::Promotion* selected() const;
    void decide(bool approve);
    void updateButtons();
    void showDetails();

    QLabel* m_paths;
    QListWidget* m_list;
    QTextBrowser* m_details;
    QPushButton* m_approve;
    QPushButton* m_deny;
    PromotionsSnapshot m_snapshot;
    QElapsedTimer m_readAt;
    // Soak countdowns move between reads, locally: no query.
    QTimer m_tick;
    int m_schemaVersion = 0;
    QString m_login;
};

} // namespace relctl::ui
