#pragma once

// Finding and selecting rows in the release console's views from a widget
// test, the way an operator's click would, whatever backend the window is on:
// the tests over PostgreSQL and over the fake look rows up the same way.

#include "auditmodel.h"
#include "environmentsview.h"
#include "mainwindow.h"

#include <QAbstractItemModel>
#include <QTableView>
#include <optional>

// Selects the environment `name` in the Environments view (if it shows it).
inline void selectEnvironment(relctl::ui::MainWindow& window, const QString& name)
{
    QTableView* table = window.environmentsView()->table();
    for (int row = 0; row < table->model()->rowCount(); ++row)
        if (table->model()->index(row, 0).data().toString() == name)
            table->selectRow(row);
}

// The model row showing the event, if loaded.
inline std::optional<int> auditRow(const relctl::ui::AuditModel* model, qint64 eventId)
{
    for (int row = 0; row < model->rowCount(); ++row)
        if (const relctl::Event* e = model->eventAt(row); e && e->id == eventId)
            return row;
    return std::nullopt;
}
