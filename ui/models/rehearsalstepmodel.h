#pragma once

// The live step log of the console's Rehearsals page: one row per step the
// rehearsal engine reported (what an actor did and what came of it, or an
// event the scratch database recorded), appended as they arrive.

#include "relctl/rehearsal.h"

#include <QAbstractTableModel>
#include <vector>

namespace relctl::ui {

class RehearsalStepModel final : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum class Column : int {
        Time,
        Scenario,
        Actor,
        Action,
        Outcome,
        Reason,
        Token,
        Generation,
        Detail,
        Count
    };
    // Unscoped so views can pass it straight to data(); qualify it as Roles::X.
    enum Roles : int {
        Refusal = Qt::UserRole + 1, // bool, on every column
    };

    using QAbstractTableModel::QAbstractTableModel;

    void appendStep(const relctl::rehearsal::Step& step);
    void clear();
    const std::vector<relctl::rehearsal::Step>& steps() const { return m_steps; }

    // A step is a refusal when the protocol said no: it names a reason.
    static bool isRefusal(const relctl::rehearsal::Step& step);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<relctl::rehearsal::Step> m_steps;
};

} // namespace relctl::ui
