#include "auditmodel.h"

#include "auditcells.h"

#include <QBrush>
#include <QColor>
#include <QDateTime>
#include <QLocale>
#include <algorithm>
#include <iterator>
#include <utility>

namespace relctl::ui {

namespace {

using Column = AuditModel::Column;
using relctl::Event;

bool isRejected(const Event& e)
{
    return e.outcome == "rejected";
}

// A red readable on light and dark palettes alike (Solarized's red was chosen
// for both), so refusals stand out without consulting the view's palette.
const QColor refusalRed(0xdc, 0x32, 0x2f);

// The sort each column asks the server for; the others cannot be sorted
// (composite or unindexed-and-rarely-useful: current, op id, PID, job URL,
// login, address; the detail is a JSON document, which has no order a
// reviewer could use).
std::optional<relctl::AuditSort::Column> sortKey(int column)
{
    using Key = relctl::AuditSort::Column;
    switch (Column(column)) {
    case Column::Time:
        return Key::Time;
    case Column::Environment:
        return Key::Environment;
    case Column::Operation:
        return Key::Operation;
    case Column::Outcome:
        return Key::Outcome;
    case Column::Reason:
        return Key::Reason;
    case Column::Job:
        return Key::Job;
    case Column::Release:
        return Key::Release;
    case Column::Generation:
        return Key::Generation;
    case Column::Token:
        return Key::Token;
    case Column::Host:
        return Key::Host;
    case Column::Actor:
        return Key::Actor;
    default:
        return std::nullopt;
    }
}

} // namespace

AuditModel::AuditModel(QObject* parent)
    : QAbstractTableModel(parent), m_now([] { return QDateTime::currentMSecsSinceEpoch(); })
{
}

void AuditModel::setFilter(relctl::AuditFilter filter)
{
    setFilter(std::move(filter), auditrange::Preset::Custom);
}

void AuditModel::setFilter(relctl::AuditFilter filter, auditrange::Preset range)
{
    m_filter = std::move(filter);
    m_range = range;
    m_active = true;
    reset();
}

void AuditModel::setClock(std::function<qint64()> nowMs)
{
    m_now = std::move(nowMs);
}

QString AuditModel::countText() const
{
    if (!m_active || !m_answered)
        return {};
    // Grouped as the reviewer reads a number in English text ("1,234"),
    // whatever the machine's locale: the console's words are English.
    const QLocale english(QLocale::English, QLocale::UnitedStates);
    const auto events = [&english](qint64 n) {
        return n == 1 ? tr("1 event") : tr("%1 events").arg(english.toString(n));
    };
    QString text = isComplete() ? events(m_rowCount) : tr("at least %1").arg(events(m_rowCount));
    if (m_newEvents > 0)
        text += tr(" (%1 new not shown)").arg(english.toString(m_newEvents));
    return text;
}

void AuditModel::reload()
{
    if (m_active)
        reset();
}

void AuditModel::reset()
{
    // A range that follows the clock is the range as of this read.
    if (auditrange::followsClock(m_range))
        auditrange::apply(m_range, m_now(), m_filter);
    beginResetModel();
    m_chunks.clear();
    m_positions.clear();
    m_topPosition = 0;
    m_rowCount = 0;
    m_more = true;
    m_answered = false;
    m_horizon.reset();
    m_newerWanted = false;
    m_held.clear();
    m_heldIds.clear();
    // The first page's serial is taken before views hear of the reset: one
    // calling fetchMore() from modelReset finds a request outstanding and adds
    // no second one. Any page still on its way for the old filter now carries
    // a serial that is not the outstanding one, so appendPage() drops it.
    m_pending = ++m_lastSerial;
    m_pendingKind = Pending::Page;
    endResetModel();
    updateEmptyResult();
    if (std::exchange(m_newEvents, 0) != 0)
        emit newEventsPending(0);
    emit countChanged();
    emit fetchRequested(*m_pending, {m_filter, m_sort, std::nullopt, std::nullopt, m_pageSize});
}

void AuditModel::setPageSize(int limit)
{
    m_pageSize = std::max(1, limit);
}

bool AuditModel::isSortable(int column)
{
    return sortKey(column).has_value();
}

void AuditModel::sort(int column, Qt::SortOrder order)
{
    const auto key = sortKey(column);
    if (!key)
        return;
    const relctl::AuditSort sort{*key, order == Qt::DescendingOrder};
    if (sort == m_sort)
        return;
    m_sort = sort;
    if (m_active)
        reset();
}

int AuditModel::sortColumn() const
{
    for (int c = 0; c < int(Column::Count); ++c)
        if (sortKey(c) == m_sort.column)
            return c;
    return int(Column::Time);
}

Qt::SortOrder AuditModel::sortOrder() const
{
    return m_sort.descending ? Qt::DescendingOrder : Qt::AscendingOrder;
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
    m_pendingKind = Pending::Page;
    std::optional<relctl::AuditCursor> after;
    if (!m_chunks.empty())
        after = relctl::auditCursorAfter(m_chunks.back().events.back(), m_sort.column);
    emit fetchRequested(*m_pending, {m_filter, m_sort, after, std::nullopt, m_pageSize});
}

void AuditModel::requestNewer(bool overlap)
{
    m_newerWanted = false;
    m_pending = ++m_lastSerial;
    m_pendingKind = Pending::Newer;
    std::optional<std::int64_t> newerThan = m_horizon;
    // Event ids are taken when a transaction inserts, not when it commits: an
    // event with an id below the horizon may commit after the snapshot that
    // set it (two environments written at once). The first request of a round
    // reaches back over the last ids, so such a late event is still found;
    // loaded ones are skipped. Only the newest-first table inserts them, so
    // only it asks for the overlap.
    if (overlap && newerThan && showsNewestFirst())
        newerThan = std::max<std::int64_t>(0, *newerThan - lateCommitWindow);
    emit fetchRequested(*m_pending, {m_filter, m_sort, std::nullopt, newerThan, m_pageSize});
}

bool AuditModel::showsNewestFirst() const
{
    return m_sort.column == relctl::AuditSort::Column::Time && m_sort.descending;
}

void AuditModel::eventsArrived()
{
    if (!m_active)
        return;
    if (m_sort.column == relctl::AuditSort::Column::Time && !m_sort.descending) {
        // Oldest first: new events come after the last row, where the next
        // page would. An empty page turns this off again.
        m_more = true;
        emit countChanged(); // no longer known to be the whole result
        return;
    }
    // One request at a time: asked for once the outstanding one is answered
    // (a first page read before the events committed does not hold them).
    if (!m_horizon || m_pending) {
        m_newerWanted = true;
        return;
    }
    requestNewer(true);
}

bool AuditModel::appendPage(std::uint64_t serial, relctl::AuditPage page)
{
    if (!m_pending || *m_pending != serial)
        return false;
    const Pending kind = m_pendingKind;
    auto& events = page.events;
    // Where the server's page ended, before loaded events are dropped: a
    // newer-than round continues from there.
    const std::optional<std::int64_t> lastRead =
        events.empty() ? std::nullopt : std::optional(events.back().id);

    // An event already loaded would be shown twice and break rowForEvent().
    // Newer-than pages overlap the loaded rows on purpose (requestNewer());
    // anywhere else a duplicate means a query bug: drop it, loudly.
    std::size_t kept = 0;
    for (auto& e : events) {
        if (m_positions.contains(e.id) || m_heldIds.contains(e.id))
            continue;
        if (&events[kept] != &e)
            events[kept] = std::move(e);
        ++kept;
    }
    if (kept != events.size() && kind == Pending::Page)
        qWarning("AuditModel: dropped %zu audit event(s) already loaded", events.size() - kept);
    events.resize(kept);

    bool newerAgain = false;
    if (kind == Pending::Page) {
        // The first page tells where the trail ended when it was read; later
        // pages' horizons are not used: events between would be missed.
        if (!m_horizon)
            m_horizon = page.horizon;
        m_answered = true;
        m_more = page.more && kept > 0;
        appendRows(std::move(events));
    } else {
        // Oldest first; the whole burst is fetched page by page, then the
        // horizon moves to where the server's snapshot ended.
        const bool more = page.more && lastRead;
        if (lastRead)
            m_horizon = std::max(m_horizon.value_or(0), *lastRead);
        if (!more)
            m_horizon = std::max(m_horizon.value_or(0), page.horizon);
        if (showsNewestFirst() && m_hold) {
            holdNewer(std::move(events));
        } else if (showsNewestFirst()) {
            insertNewer(std::move(events));
        } else if (!events.empty()) {
            m_newEvents += int(events.size());
            emit newEventsPending(m_newEvents);
        }
        newerAgain = more;
    }
    // Cleared only now: a fetchMore() from a rowsInserted handler must not ask
    // for a page before the rows it follows are in.
    m_pending.reset();
    updateEmptyResult();
    emit countChanged();
    if (newerAgain)
        requestNewer(false);
    else if (m_newerWanted && m_horizon)
        requestNewer(true);
    return true;
}

void AuditModel::updateEmptyResult()
{
    const bool empty = m_answered && m_rowCount == 0;
    if (empty != std::exchange(m_emptyResult, empty))
        emit emptyResultChanged(empty);
}

void AuditModel::appendRows(std::vector<relctl::Event> events)
{
    if (events.empty())
        return;
    const int first = m_rowCount;
    const int count = int(events.size());
    beginInsertRows({}, first, first + count - 1);
    const std::int64_t position = m_topPosition + first;
    for (int i = 0; i < count; ++i)
        m_positions.insert(events[std::size_t(i)].id, position + i);
    m_chunks.push_back({std::move(events), position});
    m_rowCount += count;
    endInsertRows();
}

void AuditModel::insertNewer(std::vector<relctl::Event> events)
{
    // Oldest first, none loaded. Those above the top row go on top in one
    // block; a late commit (below it) goes to its place among the rows.
    const std::int64_t top = m_rowCount > 0 ? loadedEvent(0).id : 0;
    const auto firstNew =
        std::find_if(events.begin(), events.end(), [top](const relctl::Event& e) { return e.id > top; });
    for (auto late = events.begin(); late != firstNew; ++late)
        insertLate(std::move(*late));
    std::vector<relctl::Event> fresh(std::make_move_iterator(firstNew),
                                     std::make_move_iterator(events.end()));
    if (fresh.empty())
        return;
    // The table is newest first.
    std::reverse(fresh.begin(), fresh.end());
    const int count = int(fresh.size());
    beginInsertRows({}, 0, count - 1);
    const std::int64_t position = m_topPosition - count;
    for (int i = 0; i < count; ++i)
        m_positions.insert(fresh[std::size_t(i)].id, position + i);
    m_chunks.push_front({std::move(fresh), position});
    m_topPosition = position;
    m_rowCount += count;
    endInsertRows();
}

void AuditModel::holdNewer(std::vector<relctl::Event> events)
{
    if (events.empty())
        return;
    for (auto& e : events) {
        m_heldIds.insert(e.id);
        m_held.push_back(std::move(e));
    }
    m_newEvents = int(m_held.size());
    emit newEventsPending(m_newEvents);
    emit countChanged();
}

void AuditModel::setHoldNewEvents(bool hold)
{
    m_hold = hold;
    if (!hold)
        insertHeld();
}

void AuditModel::showNewEvents()
{
    if (showsNewestFirst())
        insertHeld();
    else
        reload();
}

void AuditModel::insertHeld()
{
    if (m_held.empty())
        return;
    // Taken first: a view that holds again from rowsInserted finds nothing
    // held twice.
    std::vector<relctl::Event> held = std::exchange(m_held, {});
    m_heldIds.clear();
    // Rounds arrive oldest first, but a late commit found by a later round
    // has a smaller id than what an earlier one held: insertNewer() wants
    // them all in id order.
    std::sort(held.begin(), held.end(),
              [](const relctl::Event& a, const relctl::Event& b) { return a.id < b.id; });
    m_newEvents = 0;
    emit newEventsPending(0);
    insertNewer(std::move(held));
    updateEmptyResult();
    emit countChanged();
}

void AuditModel::insertLate(relctl::Event event)
{
    // Its row: after every loaded event with a larger id. Late commits are
    // among the newest ids, so the walk is short; the rows above it move up
    // one position and the rows below keep theirs, so only the few above are
    // renumbered, however many are loaded.
    int row = 0;
    while (row < m_rowCount && loadedEvent(row).id > event.id)
        ++row;
    // The rows change only between begin and end: views and testers read the
    // old rows while beginInsertRows() runs.
    beginInsertRows({}, row, row);
    std::vector<relctl::Event> head;
    head.reserve(std::size_t(row) + 1);
    for (int remaining = row; remaining > 0;) {
        Chunk& chunk = m_chunks.front();
        const auto take = std::min<std::size_t>(std::size_t(remaining), chunk.events.size());
        std::move(chunk.events.begin(), chunk.events.begin() + std::ptrdiff_t(take),
                  std::back_inserter(head));
        chunk.events.erase(chunk.events.begin(), chunk.events.begin() + std::ptrdiff_t(take));
        chunk.firstPosition += std::int64_t(take);
        if (chunk.events.empty())
            m_chunks.pop_front();
        remaining -= int(take);
    }
    head.push_back(std::move(event));
    const std::int64_t position = m_topPosition - 1;
    for (std::size_t i = 0; i < head.size(); ++i)
        m_positions.insert(head[i].id, position + std::int64_t(i));
    m_chunks.push_front({std::move(head), position});
    m_topPosition = position;
    ++m_rowCount;
    endInsertRows();
}

void AuditModel::requestFailed(std::uint64_t serial)
{
    if (m_pending == serial)
        m_pending.reset();
}

std::optional<int> AuditModel::rowForEvent(std::int64_t eventId) const
{
    const auto it = m_positions.constFind(eventId);
    if (it == m_positions.constEnd())
        return std::nullopt;
    return int(*it - m_topPosition);
}

const relctl::Event* AuditModel::eventAt(int row) const
{
    if (row < 0 || row >= m_rowCount)
        return nullptr;
    return &loadedEvent(row);
}

const relctl::Event& AuditModel::loadedEvent(int row) const
{
    // The last page starting at or before the row: a search over a few hundred pages at most.
    const std::int64_t position = m_topPosition + row;
    const auto chunk =
        std::prev(std::upper_bound(m_chunks.begin(), m_chunks.end(), position,
                                   [](std::int64_t p, const Chunk& c) { return p < c.firstPosition; }));
    return chunk->events[std::size_t(position - chunk->firstPosition)];
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
        return auditcells::display(e, column);
    case Qt::ToolTipRole:
        return auditcells::toolTip(e, column);
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
        return qint64(e.at.millis());
    default:
        return {};
    }
}

QVariant AuditModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    return auditcells::title(Column(section));
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
