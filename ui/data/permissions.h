#pragma once

// What the console's login may do, from the roles the server reported for it
// (relctl::ServerInfo): which actions a view offers, and, when it does not,
// the sentence its tooltip gives. The server decides every action anyway; this
// only keeps a person from typing a reason for an action that cannot succeed.

#include <QMetaType>
#include <QObject>
#include <QString>
#include <QStringList>
#include <optional>
#include <string>

namespace relctl {
struct ServerInfo;
}

namespace relctl::ui {

class Permissions final
{
public:
    // Unknown (not connected yet, or a backend that does not say): every
    // action is offered, and the server's refusal is what the operator sees.
    Permissions() = default;
    Permissions(QString login, QStringList roles, QStringList memberOf);
    // What the server said of the login.
    static Permissions of(const relctl::ServerInfo& info);

    bool known() const { return m_known; }
    const QString& login() const { return m_login; }
    const QStringList& roles() const { return m_roles; }
    const QStringList& memberOf() const { return m_memberOf; }

    // relctl_reviewer (or relctl_manager, which has it): the audit trail,
    // traces, timelines, supersession and promotion requests.
    bool canReadTrail() const;
    // relctl_manager: revoke, freeze, unfreeze, rollback, approve and deny.
    bool canOperate() const;
    // A promotion's approval: relctl_manager, and a member of the
    // environment's approver role when it has one (env set --approver-role).
    bool canDecidePromotion(const std::optional<std::string>& approverRole) const;

    // Why not, in a sentence naming the login and what it lacks; empty when
    // it may.
    QString whyNotReadTrail() const;
    QString whyNotOperate() const;
    QString whyNotDecidePromotion(const std::optional<std::string>& approverRole) const;

    // "manager", "reviewer", "job", or "no relctl role": what the status bar
    // and the connection test say the login is.
    QString roleSummary() const;

    friend bool operator==(const Permissions&, const Permissions&) = default;

private:
    bool has(const QString& role) const { return m_roles.contains(role); }

    bool m_known = false;
    QString m_login;
    QStringList m_roles;
    QStringList m_memberOf;
};

} // namespace relctl::ui

Q_DECLARE_METATYPE(relctl::ui::Permissions)
