#include "queuemodel.h"

#include "timeformat.h"

#include <QBrush>
#include <QColor>
#include <algorithm>

namespace relctl::ui {

namespace {

QString text(const std::string& s)
{
    return QString::fromStdString(s);
}

} // namespace

QueueModel::QueueModel(QObject* parent) : QAbstractTableModel(parent) {}

void QueueModel::setEnvironments(const std::vector<relctl::EnvironmentRow>& environments)
{
    m_environments = environments;
    for (const relctl::EnvironmentRow& e : environments)
        m_now = std::max<qint64>(m_now, e.serverNow.millis());
    rebuild();
}

void QueueModel::setEnvironmentFilter(const QString& env)
{
    if (env == m_filter)
        return;
    m_filter = env;
    rebuild();
}

void QueueModel::rebuild()
{
    beginResetModel();
    m_rows.clear();
    for (const relctl::EnvironmentRow& e : m_environments) {
        if (!m_filter.isEmpty() && text(e.name) != m_filter)
            continue;
        for (const relctl::QueuedCandidate& c : e.queue)
            m_rows.push_back(Row{e.name, e.policy, c});
    }
    endResetModel();
}

void QueueModel::setNow(qint64 serverNowEstimate)
{
    if (m_stale)
        return;
    m_now = serverNowEstimate;
    if (!m_rows.empty()) {
        const int column = int(Column::Waiting);
        emit dataChanged(index(0, column), index(rowCount() - 1, column), {Qt::DisplayRole});
    }
}

void QueueModel::setStale(bool stale)
{
    if (stale == m_stale)
        return;
    m_stale = stale;
    if (!m_rows.empty())
        emit dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1));
}

QString QueueModel::standing(const relctl::QueuedCandidate& c, const std::string& policy)
{
    if (c.wins)
        return tr("wins supersession #%1 if approved").arg(*c.wins);
    if (c.skippedBy)
        return c.position == 1 ? tr("next; skipped if supersession #%1 is approved").arg(*c.skippedBy)
                               : tr("skipped if supersession #%1 is approved").arg(*c.skippedBy);
    if (c.position == 1)
        return tr("next");
    return policy == "newest" ? tr("waits: the newest generation goes first")
                              : tr("waits: every generation adopts in order");
}

int QueueModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int QueueModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(Column::Count);
}

QVariant QueueModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row& r = m_rows[std::size_t(index.row())];
    const relctl::QueuedCandidate& c = r.candidate;
    const auto column = Column(index.column());
    switch (role) {
    case Qt::DisplayRole:
        switch (column) {
        case Column::Environment:
            return text(r.env);
        case Column::Position:
            return qint64(c.position);
        case Column::Job:
            return text(c.job);
        case Column::Release:
            return text(c.release);
        case Column::Generation:
            return qint64(c.generation);
        case Column::Waiting:
            return formatDuration(std::max<qint64>(0, m_now - c.queuedAt.millis()));
        case Column::Standing:
            return standing(c, r.policy);
        case Column::Count:
            break;
        }
        return {};
    case Qt::ToolTipRole:
        return tr("Candidate %1: job %2, release %3, generation %4\nQueued at %5%6%7%8")
            .arg(c.candidate)
            .arg(text(c.job), text(c.release))
            .arg(c.generation)
            .arg(formatTime(c.queuedAt), c.host ? tr("\nHost %1").arg(text(*c.host)) : QString(),
                 c.jobUrl ? tr("\n%1").arg(text(*c.jobUrl)) : QString(),
                 m_stale ? tr("\n(Not current: the database is unreachable.)") : QString());
    case Qt::ForegroundRole:
        return m_stale ? QVariant(QBrush(QColor(0x80, 0x80, 0x80))) : QVariant();
    case Qt::TextAlignmentRole:
        if (column == Column::Position || column == Column::Generation || column == Column::Waiting)
            return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
        return {};
    case Roles::EnvironmentName:
        return text(r.env);
    case Roles::Candidate:
        return qint64(c.candidate);
    default:
        return {};
    }
}

QVariant QueueModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (Column(section)) {
    case Column::Environment:
        return tr("Environment");
    case Column::Position:
        return tr("#");
    case Column::Job:
        return tr("Job");
    case Column::Release:
        return tr("Release");
    case Column::Generation:
        return tr("Generation");
    case Column::Waiting:
        return tr("Waiting for");
    case Column::Standing:
        return tr("Standing");
    case Column::Count:
        break;
    }
    return {};
}

} // namespace relctl::ui
