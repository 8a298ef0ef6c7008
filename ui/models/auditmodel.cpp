#include "auditmodel.h"

#include "timeformat.h"

#include <QBrush>
#include <QColor>
#include <QDateTime>
#include <QIODevice>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QStringList>
#include <algorithm>
#include <iterator>
#include <limits>
#include <utility>

namespace relctl::ui {

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

// What was current when the event happened, in one cell: "release 1.4.2, generation 7, token 12".
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

// The fields of `relctl audit --json` events, in its order: the one list both
// exports use, so CSV headers and JSON keys cannot drift apart.
struct Field
{
    QLatin1String name;
    QJsonValue (*value)(const AuditEvent&);
};

QJsonValue json(const std::optional<std::string>& s)
{
    return s ? QJsonValue(text(*s)) : QJsonValue(QJsonValue::Null);
}

QJsonValue json(const std::optional<std::int64_t>& n)
{
    return n ? QJsonValue(qint64(*n)) : QJsonValue(QJsonValue::Null);
}

const Field fields[] = {
    {QLatin1String("id"), [](const AuditEvent& e) { return QJsonValue(qint64(e.id)); }},
    {QLatin1String("at"), [](const AuditEvent& e) { return QJsonValue(utcIso(e.at)); }},
    {QLatin1String("env"), [](const AuditEvent& e) { return QJsonValue(text(e.env)); }},
    {QLatin1String("operation"), [](const AuditEvent& e) { return QJsonValue(text(e.operation)); }},
    {QLatin1String("outcome"), [](const AuditEvent& e) { return QJsonValue(text(e.outcome)); }},
    {QLatin1String("reason"), [](const AuditEvent& e) { return json(e.reason); }},
    {QLatin1String("job"), [](const AuditEvent& e) { return json(e.job); }},
    {QLatin1String("release"), [](const AuditEvent& e) { return json(e.release); }},
    {QLatin1String("generation"), [](const AuditEvent& e) { return json(e.generation); }},
    {QLatin1String("token"), [](const AuditEvent& e) { return json(e.token); }},
    {QLatin1String("current_token"), [](const AuditEvent& e) { return json(e.currentToken); }},
    {QLatin1String("current_generation"), [](const AuditEvent& e) { return json(e.currentGeneration); }},
    {QLatin1String("current_release"), [](const AuditEvent& e) { return json(e.currentRelease); }},
    {QLatin1String("op_id"), [](const AuditEvent& e) { return json(e.opId); }},
    {QLatin1String("host"), [](const AuditEvent& e) { return json(e.host); }},
    {QLatin1String("pid"), [](const AuditEvent& e) { return json(e.pid); }},
    {QLatin1String("job_url"), [](const AuditEvent& e) { return json(e.jobUrl); }},
    {QLatin1String("actor"), [](const AuditEvent& e) { return json(e.actor); }},
};

// RFC 4180: a field holding a comma, quote or line break is quoted, its
// quotes doubled.
void appendCsvField(QByteArray& out, const QString& value)
{
    const QByteArray utf8 = value.toUtf8();
    if (!utf8.contains(',') && !utf8.contains('"') && !utf8.contains('\n') && !utf8.contains('\r')) {
        out += utf8;
        return;
    }
    out += '"';
    for (const char c : utf8) {
        if (c == '"')
            out += '"';
        out += c;
    }
    out += '"';
}

QString csvText(const QJsonValue& v)
{
    if (v.isNull())
        return {};
    if (v.isString())
        return v.toString();
    return QString::number(v.toInteger());
}

// Buffered writes: one device call per ~64 KiB rather than per row.
class Writer final
{
public:
    explicit Writer(QIODevice& device) : m_device(device) {}
    QByteArray& buffer() { return m_buffer; }
    bool flushIfFull() { return m_buffer.size() < (64 << 10) || flush(); }
    bool flush()
    {
        const bool ok = m_device.write(m_buffer) == m_buffer.size();
        m_buffer.clear();
        return ok;
    }

private:
    QIODevice& m_device;
    QByteArray m_buffer;
};

// A red readable on light and dark palettes alike (Solarized's red was chosen
// for both), so refusals stand out without consulting the view's palette.
const QColor refusalRed(0xdc, 0x32, 0x2f);

} // namespace

AuditModel::AuditModel(QObject* parent) : QAbstractTableModel(parent) {}

void AuditModel::setFilter(relctl::AuditFilter filter)
{
    beginResetModel();
    m_filter = std::move(filter);
    m_chunks.clear();
    m_rowCount = 0;
    m_active = true;
    m_more = true;
    // The first page's serial is taken before views hear of the reset: one
    // calling fetchMore() from modelReset finds a request outstanding and adds
    // no second one. Any page still on its way for the old filter now carries
    // a serial that is not the outstanding one, so appendPage() drops it.
    m_pending = ++m_lastSerial;
    endResetModel();
    emit fetchRequested(*m_pending, {m_filter, std::nullopt, m_pageSize});
}

void AuditModel::setPageSize(int limit)
{
    m_pageSize = std::max(1, limit);
}

bool AuditModel::canFetchMore(const QModelIndex& parent) const
{
    return !parent.isValid() && m_active && m_more;
}

void AuditModel::fetchMore(const QModelIndex& parent)
{
    // Views call fetchMore() on every scroll near the end: while a page is on
    // its way, asking again would load it twice.
    if (!canFetchMore(parent) || m_pending)
        return;
    requestNextPage();
}

void AuditModel::requestNextPage()
{
    m_pending = ++m_lastSerial;
    std::optional<std::int64_t> beforeId;
    if (!m_chunks.empty())
        beforeId = m_chunks.back().events.back().id;
    emit fetchRequested(*m_pending, {m_filter, beforeId, m_pageSize});
}

bool AuditModel::appendPage(std::uint64_t serial, relctl::AuditPage page)
{
    if (!m_pending || *m_pending != serial)
        return false;

    // Keyset pagination returns ids strictly below the last loaded one, newest
    // first; rowForEvent()'s binary search depends on it. An event breaking
    // that order would be a duplicate or a query bug: drop it, loudly.
    auto& events = page.events;
    std::int64_t below =
        m_chunks.empty() ? std::numeric_limits<std::int64_t>::max() : m_chunks.back().events.back().id;
    std::size_t kept = 0;
    for (auto& e : events) {
        if (e.id >= below)
            continue;
        below = e.id;
        if (&events[kept] != &e)
            events[kept] = std::move(e);
        ++kept;
    }
    if (kept != events.size())
        qWarning("AuditModel: dropped %zu out-of-order audit event(s)", events.size() - kept);
    events.resize(kept);

    m_more = page.more && kept > 0;
    if (kept > 0) {
        const int first = m_rowCount;
        beginInsertRows({}, first, first + int(kept) - 1);
        m_chunks.push_back({std::move(events), first});
        m_rowCount += int(kept);
        endInsertRows();
    }
    // Cleared only now: a fetchMore() from a rowsInserted handler must not ask
    // for a page before the rows it follows are in.
    m_pending.reset();
    return true;
}

void AuditModel::requestFailed(std::uint64_t serial)
{
    if (m_pending == serial)
        m_pending.reset();
}

std::optional<int> AuditModel::rowForEvent(std::int64_t eventId) const
{
    // The first page whose oldest event is not newer than eventId, then within it.
    const auto chunk =
        std::lower_bound(m_chunks.begin(), m_chunks.end(), eventId,
                         [](const Chunk& c, std::int64_t id) { return c.events.back().id > id; });
    if (chunk == m_chunks.end())
        return std::nullopt;
    const auto it = std::lower_bound(chunk->events.begin(), chunk->events.end(), eventId,
                                     [](const AuditEvent& e, std::int64_t id) { return e.id > id; });
    if (it == chunk->events.end() || it->id != eventId)
        return std::nullopt;
    return chunk->firstRow + int(it - chunk->events.begin());
}

const relctl::AuditEvent* AuditModel::eventAt(int row) const
{
    if (row < 0 || row >= m_rowCount)
        return nullptr;
    return &loadedEvent(row);
}

const relctl::AuditEvent& AuditModel::loadedEvent(int row) const
{
    // The last page starting at or before row: a search over a few hundred pages at most.
    const auto chunk = std::prev(std::upper_bound(m_chunks.begin(), m_chunks.end(), row,
                                                  [](int r, const Chunk& c) { return r < c.firstRow; }));
    return chunk->events[std::size_t(row - chunk->firstRow)];
}

bool AuditModel::exportCsv(QIODevice& device) const
{
    Writer out(device);
    QByteArray& buffer = out.buffer();
    bool first = true;
    for (const auto& f : fields) {
        if (!std::exchange(first, false))
            buffer += ',';
        buffer.append(f.name.data(), f.name.size());
    }
    buffer += "\r\n";
    for (const auto& chunk : m_chunks) {
        for (const auto& e : chunk.events) {
            first = true;
            for (const auto& f : fields) {
                if (!std::exchange(first, false))
                    buffer += ',';
                appendCsvField(buffer, csvText(f.value(e)));
            }
            buffer += "\r\n";
            if (!out.flushIfFull())
                return false;
        }
    }
    return out.flush();
}

bool AuditModel::exportJson(QIODevice& device) const
{
    // Streamed object by object: a QJsonArray of every loaded row would hold
    // the whole export in memory twice.
    Writer out(device);
    QByteArray& buffer = out.buffer();
    buffer += '[';
    bool first = true;
    for (const auto& chunk : m_chunks) {
        for (const auto& e : chunk.events) {
            QJsonObject object;
            for (const auto& f : fields)
                object.insert(f.name, f.value(e));
            buffer += std::exchange(first, false) ? "\n" : ",\n";
            buffer += QJsonDocument(object).toJson(QJsonDocument::Compact);
            if (!out.flushIfFull())
                return false;
        }
    }
    buffer += "\n]\n";
    return out.flush();
}

int AuditModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : m_rowCount;
}

int AuditModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(Column::Count);
}

QVariant AuditModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto& e = loadedEvent(index.row());
    const auto column = Column(index.column());
    switch (role) {
    case Qt::DisplayRole:
        return display(e, column);
    case Qt::ToolTipRole:
        return toolTip(e, column);
    case Qt::ForegroundRole:
        // Only the cells that say "refused" and why: a whole red row is harder
        // to read and hides the selection highlight.
        if (isRejected(e) && (column == Column::Outcome || column == Column::Reason))
            return QBrush(refusalRed);
        return {};
    case Qt::TextAlignmentRole:
        if (column == Column::Generation || column == Column::Token || column == Column::Pid)
            return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
        return {};
    case Roles::EventId:
        return qint64(e.id);
    case Roles::Rejected:
        return isRejected(e);
    case Roles::AtMs:
        return qint64(e.at);
    default:
        return {};
    }
}

QVariant AuditModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (Column(section)) {
    case Column::Time:
        return tr("Time");
    case Column::Environment:
        return tr("Environment");
    case Column::Operation:
        return tr("Operation");
    case Column::Outcome:
        return tr("Outcome");
    case Column::Reason:
        return tr("Reason");
    case Column::Job:
        return tr("Job");
    case Column::Release:
        return tr("Release");
    case Column::Generation:
        return tr("Generation");
    case Column::Token:
        return tr("Token");
    case Column::Current:
        return tr("Current");
    case Column::OpId:
        return tr("Op id");
    case Column::Host:
        return tr("Host");
    case Column::Pid:
        return tr("PID");
    case Column::JobUrl:
        return tr("Job URL");
    case Column::Actor:
        return tr("Actor");
    case Column::Count:
        break;
    }
    return {};
}

QHash<int, QByteArray> AuditModel::roleNames() const
{
    auto names = QAbstractTableModel::roleNames();
    names.insert(Roles::EventId, QByteArrayLiteral("eventId"));
    names.insert(Roles::Rejected, QByteArrayLiteral("rejected"));
    names.insert(Roles::AtMs, QByteArrayLiteral("atMs"));
    return names;
}

} // namespace relctl::ui
