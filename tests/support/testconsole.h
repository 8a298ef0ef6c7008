#pragma once

// The release console as release-console runs it, on a test database: a
// session on a PostgresBackend and its main window, shown and started.

#include "consolesession.h"
#include "mainwindow.h"
#include "postgresbackend.h"
#include "testdatabase.h"

#include <memory>

struct TestConsole
{
    explicit TestConsole(const TestDatabase& db) : TestConsole(db.dsn()) {}
    // The console of another login (approvals count once per login).
    explicit TestConsole(const std::string& dsn)
        : session(std::make_unique<relctl::ui::PostgresBackend>(
              relctl::ui::ConnectionTarget::fromDsn(QString::fromStdString(dsn)), false)),
          window(&session)
    {
        window.show();
        session.start();
    }

    relctl::ui::ConsoleSession session;
    relctl::ui::MainWindow window;
};
