#include "auditcells.h"

#include "jobstatus.h"
#include "timeformat.h"

#include <QDateTime>
#include <QStringList>
#include <nlohmann/json.hpp>

namespace relctl::ui::auditcells {

namespace {

using Column = AuditModel::Column;
using relctl::Event;

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

QString utcIso(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toString(Qt::ISODateWithMs);
}

bool isRejected(const Event& e)
{
    return e.outcome == "rejected";
}

// Ordered: the keys in the order the event's detail arrives in (core's JSON
// sorts them by name), so the cell, the tooltip and an export agree.
using Json = nlohmann::ordered_json;

QString plain(const Json& v)
{
    if (v.is_string())
        return readableText(v.get_ref<const std::string&>());
    return text(v.dump(-1, ' ', false, Json::error_handler_t::replace));
}

void flatten(const Json& v, const std::string& key, QStringList& parts)
{
    const auto named = [&key](const QString& value) {
        return key.empty() ? value : AuditModel::tr("%1: %2").arg(text(key), value);
    };
    if (v.is_null()) {
        return; // nothing to read ("lease_ended_at: null"); the tooltip still shows it
    } else if (v.is_object() && !v.empty()) {
        for (const auto& [k, x] : v.items())
            flatten(x, key.empty() ? k : key + "." + k, parts);
    } else if (v.is_structured() && v.empty()) {
        parts << named(AuditModel::tr("none")); // "approvals: none", not "approvals: []"
    } else if (v.is_array()) {
        QStringList items;
        for (const Json& x : v)
            items << plain(x); // an object in a list stays compact JSON: the tooltip has it in full
        parts << named(items.join(QStringLiteral(", ")));
    } else {
        parts << named(plain(v));
    }
}

Json parsed(const std::string& json)
{
    return Json::parse(json, nullptr, /*allow_exceptions=*/false);
}

} // namespace

QString readableText(const std::string& s)
{
    // JSON's form ("2026-12-01T20:09:29.501378+00:00") and the text form a
    // function may have put in ("2026-12-01 20:09:29.501378+00") alike.
    if (s.size() >= 19 && s[4] == '-' && (s[10] == 'T' || s[10] == ' ')) {
        if (const auto at = relctl::Timestamp::parse(s))
            return formatServerMoment(*at);
    }
    return text(s);
}

QString tabSeparated(const std::vector<const relctl::Event*>& events)
{
    // A tab or a line break inside a value would split it into two cells
    // or two rows where it is pasted: each becomes a space.
    const auto cell = [](QString value) {
        for (QChar& c : value)
            if (c == QLatin1Char('\t') || c == QLatin1Char('\n') || c == QLatin1Char('\r'))
                c = QLatin1Char(' ');
        return value;
    };
    QStringList lines;
    QStringList header;
    for (int c = 0; c < int(Column::Count); ++c)
        header << title(Column(c));
    lines << header.join(QLatin1Char('\t'));
    for (const relctl::Event* e : events) {
        QStringList cells;
        for (int c = 0; c < int(Column::Count); ++c)
            cells << cell(display(*e, Column(c)).toString());
        lines << cells.join(QLatin1Char('\t'));
    }
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

QString readableDetail(const std::string& json)
{
    const Json v = parsed(json);
    if (v.is_discarded())
        return text(json).simplified();
    QStringList parts;
    // An operator's reason first: it is what a reviewer reads the detail
    // for, and a narrow cell elides the end ("frozen_at", "frozen_by" sort
    // before "reason").
    if (const auto reason = v.find("reason"); v.is_object() && reason != v.end())
        flatten(*reason, "reason", parts);
    // What a cancelled or lease-lost run stopped, in words, before the rest:
    // whoever reads the release decides from it whether to run again (and
    // its caveat is what they must check first, which "caveat: …" in the
    // middle of the keys would not make plain; the tooltip has it in full).
    const auto stopped = v.is_object() ? v.find("stopped") : v.end();
    const bool stoppedCommand = stopped != v.end() && stopped->is_object();
    if (stoppedCommand)
        parts << jobstatus::stoppedSentence(nlohmann::json::parse(stopped->dump()));
    if (v.is_object()) {
        for (const auto& [k, x] : v.items())
            if (k != "reason" && !(stoppedCommand && (k == "stopped" || k == "caveat")))
                flatten(x, k, parts);
    } else {
        flatten(v, {}, parts);
    }
    // One line: a reason typed over several lines must not hide the next row.
    return parts.join(QStringLiteral(" \u00b7 ")).simplified();
}

QString fullDetail(const std::string& json)
{
    const Json v = parsed(json);
    return v.is_discarded() ? text(json) : text(v.dump(2, ' ', false, Json::error_handler_t::replace));
}

QString current(const Event& e)
{
    QStringList parts;
    // An environment where nothing was published yet still has a newest
    // token; said so, a lone "token 3" would read as a release missing.
    if (!e.currentRelease && !e.currentGeneration && e.currentToken)
        parts << AuditModel::tr("nothing published");
    if (e.currentRelease)
        parts << AuditModel::tr("release %1").arg(text(*e.currentRelease));
    if (e.currentGeneration)
        parts << AuditModel::tr("generation %1").arg(*e.currentGeneration);
    if (e.currentToken)
        parts << AuditModel::tr("token %1").arg(*e.currentToken);
    return parts.join(QStringLiteral(", "));
}

QVariant display(const Event& e, Column column)
{
    switch (column) {
    case Column::Time:
        return formatTime(e.at);
    case Column::Environment:
        return text(e.env.value_or(std::string()));
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
    case Column::Detail:
        return e.detail ? QVariant(readableDetail(*e.detail)) : QVariant();
    case Column::Login:
        return optionalText(e.dbUser);
    case Column::Address:
        return optionalText(e.clientAddr);
    case Column::Count:
        break;
    }
    return {};
}

QVariant toolTip(const Event& e, Column column)
{
    switch (column) {
    case Column::Time:
        return AuditModel::tr("Event %1 at %2 (UTC)\nLocal time: %3")
            .arg(e.id)
            .arg(utcIso(e.at.millis()), formatLocalTime(e.at));
    case Column::Outcome:
    case Column::Reason:
        if (!isRejected(e))
            return AuditModel::tr("Accepted");
        return AuditModel::tr("Refused: %1\nCurrent: %2")
            .arg(e.reason ? text(*e.reason) : AuditModel::tr("no reason recorded"),
                 e.currentRelease || e.currentGeneration || e.currentToken ? current(e)
                                                                           : AuditModel::tr("nothing"));
    case Column::Detail:
        return e.detail ? QVariant(fullDetail(*e.detail)) : QVariant();
    case Column::Address:
        // A login without an address came over a local socket: say so, or
        // the blank reads as a gap in the trail.
        if (!e.clientAddr && e.dbUser)
            return AuditModel::tr("No address: a local connection");
        return display(e, column);
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
    case Column::Detail:
        return AuditModel::tr("Detail");
    case Column::Login:
        return AuditModel::tr("Login");
    case Column::Address:
        return AuditModel::tr("Address");
    case Column::Count:
        break;
    }
    return {};
}

} // namespace relctl::ui::auditcells
