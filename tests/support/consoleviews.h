#pragma once

// Finding and selecting rows in the release console's views from a widget
// test, the way an operator's click would, whatever backend the window is on:
// the tests over PostgreSQL and over the fake look rows up the same way.

#include "auditmodel.h"
#include "environmentsview.h"
#include "mainwindow.h"

#include <QAbstractItemModel>
#include <QAbstractItemView>
#include <QItemSelectionModel>
#include <optional>

// The index showing `name` in the first column under `parent`, at any depth
// (the Environments view may group environments under their groups).
inline QModelIndex findEnvironment(const QAbstractItemModel* model, const QString& name,
                                   const QModelIndex& parent = {})
{
    for (int row = 0; row < model->rowCount(parent); ++row) {
        const QModelIndex index = model->index(row, 0, parent);
        if (index.data().toString() == name)
            return index;
        if (const QModelIndex inside = findEnvironment(model, name, index); inside.isValid())
            return inside;
    }
    return {};
}

// Selects the environment `name` in the Environments view (if it shows it).
inline void selectEnvironment(relctl::ui::MainWindow& window, const QString& name)
{
    QAbstractItemView* view = window.environmentsView()->table();
    const QModelIndex index = findEnvironment(view->model(), name);
    if (!index.isValid())
        return;
    view->selectionModel()->setCurrentIndex(index,
                                            QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
}

// The model row showing the event, if loaded.
inline std::optional<int> auditRow(const relctl::ui::AuditModel* model, qint64 eventId)
{
    for (int row = 0; row < model->rowCount(); ++row)
        if (const relctl::Event* e = model->eventAt(row); e && e->id == eventId)
            return row;
    return std::nullopt;
}
