#pragma once

#include "consoletypes.h"
#include "permissions.h"
#include "sharedpromotions.h"

#include <QElapsedTimer>
#include <QSet>
#include <QString>
#include <QTimer>
#include <QWidget>
#include <cstddef>
#include <memory>

class QComboBox;
class QLabel;
class QListWidget;
class QListWidgetItem;
class QPushButton;
class QSplitter;
class QTextBrowser;

namespace relctl::ui {

// Promotions: each environment's promotion path with the release current on
// every step, the promotion requests (the open ones first, then the decided
// ones, newest decision first), and for the selected one where it stands:
// a readiness line (approvals of those required, the soak, a freeze, what is
// still missing), where it stands upstream, every approval and denial with
// its name, login, time and reason, and what its manifest changes against the
// environment's current one. Approve and deny are confirmed, the
// confirmation saying which login is recorded and what this decision does;
// they are offered only to a login the server would let decide, and never
// to the requester's own login or name (the protocol would refuse it:
// SELF_APPROVAL).
class PromotionsView final : public QWidget
{
    Q_OBJECT

public:
    // Which requests the list shows.
    enum class Filter { OpenAndRecent, Open, Decided, All };

    explicit PromotionsView(QWidget* parent = nullptr);

    // The session's whole, shared (not copied). The paths are laid out again
    // only when an environment came, went or changed its upstream; otherwise
    // only the listed paths' lines are written again, so a live update costs
    // what it changed, not the organisation.
    void setPromotions(const SharedPromotions& snapshot);
    // Promotions need schema version kPromotionsSchemaVersion in the database.
    void setSchemaVersion(int version);
    // The console's database login (session_user), which the protocol
    // compares with the requester's: Approve is disabled on the requester's
    // own login. When not set, the permissions' login is used.
    void setLogin(const QString& login);
    // What the login may do: Approve and Deny are offered only where its
    // roles (and the environment's approver role) allow a decision.
    void setPermissions(const Permissions& permissions);
    void setFilter(Filter filter);
    // The open requests (what the Promotions tab counts).
    int count() const;
    // The list's rows: the open requests first (rows 0 to count() - 1 when
    // the filter shows them), then the decided ones under a heading.
    QListWidget* list() const { return m_list; }
    // Selects the request with this id, if the list shows it.
    bool selectPromotion(std::int64_t id);
    // Approve and deny the selected request (the Actions menu uses them too).
    QPushButton* approveButton() const { return m_approve; }
    QPushButton* denyButton() const { return m_deny; }
    QSplitter* splitter() const { return m_split; }
    QString pathsText() const;
    QString detailsText() const;

    // Every path when there are few; above kPathsListed, the paths of the
    // environments in `busy` (those with an open request) and a count of the
    // others by shape ("test → staging → prod: 399 more paths").
    static QString pathsHtml(const std::vector<relctl::Environment>& environments,
                             const QSet<QString>& busy = {});
    static constexpr std::size_t kPathsListed = 12;
    // How many times the paths were laid out from every environment (tests:
    // a live update that moves no upstream must not).
    int pathLayouts() const { return m_pathLayouts; }
    // elapsedMs: time since the request was read, so soak times move on.
    // environment: the request's environment as read with it (its freeze),
    // or null.
    static QString detailsHtml(const relctl::Promotion& promotion, qint64 elapsedMs,
                               const relctl::Environment* environment = nullptr);
    // One line on whether the request can take effect: "v1.43 to prod: 1 of
    // 2 approved, soak ends …, blocked by the freeze on prod (frozen by …);
    // missing: …".
    static QString readinessText(const relctl::Promotion& promotion, qint64 elapsedMs,
                                 const relctl::Environment* environment = nullptr);
    // What the confirmation of approving (or denying) says: the login and
    // name recorded, the count this approval makes, the soak and a freeze.
    static QString decisionHtml(const relctl::Promotion& promotion, bool approve, const QString& login,
                                const QString& name, qint64 elapsedMs,
                                const relctl::Environment* environment = nullptr);

signals:
    void actionRequested(const ConsoleAction& action);

protected:
    void showEvent(QShowEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    const relctl::Promotion* selected() const;
    void sizeSplit();
    const relctl::Environment* environmentOf(const relctl::Promotion& promotion) const;
    QString login() const;
    void fillList();
    void decide(bool approve);
    void updateButtons();
    void showDetails();

    QLabel* m_paths;
    QComboBox* m_filter;
    QListWidget* m_list;
    QTextBrowser* m_details;
    QSplitter* m_split;
    QPushButton* m_approve;
    QPushButton* m_deny;
    struct PathsLayout;
    void showPaths();

    SharedPromotions m_snapshot;
    // The paths of m_layoutFrom's environments, kept while no environment
    // comes, goes or changes its upstream.
    std::shared_ptr<const PathsLayout> m_layout;
    SharedPromotions m_layoutFrom;
    int m_pathLayouts = 0;
    // Each row of the list as shown: its request and environment (pieces of
    // m_snapshot, compared by address: a piece is replaced, never changed),
    // or a heading's or placeholder's words (no request).
    struct ListRow
    {
        const relctl::Promotion* promotion = nullptr;
        const relctl::Environment* environment = nullptr;
        QString text;
        bool heading = false;
        bool sameAs(const ListRow& o) const
        {
            return promotion == o.promotion && environment == o.environment && text == o.text &&
                   heading == o.heading;
        }
    };
    std::vector<ListRow> m_shown;
    void showRow(QListWidgetItem* item, const ListRow& row) const;
    QElapsedTimer m_readAt;
    // Soak countdowns move between reads, locally: no query.
    QTimer m_tick;
    int m_schemaVersion = 0;
    QString m_login;
    Permissions m_permissions;
    bool m_splitSized = false;
};

} // namespace relctl::ui
