#include "jobstatus.h"

#include "auditcells.h"
#include "timeformat.h"

#include <QCoreApplication>
#include <QStringList>

namespace relctl::ui::jobstatus {

namespace {

using nlohmann::json;

QString tr(const char* text)
{
    return QCoreApplication::translate("relctl::ui::jobstatus", text);
}

QString text(const std::string& s)
{
    return QString::fromStdString(s);
}

// A member of `object` that is a string, or empty.
QString member(const json& object, const char* key)
{
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? text(it->get<std::string>()) : QString();
}

bool endsWith(const std::string& s, std::string_view suffix)
{
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

QString value(const std::string& key, const json& v)
{
    if (v.is_string())
        return auditcells::readableText(v.get<std::string>());
    if (v.is_boolean())
        return v.get<bool>() ? tr("yes") : tr("no");
    // A span the server counted in milliseconds (expires_in_ms) reads as
    // every other span in the console does.
    if (v.is_number() && endsWith(key, "_ms"))
        return formatDuration(static_cast<qint64>(v.get<double>()));
    if (v.is_array()) {
        QStringList items;
        for (const json& x : v)
            items << (x.is_string() ? auditcells::readableText(x.get<std::string>()) : text(x.dump()));
        return items.isEmpty() ? tr("none") : items.join(QStringLiteral(", "));
    }
    return text(v.dump(-1, ' ', false, json::error_handler_t::replace));
}

void addRows(const json& object, int depth, QList<EvidenceRow>& rows)
{
    for (const auto& [key, v] : object.items()) {
        // Nothing to read in a null ("superseded_by: null" of a current
        // publish: "current: yes" says it); the caveat has a place of its own.
        if (v.is_null() || (depth == 0 && key == "caveat"))
            continue;
        if (v.is_object()) {
            rows.push_back({text(key), key == "stopped" ? stoppedWords(v) : QString(), depth});
            addRows(v, depth + 1, rows);
            continue;
        }
        rows.push_back({text(key), value(key, v), depth});
    }
}

} // namespace

QColor stateColour(const QString& state)
{
    if (state == QLatin1String("completed"))
        return {0x2e, 0x7d, 0x32};
    if (state == QLatin1String("accepted-running") || state == QLatin1String("queued"))
        return {0x15, 0x65, 0xc0};
    if (state == QLatin1String("rejected"))
        return {0xc6, 0x28, 0x28};
    if (state == QLatin1String("ended-unpublished") || state == QLatin1String("cancelled"))
        return {0xc0, 0x7a, 0x00}; // the demo badge's amber: look before acting
    return {0x61, 0x61, 0x61};
}

QList<EvidenceRow> evidenceRows(const json& evidence)
{
    QList<EvidenceRow> rows;
    if (evidence.is_object())
        addRows(evidence, 0, rows);
    else if (!evidence.is_null())
        rows.push_back({QString(), value({}, evidence), 0});
    return rows;
}

QString caveat(const json& evidence)
{
    return evidence.is_object() ? member(evidence, "caveat") : QString();
}

QString stoppedWords(const json& stopped)
{
    if (!stopped.is_object())
        return tr("stopped the command");
    const auto started = stopped.find("command_started");
    if (started != stopped.end() && started->is_boolean() && !started->get<bool>())
        return tr("stopped before the command started");
    QStringList facts;
    if (const auto group = stopped.find("process_group"); group != stopped.end() && group->is_number())
        facts << tr("process group %1").arg(group->get<qint64>());
    // The signal sent, and the one that ended it when that was another
    // (SIGTERM ignored, then SIGKILL).
    const QString signal = member(stopped, "signal");
    const QString killedBy = member(stopped, "killed_by");
    const auto escalated = stopped.find("escalated");
    const bool escalatedToKill =
        escalated != stopped.end() && escalated->is_boolean() && escalated->get<bool>();
    if (!signal.isEmpty() && !killedBy.isEmpty() && killedBy != signal)
        facts << tr("%1 then %2").arg(signal, killedBy);
    else if (!signal.isEmpty() && escalatedToKill)
        facts << tr("%1 then SIGKILL").arg(signal);
    else if (!signal.isEmpty() || !killedBy.isEmpty())
        facts << (signal.isEmpty() ? killedBy : signal);
    if (const auto code = stopped.find("exit_code"); code != stopped.end() && code->is_number())
        facts << tr("exit %1").arg(code->get<qint64>());
    const QString lead = member(stopped, "cause") == QLatin1String("lease-lost")
                             ? tr("lost its lease and stopped the command")
                             : tr("stopped the command");
    return facts.isEmpty() ? lead : tr("%1 (%2)").arg(lead, facts.join(QStringLiteral(", ")));
}

QString stoppedSentence(const json& stopped)
{
    QString words = stoppedWords(stopped);
    const auto started = stopped.is_object() ? stopped.find("command_started") : stopped.end();
    if (started != stopped.end() && started->is_boolean() && !started->get<bool>())
        return words; // nothing ran, so nothing of it can still be running
    return tr("%1; external work it started may still be running").arg(words);
}

QString sentence(const std::string& text)
{
    // The status functions print the times they name as PostgreSQL does
    // ("2026-12-01 20:09:29.501378+00"): read as every other time in the console.
    QString t = formatTimesIn(QString::fromStdString(text).trimmed());
    if (t.isEmpty())
        return t;
    t[0] = t[0].toUpper();
    if (!t.endsWith(QLatin1Char('.')))
        t += QLatin1Char('.');
    return t;
}

} // namespace relctl::ui::jobstatus
