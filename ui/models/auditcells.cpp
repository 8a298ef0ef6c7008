#include "auditcells.h"

#include "timeformat.h"

#include <QDateTime>
#include <QStringList>

namespace relctl::ui::auditcells {

namespace {

using Column = AuditModel::Column;
using relctl::AuditEvent;

QString text(const std::string& s)
{
    return QString::fromStdString(s);
}

QVariant optionalText(const std::optional<std::string>& s)
{
    return s ? QVariant(text(*s)) : QVariant();
}

QVariant optionalNumber(const std::optional<std::int64_t>& n)
{
    return n ? QVariant(qint64(*n)) : QVariant();
}

QString utcIso(relctl::EpochMs ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toString(Qt::ISODateWithMs);
}

bool isRejected(const AuditEvent& e)
{
    return e.outcome == "rejected";
}

} // namespace

QString current(const AuditEvent& e)
{
    QStringList parts;
    if (e.currentRelease)
        parts << AuditModel::tr("release %1").arg(text(*e.currentRelease));
    if (e.currentGeneration)
        parts << AuditModel::tr("generation %1").arg(*e.currentGeneration);
    if (e.currentToken)
        parts << AuditModel::tr("token %1").arg(*e.currentToken);
    return parts.join(QStringLiteral(", "));
}

QVariant display(const AuditEvent& e, Column column)
{
    switch (column) {
    case Column::Time:
        return formatTime(e.at);
    case Column::Environment:
        return text(e.env);
    case Column::Operation:
        return text(e.operation);
    case Column::Outcome:
        return text(e.outcome);
    case Column::Reason:
        return optionalText(e.reason);
    case Column::Job:
        return optionalText(e.job);
    case Column::Release:
        return optionalText(e.release);
    case Column::Generation:
        return optionalNumber(e.generation);
    case Column::Token:
        return optionalNumber(e.token);
    case Column::Current:
        return current(e);
    case Column::OpId:
        return optionalText(e.opId);
    case Column::Host:
        return optionalText(e.host);
    case Column::Pid:
        return optionalNumber(e.pid);
    case Column::JobUrl:
        return optionalText(e.jobUrl);
    case Column::Actor:
        return optionalText(e.actor);
    case Column::Count:
        break;
    }
    return {};
}

QVariant toolTip(const AuditEvent& e, Column column)
{
    switch (column) {
    case Column::Time:
        return AuditModel::tr("Event %1 at %2 (UTC)\nLocal time: %3")
            .arg(e.id)
            .arg(utcIso(e.at), formatLocalTime(e.at));
    case Column::Outcome:
    case Column::Reason:
        if (!isRejected(e))
            return AuditModel::tr("Accepted");
        return AuditModel::tr("Refused: %1\nCurrent: %2")
            .arg(e.reason ? text(*e.reason) : AuditModel::tr("no reason recorded"),
                 e.currentRelease || e.currentGeneration || e.currentToken ? current(e)
                                                                           : AuditModel::tr("nothing"));
    default:
        // The full text, for cells a narrow column elides (job URLs, op ids).
        return display(e, column);
    }
}

QString title(Column column)
{
    switch (column) {
    case Column::Time:
        return AuditModel::tr("Time");
    case Column::Environment:
        return AuditModel::tr("Environment");
    case Column::Operation:
        return AuditModel::tr("Operation");
    case Column::Outcome:
        return AuditModel::tr("Outcome");
    case Column::Reason:
        return AuditModel::tr("Reason");
    case Column::Job:
        return AuditModel::tr("Job");
    case Column::Release:
        return AuditModel::tr("Release");
    case Column::Generation:
        return AuditModel::tr("Generation");
    case Column::Token:
        return AuditModel::tr("Token");
    case Column::Current:
        return AuditModel::tr("Current");
    case Column::OpId:
        return AuditModel::tr("Op id");
    case Column::Host:
        return AuditModel::tr("Host");
    case Column::Pid:
        return AuditModel::tr("PID");
    case Column::JobUrl:
        return AuditModel::tr("Job URL");
    case Column::Actor:
        return AuditModel::tr("Actor");
    case Column::Count:
        break;
    }
    return {};
}

} // namespace relctl::ui::auditcells
