#pragma once

// What waits for this console's login: the open promotion requests it may
// approve and has not decided, the supersession requests it may decide, and
// its own approvals that later events undid (the environment frozen before
// the promotion applied, the release rolled back after). The main window puts
// the counts on the tabs and the environments on the "Needs me" filter; each
// new one is announced once, on the desktop.

#include "consoletypes.h"
#include "permissions.h"
#include "sharedpromotions.h"

#include <QObject>
#include <QSet>
#include <QString>
#include <QStringList>
#include <functional>
#include <unordered_map>

class QSystemTrayIcon;

namespace relctl::ui {

class DecisionNotifier final : public QObject
{
    Q_OBJECT

public:
    // A desktop notification: a title and a sentence. The default sends it
    // to the desktop's notification service, else to a tray message.
    using Sink = std::function<void(const QString& title, const QString& body)>;

    explicit DecisionNotifier(QObject* parent = nullptr);
    ~DecisionNotifier() override;

    // Tests (and a console without a desktop) replace where notices go.
    void setSink(Sink sink) { m_sink = std::move(sink); }
    // Which requests were already announced is kept per login and target
    // (the settings), so a restart does not announce them again; `scope`
    // names the target ("" keeps it in memory only).
    void setScope(const QString& scope);

    void setPermissions(const Permissions& permissions);
    // The session's whole, shared (not copied).
    void setPromotions(const SharedPromotions& snapshot);
    void setSupersessions(const QList<SupersessionRow>& rows);

    // The environments with something that waits for this login.
    const QSet<QString>& environments() const { return m_environments; }
    int promotionsWaiting() const { return m_promotions; }
    int supersessionsWaiting() const { return m_supersessions; }
    // Approvals of this login that events undid since (frozen, rolled back).
    int undone() const { return m_undone; }

    // Announced at most this many one by one; more at once are one summary.
    static constexpr int kSeparateNotices = 3;

signals:
    // Counts or environments changed.
    void changed();
    // A notice was sent (to the sink): the status bar repeats it.
    void notified(const QString& title, const QString& body);

private:
    struct Notice
    {
        QString key; // "promotion:12", "supersession:7", "frozen:12:<at>", "rolledback:12:<manifest>"
        QString title;
        QString body;
    };
    // What one request makes of this login's decisions: whether it waits
    // for the login, or is an approval of its that events undid, with the
    // notices that tell so (worded, told or not).
    struct RequestPart
    {
        const relctl::Environment* environment = nullptr; // the piece it was made with
        QString env;
        bool waiting = false;
        bool undone = false;
        QList<Notice> notices;
    };
    RequestPart partOf(const relctl::Promotion& p, const relctl::Environment* env,
                       const QString& login) const;
    void update();
    void announce(const QList<Notice>& notices);
    void sendToDesktop(const QString& title, const QString& body);
    void loadAnnounced();
    void saveAnnounced();

    Sink m_sink;
    QSystemTrayIcon* m_tray = nullptr;
    QString m_scope;
    Permissions m_permissions;
    SharedPromotions m_snapshot;
    // Each open or approved request's part, by the address of its piece in
    // m_snapshot (a piece is replaced, never changed).
    std::unordered_map<const relctl::Promotion*, RequestPart> m_parts;
    QList<SupersessionRow> m_rows;
    bool m_havePromotions = false, m_haveSupersessions = false;
    QSet<QString> m_environments;
    int m_promotions = 0, m_supersessions = 0, m_undone = 0;
    QStringList m_announced; // oldest first, bounded
    // The same keys, to look one up: every live update of the promotions
    // checks each notice against up to kAnnouncedKept of them.
    QSet<QString> m_announcedKeys;
};

} // namespace relctl::ui
