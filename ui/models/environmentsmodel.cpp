#include "environmentsmodel.h"

#include "relctl/naturalsort.h"
#include "timeformat.h"

#include <QBrush>
#include <QColor>
#include <QDateTime>
#include <QFont>
#include <algorithm>
#include <string_view>
#include <unordered_set>
#include <utility>

namespace relctl::ui {

namespace {

using Column = EnvironmentsModel::Column;

QString text(const std::string& s)
{
    return QString::fromStdString(s);
}

QVariant optionalText(const std::optional<std::string>& s)
{
    return s ? QVariant(text(*s)) : QVariant();
}

QVariant optionalTime(const std::optional<relctl::Timestamp>& at)
{
    return at ? QVariant(formatTime(*at)) : QVariant();
}

QVariant optionalNumber(const std::optional<std::int64_t>& n)
{
    return n ? QVariant(qint64(*n)) : QVariant();
}

QString orDash(const std::optional<std::string>& s)
{
    return s ? text(*s) : QStringLiteral("-");
}

QString toolTip(const relctl::EnvironmentRow& r, Column column)
{
    switch (column) {
    case Column::Environment:
    case Column::Policy:
        return EnvironmentsModel::tr("Queue policy: %1\nSupersession: %2\nSerialization: %3")
            .arg(text(r.policy), text(r.supersede), text(r.serialization));
    case Column::CurrentRelease:
    case Column::Generation:
    case Column::PublishedBy:
    case Column::PublishedAt:
        if (!r.currentRelease)
            return EnvironmentsModel::tr("Nothing published yet");
        return EnvironmentsModel::tr("Release %1, generation %2\nPublished by %3 at %4")
            .arg(text(*r.currentRelease),
                 r.currentGeneration ? QString::number(*r.currentGeneration) : QStringLiteral("-"),
                 orDash(r.publishedBy), r.publishedAt ? formatTime(*r.publishedAt) : QStringLiteral("-"));
    case Column::LeaseHolder:
    case Column::HeldFor:
    case Column::ExpiresIn:
        if (!r.holderJob)
            return EnvironmentsModel::tr("No live lease");
        return EnvironmentsModel::tr("Job %1, release %2\nFencing token %3\nAcquired at %4\nExpires at %5")
            .arg(text(*r.holderJob), orDash(r.holderRelease),
                 r.holderToken ? QString::number(*r.holderToken) : QStringLiteral("-"),
                 r.holderAcquiredAt ? formatTime(*r.holderAcquiredAt) : QStringLiteral("-"),
                 r.leaseExpiresAt ? formatTime(*r.leaseExpiresAt) : QStringLiteral("-"));
    case Column::Queue:
    case Column::Pending:
        return EnvironmentsModel::tr("%1 job(s) waiting (the Queue view lists them)\n"
                                     "%2 supersession(s) awaiting approval (Supersessions)\n"
                                     "%3 promotion request(s) awaiting approval (Promotions)")
            .arg(r.queueLength)
            .arg(r.pendingSupersessions)
            .arg(r.pendingPromotions);
    case Column::Frozen:
        if (!r.frozen)
            return EnvironmentsModel::tr("Not frozen");
        return EnvironmentsModel::tr("Frozen by %1: %2").arg(orDash(r.frozenBy), orDash(r.frozenReason));
    case Column::Count:
        break;
    }
    return {};
}

// A span in whole seconds, in formatDuration's units: a cell that ticks once
// a second cannot show tenths.
QString wholeSeconds(std::int64_t s)
{
    return s < 60 ? EnvironmentsModel::tr("%1 s").arg(s) : formatDuration(s * 1000);
}

} // namespace

EnvironmentsModel::EnvironmentsModel(QObject* parent)
    : QAbstractTableModel(parent), m_steadyAtUpdate(std::chrono::steady_clock::now())
{
}

void EnvironmentsModel::setEnvironments(std::vector<relctl::EnvironmentRow> rows)
{
    // A read is current by definition (and emits dataChanged for every cell below).
    const bool wasStale = std::exchange(m_stale, false);
    // Every row of one read carries the same serverNow; take the newest in case
    // a caller merged reads. An empty read keeps the clock it had.
    if (!rows.empty()) {
        m_serverNowAtUpdate = std::max_element(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
                                  return a.serverNow < b.serverNow;
                              })->serverNow.millis();
        m_steadyAtUpdate = std::chrono::steady_clock::now();
        m_now = m_serverNowAtUpdate;
    }
    // The order people count in (svc2 before svc10), whatever order the read had.
    if (!std::is_sorted(rows.begin(), rows.end(), naturalRowLess))
        std::stable_sort(rows.begin(), rows.end(), naturalRowLess);

    if (m_rows.empty()) {
        // The first read: one insertion, not a row at a time.
        if (!rows.empty()) {
            beginInsertRows({}, 0, int(rows.size()) - 1);
            m_rows = std::move(rows);
            rebuildIndex(0);
            endInsertRows();
        }
        return;
    }
    if (!mergeByName(rows)) {
        beginResetModel();
        m_rows = std::move(rows);
        rebuildIndex(0);
        endResetModel();
        return;
    }
    // The countdowns moved with the clock and a stale grey is gone on every
    // row: those cells change everywhere. The rest only where the row did.
    if (wasStale)
        emit dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1));
    else
        emitCountdownChanged();
}

bool EnvironmentsModel::naturalRowLess(const relctl::EnvironmentRow& a, const relctl::EnvironmentRow& b)
{
    return relctl::naturalLess(a.name, b.name);
}

void EnvironmentsModel::rebuildIndex(std::size_t from)
{
    if (from == 0) {
        m_index.clear();
        m_index.reserve(qsizetype(m_rows.size()));
    }
    for (std::size_t i = from; i < m_rows.size(); ++i)
        m_index.insert(text(m_rows[i].name), int(i));
}

int EnvironmentsModel::rowOf(const QString& name) const
{
    return m_index.value(name, -1);
}

// Removes vanished names and inserts new ones in runs, and replaces the
// survivors in place, so persistent indexes (selection, current row) of the
// surviving environments follow them; dataChanged only for rows whose data
// changed. Both lists are in natural order, so the survivors keep theirs.
// Gives up (returns false, nothing changed) when a name repeats: then only
// a reset describes the change honestly.
bool EnvironmentsModel::mergeByName(std::vector<relctl::EnvironmentRow>& rows)
{
    std::unordered_set<std::string_view> incoming;
    incoming.reserve(rows.size());
    for (const auto& r : rows) {
        if (!incoming.insert(r.name).second)
            return false;
    }
    if (m_index.size() != qsizetype(m_rows.size()))
        return false;

    // Removals, last run first, so earlier rows keep their numbers.
    bool removed = false;
    for (int i = rowCount() - 1; i >= 0;) {
        if (incoming.count(m_rows[std::size_t(i)].name)) {
            --i;
            continue;
        }
        int first = i;
        while (first > 0 && !incoming.count(m_rows[std::size_t(first - 1)].name))
            --first;
        beginRemoveRows({}, first, i);
        m_rows.erase(m_rows.begin() + first, m_rows.begin() + i + 1);
        endRemoveRows();
        removed = true;
        i = first - 1;
    }
    incoming.clear(); // views into rows' names: dropped before the rows move
    if (removed)
        rebuildIndex(0);

    // The survivors are now in the incoming order; every gap is a run of new names.
    std::size_t i = 0;
    int changedFirst = -1, changedLast = -1;
    const auto flushChanged = [&] {
        if (changedFirst >= 0)
            emit dataChanged(index(changedFirst, 0), index(changedLast, columnCount() - 1));
        changedFirst = changedLast = -1;
    };
    bool inserted = false;
    while (i < rows.size()) {
        if (i < m_rows.size() && m_rows[i].name == rows[i].name) {
            if (!sameData(m_rows[i], rows[i])) {
                m_rows[i] = std::move(rows[i]);
                if (changedFirst < 0)
                    changedFirst = int(i);
                changedLast = int(i);
            } else {
                m_rows[i].serverNow = rows[i].serverNow;
                flushChanged();
            }
            ++i;
            continue;
        }
        flushChanged();
        std::size_t end = i + 1;
        while (end < rows.size() && (i >= m_rows.size() || rows[end].name != m_rows[i].name))
            ++end;
        beginInsertRows({}, int(i), int(end) - 1);
        m_rows.insert(m_rows.begin() + std::ptrdiff_t(i),
                      std::make_move_iterator(rows.begin() + std::ptrdiff_t(i)),
                      std::make_move_iterator(rows.begin() + std::ptrdiff_t(end)));
        endInsertRows();
        inserted = true;
        i = end;
    }
    flushChanged();
    if (inserted)
        rebuildIndex(0);
    return true;
}

bool EnvironmentsModel::sameData(const relctl::EnvironmentRow& a, const relctl::EnvironmentRow& b)
{
    // serverNow differs on every read; the countdowns follow it through the clock.
    return relctl::sameExceptClock(a, b);
}

void EnvironmentsModel::updateEnvironments(const QStringList& names, std::vector<relctl::EnvironmentRow> rows)
{
    // A stale grey is cleared by a full read only: the other rows are still what was last read.
    for (const auto& r : rows) {
        if (r.serverNow.millis() > m_serverNowAtUpdate) {
            m_serverNowAtUpdate = r.serverNow.millis();
            m_steadyAtUpdate = std::chrono::steady_clock::now();
            m_now = m_serverNowAtUpdate;
        }
    }
    QHash<QString, std::size_t> read;
    read.reserve(qsizetype(rows.size()));
    for (std::size_t i = 0; i < rows.size(); ++i)
        read.insert(text(rows[i].name), i);
    QStringList all = names;
    for (const auto& r : rows) {
        const QString name = text(r.name);
        if (!names.contains(name))
            all << name;
    }
    for (const QString& name : all) {
        const int row = rowOf(name);
        const auto found = read.constFind(name);
        if (found == read.constEnd()) {
            if (row < 0)
                continue;
            // Gone from the database.
            beginRemoveRows({}, row, row);
            m_rows.erase(m_rows.begin() + row);
            m_index.remove(name);
            for (std::size_t i = std::size_t(row); i < m_rows.size(); ++i)
                m_index[text(m_rows[i].name)] = int(i);
            endRemoveRows();
            continue;
        }
        relctl::EnvironmentRow& incoming = rows[*found];
        if (row >= 0) {
            if (sameData(m_rows[std::size_t(row)], incoming))
                continue;
            m_rows[std::size_t(row)] = std::move(incoming);
            emit dataChanged(index(row, 0), index(row, columnCount() - 1));
            continue;
        }
        // New: at its place in natural order.
        const auto at = std::upper_bound(m_rows.begin(), m_rows.end(), incoming, naturalRowLess);
        const int pos = int(at - m_rows.begin());
        beginInsertRows({}, pos, pos);
        m_rows.insert(at, std::move(incoming));
        rebuildIndex(std::size_t(pos));
        endInsertRows();
    }
}

void EnvironmentsModel::setStale(bool stale)
{
    if (stale == m_stale)
        return;
    m_stale = stale;
    if (!m_rows.empty())
        emit dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1));
}

void EnvironmentsModel::setNeedsMe(const QSet<QString>& environments)
{
    if (environments == m_needsMe)
        return;
    // Only the rows that gained or lost the mark change, in runs: a decision
    // taken touches its environment, not the other 9,999 (each view above
    // would look at every row again).
    std::vector<int> changed;
    const auto rowsOnlyIn = [&](const QSet<QString>& these, const QSet<QString>& notThose) {
        for (const QString& name : these)
            if (!notThose.contains(name))
                if (const int row = rowOf(name); row >= 0)
                    changed.push_back(row);
    };
    rowsOnlyIn(m_needsMe, environments);
    rowsOnlyIn(environments, m_needsMe);
    m_needsMe = environments;
    std::sort(changed.begin(), changed.end());
    const QList<int> roles{Roles::NeedsMe, Qt::FontRole, Qt::ToolTipRole};
    for (std::size_t i = 0; i < changed.size();) {
        std::size_t end = i + 1;
        while (end < changed.size() && changed[end] == changed[end - 1] + 1)
            ++end;
        emit dataChanged(index(changed[i], 0), index(changed[end - 1], columnCount() - 1), roles);
        i = end;
    }
}

void EnvironmentsModel::tick()
{
    if (m_stale)
        return;
    const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - m_steadyAtUpdate);
    // The local steady clock, not the wall clock: only the server's clock
    // decides expiry, and the local wall clock may be off or jump.
    m_now = m_serverNowAtUpdate + elapsed.count();
    emitCountdownChanged();
}

void EnvironmentsModel::setNow(qint64 serverNowEstimate)
{
    if (m_stale)
        return;
    m_now = serverNowEstimate;
    emitCountdownChanged();
}

void EnvironmentsModel::emitCountdownChanged()
{
    // The two clock columns are adjacent: one signal covers both.
    static_assert(int(Column::ExpiresIn) == int(Column::HeldFor) + 1);
    // Only rows with a lease count anything: of 10,000 environments a few
    // hold one, and a signal over every row would have each proxy and view
    // above look at every row once a second. Runs of leased rows are one
    // signal each; scattered ones past a handful are one signal from the
    // first to the last.
    std::vector<std::pair<int, int>> runs;
    for (int i = 0, n = rowCount(); i < n; ++i) {
        const auto& r = m_rows[std::size_t(i)];
        if (!r.holderJob && !r.leaseExpiresAt)
            continue;
        if (!runs.empty() && runs.back().second == i - 1)
            runs.back().second = i;
        else
            runs.emplace_back(i, i);
    }
    if (runs.empty())
        return;
    if (runs.size() > 16)
        runs = {{runs.front().first, runs.back().second}};
    for (const auto& [first, last] : runs)
        emit dataChanged(index(first, int(Column::HeldFor)), index(last, int(Column::ExpiresIn)),
                         {Qt::DisplayRole, Roles::RemainingMs});
}

int EnvironmentsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int EnvironmentsModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(Column::Count);
}

QVariant EnvironmentsModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto& r = m_rows[std::size_t(index.row())];
    const auto column = Column(index.column());
    const std::int64_t pending = r.pendingSupersessions + r.pendingPromotions;
    // Most consoles' logins wait on nothing: no name to build on every call then.
    const bool needsMe = !m_needsMe.isEmpty() && m_needsMe.contains(text(r.name));
    switch (role) {
    case Qt::DisplayRole:
        switch (column) {
        case Column::Environment:
            return text(r.name);
        case Column::CurrentRelease:
            return optionalText(r.currentRelease);
        case Column::Generation:
            return optionalNumber(r.currentGeneration);
        case Column::PublishedBy:
            return optionalText(r.publishedBy);
        case Column::PublishedAt:
            return optionalTime(r.publishedAt);
        case Column::LeaseHolder:
            return optionalText(r.holderJob);
        case Column::HeldFor:
            return r.holderJob && r.holderAcquiredAt
                       ? QVariant(formatHeld(m_now - r.holderAcquiredAt->millis()))
                       : QVariant();
        case Column::ExpiresIn:
            return r.leaseExpiresAt ? QVariant(formatCountdown(r.leaseExpiresAt->millis() - m_now))
                                    : QVariant();
        case Column::Queue:
            return qint64(r.queueLength);
        case Column::Pending:
            // Empty rather than "0": the column should catch the eye only
            // where someone has to decide.
            return pending > 0 ? QVariant(tr("%1 to decide").arg(pending)) : QVariant();
        case Column::Policy:
            return text(r.policy);
        case Column::Frozen:
            return r.frozen ? tr("frozen") : QString();
        case Column::Count:
            break;
        }
        return {};
    case Qt::ToolTipRole: {
        QString tip = toolTip(r, column);
        if (needsMe)
            tip += tr("\nA request here waits for your decision.");
        if (m_stale)
            tip += tr("\n(Not current: the database is unreachable; this is what was last read, and the "
                      "countdown is stopped.)");
        return tip;
    }
    case Qt::FontRole:
        // The rows that wait for this login stand out even when the table
        // shows every environment.
        if (needsMe) {
            QFont bold;
            bold.setBold(true);
            return bold;
        }
        return {};
    case Qt::ForegroundRole:
        if (m_stale)
            return QBrush(QColor(0x80, 0x80, 0x80));
        return {};
    case Qt::TextAlignmentRole:
        if (column == Column::Generation || column == Column::HeldFor || column == Column::ExpiresIn ||
            column == Column::Queue || column == Column::Pending)
            return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
        return {};
    case Roles::EnvironmentName:
        return text(r.name);
    case Roles::Frozen:
        return r.frozen;
    case Roles::ExpiresAtMs:
        return r.leaseExpiresAt ? QVariant(qint64(r.leaseExpiresAt->millis())) : QVariant();
    case Roles::RemainingMs:
        return r.leaseExpiresAt ? QVariant(qint64(r.leaseExpiresAt->millis() - m_now)) : QVariant();
    case Roles::HolderToken:
        return optionalNumber(r.holderToken);
    case Roles::CurrentGeneration:
        return optionalNumber(r.currentGeneration);
    case Roles::PendingDecisions:
        return qint64(pending);
    case Roles::NeedsMe:
        return needsMe;
    case Roles::Group:
        return text(r.group);
    case Roles::Attention: {
        QStringList summaries;
        for (const auto& a : r.attention)
            summaries << text(a.summary);
        return summaries;
    }
    case Roles::AttentionReasons: {
        QStringList reasons;
        for (const auto& a : r.attention)
            reasons << text(a.reason);
        return reasons;
    }
    default:
        return {};
    }
}

QVariant EnvironmentsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole) {
        switch (Column(section)) {
        case Column::HeldFor:
            return tr("How long the live lease has been held, on the server's clock");
        case Column::ExpiresIn:
            return tr("How long until the live lease expires unless its holder renews it");
        case Column::Pending:
            return tr("Supersession and promotion requests awaiting a release manager's decision");
        default:
            return {};
        }
    }
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (Column(section)) {
    case Column::Environment:
        return tr("Environment");
    case Column::CurrentRelease:
        return tr("Current release");
    case Column::Generation:
        return tr("Generation");
    case Column::PublishedBy:
        return tr("Published by");
    case Column::PublishedAt:
        return tr("Published at");
    case Column::LeaseHolder:
        return tr("Lease holder");
    case Column::HeldFor:
        return tr("Held for");
    case Column::ExpiresIn:
        return tr("Expires in");
    case Column::Queue:
        return tr("Queue");
    case Column::Pending:
        return tr("Open requests");
    case Column::Policy:
        return tr("Policy");
    case Column::Frozen:
        return tr("Frozen");
    case Column::Count:
        break;
    }
    return {};
}

QHash<int, QByteArray> EnvironmentsModel::roleNames() const
{
    auto names = QAbstractTableModel::roleNames();
    names.insert(Roles::EnvironmentName, QByteArrayLiteral("environmentName"));
    names.insert(Roles::Frozen, QByteArrayLiteral("frozen"));
    names.insert(Roles::ExpiresAtMs, QByteArrayLiteral("expiresAtMs"));
    names.insert(Roles::RemainingMs, QByteArrayLiteral("remainingMs"));
    names.insert(Roles::HolderToken, QByteArrayLiteral("holderToken"));
    names.insert(Roles::CurrentGeneration, QByteArrayLiteral("currentGeneration"));
    names.insert(Roles::PendingDecisions, QByteArrayLiteral("pendingDecisions"));
    names.insert(Roles::NeedsMe, QByteArrayLiteral("needsMe"));
    names.insert(Roles::Group, QByteArrayLiteral("group"));
    names.insert(Roles::Attention, QByteArrayLiteral("attention"));
    names.insert(Roles::AttentionReasons, QByteArrayLiteral("attentionReasons"));
    return names;
}

QString EnvironmentsModel::formatCountdown(std::int64_t remainingMs)
{
    if (remainingMs <= 0)
        return tr("expired");
    return wholeSeconds((remainingMs + 999) / 1000);
}

QString EnvironmentsModel::formatHeld(std::int64_t heldMs)
{
    // A server clock a little behind the acquisition's stamp is "0 s", not negative.
    return wholeSeconds(std::max<std::int64_t>(0, heldMs) / 1000);
}

} // namespace relctl::ui
