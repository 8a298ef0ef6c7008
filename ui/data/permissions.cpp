// Permissions: the login's relctl roles turned into what the console offers,
// and the sentences that say why an action is not offered.
#include "permissions.h"

#include "relctl/replies_audit.h"

#include <utility>

namespace relctl::ui {

namespace {

const QString kJob = QStringLiteral("relctl_job");
const QString kReviewer = QStringLiteral("relctl_reviewer");
const QString kManager = QStringLiteral("relctl_manager");

} // namespace

Permissions::Permissions(QString login, QStringList roles, QStringList memberOf)
    : m_known(true), m_login(std::move(login)), m_roles(std::move(roles)), m_memberOf(std::move(memberOf))
{
}

Permissions Permissions::of(const relctl::ServerInfo& info)
{
    const auto list = [](const std::vector<std::string>& names) {
        QStringList out;
        for (const std::string& n : names)
            out << QString::fromStdString(n);
        return out;
    };
    return Permissions(QString::fromStdString(info.login), list(info.roles), list(info.memberOf));
}

bool Permissions::canReadTrail() const
{
    return !m_known || has(kReviewer) || has(kManager);
}

bool Permissions::canOperate() const
{
    return !m_known || has(kManager);
}

bool Permissions::canDecidePromotion(const std::optional<std::string>& approverRole) const
{
    if (!canOperate())
        return false;
    return !m_known || !approverRole || approverRole->empty() ||
           m_memberOf.contains(QString::fromStdString(*approverRole));
}

QString Permissions::whyNotReadTrail() const
{
    if (canReadTrail())
        return {};
    return QObject::tr("Login %1 cannot read the audit trail: it needs the role relctl_reviewer (it has %2).")
        .arg(m_login, roleSummary());
}

QString Permissions::whyNotOperate() const
{
    if (canOperate())
        return {};
    return QObject::tr("Login %1 is %2: this action needs the role relctl_manager.")
        .arg(m_login, roleSummary());
}

QString Permissions::whyNotDecidePromotion(const std::optional<std::string>& approverRole) const
{
    if (!canOperate())
        return whyNotOperate();
    if (canDecidePromotion(approverRole))
        return {};
    return QObject::tr(
               "Login %1 is not a member of %2, the role that approves this environment's promotions.")
        .arg(m_login, QString::fromStdString(approverRole.value_or("")));
}

QString Permissions::roleSummary() const
{
    if (!m_known)
        return QObject::tr("unknown");
    if (has(kManager))
        return QObject::tr("manager");
    if (has(kReviewer))
        return QObject::tr("reviewer");
    if (has(kJob))
        return QObject::tr("job");
    return QObject::tr("no relctl role");
}

} // namespace relctl::ui
