// DecisionNotifier: which requests wait for this login, and announcing each
// new one once.
#include "decisionnotifier.h"

#include "promotionstanding.h"

#include <QApplication>
#include <QCryptographicHash>
#include <QDBusConnection>
#include <QDBusConnectionInterface>
#include <QDBusMessage>
#include <QSettings>
#include <QSystemTrayIcon>
#include <QVariantMap>
#include <utility>

namespace relctl::ui {

namespace {

QString q(const std::string& s)
{
    return QString::fromStdString(s);
}

// Enough to remember every request a busy organisation opens in months; the
// oldest are forgotten first (a forgotten one is long decided).
constexpr int kAnnouncedKept = 2000;

const QString kService = QStringLiteral("org.freedesktop.Notifications");

// A settings key per login and target: a target's text may hold any
// character, a key may not.
QString settingsKey(const QString& scope)
{
    return QStringLiteral("notified/") +
           QString::fromLatin1(
               QCryptographicHash::hash(scope.toUtf8(), QCryptographicHash::Sha1).toHex().left(16));
}

} // namespace

DecisionNotifier::DecisionNotifier(QObject* parent) : QObject(parent)
{
    m_sink = [this](const QString& title, const QString& body) { sendToDesktop(title, body); };
}

DecisionNotifier::~DecisionNotifier() = default;

void DecisionNotifier::setScope(const QString& scope)
{
    if (scope == m_scope)
        return;
    m_scope = scope;
    loadAnnounced();
}

void DecisionNotifier::setPermissions(const Permissions& permissions)
{
    if (permissions == m_permissions)
        return;
    m_permissions = permissions;
    m_parts.clear(); // made for the login and roles before
    update();
}

void DecisionNotifier::setPromotions(const SharedPromotions& snapshot)
{
    // The whole before is kept until the update is done: the parts it
    // looks up by a piece's address stay allocated, so no new piece can
    // take the address of one they were made for.
    const SharedPromotions before = std::exchange(m_snapshot, snapshot);
    m_havePromotions = true;
    update();
}

void DecisionNotifier::setSupersessions(const QList<SupersessionRow>& rows)
{
    m_rows = rows;
    m_haveSupersessions = true;
    update();
}

DecisionNotifier::RequestPart DecisionNotifier::partOf(const relctl::Promotion& p,
                                                       const relctl::Environment* env,
                                                       const QString& login) const
{
    RequestPart part;
    part.environment = env;
    const PromotionStanding standing = PromotionStanding::of(p, env, login);
    const bool mineApproved = standing.approval != nullptr;
    if (p.state == "approved" && !mineApproved)
        return part;
    part.env = q(p.env);
    const QString what = tr("%1 to %2").arg(q(p.release), q(p.env));
    if (p.state == "open") {
        if (!standing.requestedByLogin && !mineApproved && !standing.deniedByLogin &&
            m_permissions.canDecidePromotion(standing.approverRole)) {
            part.waiting = true;
            const qint64 given = p.approvalsGiven.value_or(qint64(p.approvals.size()));
            part.notices.append({QStringLiteral("promotion:%1").arg(p.id), tr("Promotion waits for you"),
                                 tr("%1 (request #%2, asked by %3): %4 of %5 approvals.")
                                     .arg(what)
                                     .arg(p.id)
                                     .arg(q(p.requestedBy))
                                     .arg(given)
                                     .arg(p.approvalsRequired)});
        }
        // Approved by this login, then frozen before it applied.
        if (mineApproved && env && env->frozen) {
            part.undone = true;
            part.notices.append({QStringLiteral("frozen:%1:%2").arg(p.id).arg(env->frozen->at.micros()),
                                 tr("Your approval is held by a freeze"),
                                 tr("%1 (request #%2) waits: %3 was frozen by %4 (%5).")
                                     .arg(what)
                                     .arg(p.id)
                                     .arg(q(p.env), q(env->frozen->by), q(env->frozen->reason))});
        }
    } else if (mineApproved && env && env->current && env->current->generation < p.generation) {
        // What this login approved was applied, and the environment now
        // runs an older generation: a rollback undid it.
        part.undone = true;
        part.notices.append({QStringLiteral("rolledback:%1:%2").arg(p.id).arg(env->current->id.value_or(0)),
                             tr("A release you approved was rolled back"),
                             tr("%1 (request #%2) was approved; %3 now runs %4 (generation %5).")
                                 .arg(what)
                                 .arg(p.id)
                                 .arg(q(p.env), q(env->current->release))
                                 .arg(env->current->generation)});
    }
    return part;
}

void DecisionNotifier::update()
{
    // Nothing is known to wait for a login the console has not identified:
    // an unknown login would be told of everything.
    QSet<QString> envs;
    QList<Notice> fresh;
    int promotions = 0, supersessions = 0, undone = 0;
    const QString login = m_permissions.login();
    if (m_permissions.known() && !login.isEmpty()) {
        // Each request's part, kept while neither its piece nor its
        // environment's is replaced (a live update replaces those of the
        // environments it read): the rest of an organisation's requests cost
        // a lookup each, not their wording again.
        std::unordered_map<const relctl::Promotion*, RequestPart> parts;
        parts.reserve(m_snapshot.promotions().size());
        for (const SharedPromotions::PromotionPtr& request : m_snapshot.promotions()) {
            const relctl::Promotion& p = *request;
            // Only an open request, or an approved one this login may have
            // seen undone, can wait for anyone.
            if (p.state != "open" && p.state != "approved")
                continue;
            // A binary search: a scan of 10,000 environments per request
            // cost every load (and every live update) milliseconds.
            const relctl::Environment* env = m_snapshot.environment(p.env);
            const auto was = m_parts.find(&p);
            RequestPart part = was != m_parts.end() && was->second.environment == env ? std::move(was->second)
                                                                                      : partOf(p, env, login);
            promotions += part.waiting ? 1 : 0;
            undone += part.undone ? 1 : 0;
            if (part.waiting || part.undone)
                envs.insert(part.env);
            for (const Notice& n : part.notices)
                if (!m_announcedKeys.contains(n.key))
                    fresh.append(n);
            parts.emplace(&p, std::move(part));
        }
        m_parts = std::move(parts);
        if (m_permissions.canOperate()) {
            for (const SupersessionRow& r : m_rows) {
                ++supersessions;
                envs.insert(r.env);
                QString key = QStringLiteral("supersession:%1").arg(r.id);
                if (!m_announcedKeys.contains(key))
                    fresh.append({std::move(key), tr("Supersession waits for you"),
                                  tr("%1: %2 (generation %3) asks to skip %4.")
                                      .arg(r.env, r.winnerRelease)
                                      .arg(r.winnerGeneration)
                                      .arg(r.skipped.join(QStringLiteral(", ")))});
            }
        }
    }
    const bool moved = envs != m_environments || promotions != m_promotions ||
                       supersessions != m_supersessions || undone != m_undone;
    m_environments = envs;
    m_promotions = promotions;
    m_supersessions = supersessions;
    m_undone = undone;
    if (moved)
        emit changed();
    // Announced only once both lists were read: the first promotions alone
    // would otherwise make every open supersession look new on the next read.
    if (m_havePromotions && m_haveSupersessions)
        announce(fresh);
}

void DecisionNotifier::announce(const QList<Notice>& notices)
{
    QList<Notice> unseen;
    for (const Notice& n : notices)
        if (!m_announcedKeys.contains(n.key))
            unseen.append(n);
    if (unseen.isEmpty())
        return;
    for (const Notice& n : unseen) {
        m_announced.append(n.key);
        m_announcedKeys.insert(n.key);
    }
    while (m_announced.size() > kAnnouncedKept)
        m_announcedKeys.remove(m_announced.takeFirst());
    saveAnnounced();
    if (unseen.size() > kSeparateNotices) {
        QStringList lines;
        for (const Notice& n : unseen)
            lines << n.body;
        const QString title = tr("%n decisions wait for you", nullptr, int(unseen.size()));
        const QString body =
            lines.mid(0, kSeparateNotices).join(QLatin1Char('\n')) +
            tr("\n… and %n more: see the console.", nullptr, int(unseen.size() - kSeparateNotices));
        m_sink(title, body);
        emit notified(title, body);
        return;
    }
    for (const Notice& n : unseen) {
        m_sink(n.title, n.body);
        emit notified(n.title, n.body);
    }
}

void DecisionNotifier::sendToDesktop(const QString& title, const QString& body)
{
    // The desktop's own notification service first (it keeps the notice
    // when the console is hidden), a tray message where there is none.
    QDBusConnection bus = QDBusConnection::sessionBus();
    if (bus.isConnected() && bus.interface() && bus.interface()->isServiceRegistered(kService)) {
        QDBusMessage call = QDBusMessage::createMethodCall(
            kService, QStringLiteral("/org/freedesktop/Notifications"), kService, QStringLiteral("Notify"));
        call << QStringLiteral("release-console") << uint(0) << QStringLiteral("release-console") << title
             << body << QStringList() << QVariantMap() << int(-1);
        bus.call(call, QDBus::NoBlock);
        return;
    }
    if (QSystemTrayIcon::isSystemTrayAvailable()) {
        if (!m_tray) {
            m_tray = new QSystemTrayIcon(QApplication::windowIcon(), this);
            m_tray->setToolTip(tr("relctl release console"));
        }
        m_tray->show();
        m_tray->showMessage(title, body);
    }
    // Neither: the main window's status bar repeats every notice (notified).
}

void DecisionNotifier::loadAnnounced()
{
    m_announced.clear();
    if (!m_scope.isEmpty())
        m_announced = QSettings().value(settingsKey(m_scope)).toStringList();
    m_announcedKeys = QSet<QString>(m_announced.begin(), m_announced.end());
}

void DecisionNotifier::saveAnnounced()
{
    if (!m_scope.isEmpty())
        QSettings().setValue(settingsKey(m_scope), m_announced);
}

} // namespace relctl::ui
