#include "rehearsalstepmodel.h"

#include "timeformat.h"

#include <QBrush>
#include <QColor>

namespace relctl::ui {

namespace {

// The audit browser's red, so a refusal looks the same on every page.
const QColor refusalRed(0xdc, 0x32, 0x2f);
// A faint wash of it behind the whole row: the row is found at a glance while
// the text keeps the palette's colours and the selection stays visible.
const QColor refusalTint(0xdc, 0x32, 0x2f, 36);

QString text(const std::string& s)
{
    return QString::fromStdString(s);
}

QVariant number(const std::optional<std::int64_t>& n)
{
    return n ? QVariant(qint64(*n)) : QVariant();
}

QVariant display(const relctl::rehearsal::Step& s, RehearsalStepModel::Column column)
{
    using Column = RehearsalStepModel::Column;
    switch (column) {
    case Column::Time:
        // Since the scenario started: the story's pace is what a reader follows.
        return QStringLiteral("+%1 s").arg(static_cast<double>(s.elapsedMs) / 1000.0, 0, 'f', 3);
    case Column::Scenario:
        return text(s.scenario);
    case Column::Actor:
        return text(s.actor);
    case Column::Action:
        return text(s.action);
    case Column::Outcome:
        return text(s.outcome);
    case Column::Reason:
        return text(s.reason);
    case Column::Token:
        return number(s.token);
    case Column::Generation:
        return number(s.generation);
    case Column::Detail:
        return text(s.detail);
    case Column::Count:
        break;
    }
    return {};
}

} // namespace

bool RehearsalStepModel::isRefusal(const relctl::rehearsal::Step& step)
{
    return !step.reason.empty() || step.outcome == "refused" || step.outcome == "rejected";
}

void RehearsalStepModel::appendStep(const relctl::rehearsal::Step& step)
{
    const int row = static_cast<int>(m_steps.size());
    beginInsertRows({}, row, row);
    m_steps.push_back(step);
    endInsertRows();
}

void RehearsalStepModel::clear()
{
    beginResetModel();
    m_steps.clear();
    endResetModel();
}

int RehearsalStepModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_steps.size());
}

int RehearsalStepModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(Column::Count);
}

QVariant RehearsalStepModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const relctl::rehearsal::Step& s = m_steps[static_cast<std::size_t>(index.row())];
    const auto column = Column(index.column());
    switch (role) {
    case Qt::DisplayRole:
        return display(s, column);
    case Qt::ToolTipRole:
        if (column == Column::Time && s.serverAt)
            return tr("Recorded by the scratch database at %1").arg(formatTime(*s.serverAt, true));
        // The full text, for cells a narrow column elides.
        return display(s, column);
    case Qt::ForegroundRole:
        if (isRefusal(s) && (column == Column::Outcome || column == Column::Reason))
            return QBrush(refusalRed);
        return {};
    case Qt::BackgroundRole:
        return isRefusal(s) ? QVariant(QBrush(refusalTint)) : QVariant();
    case Qt::TextAlignmentRole:
        if (column == Column::Time || column == Column::Token || column == Column::Generation)
            return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
        return {};
    case Roles::Refusal:
        return isRefusal(s);
    default:
        return {};
    }
}

QVariant RehearsalStepModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (Column(section)) {
    case Column::Time:
        return tr("Time");
    case Column::Scenario:
        return tr("Scenario");
    case Column::Actor:
        return tr("Actor");
    case Column::Action:
        return tr("Action");
    case Column::Outcome:
        return tr("Outcome");
    case Column::Reason:
        return tr("Reason");
    case Column::Token:
        return tr("Token");
    case Column::Generation:
        return tr("Generation");
    case Column::Detail:
        return tr("Detail");
    case Column::Count:
        break;
    }
    return {};
}

} // namespace relctl::ui
