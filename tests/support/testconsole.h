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
    explicit TestConsole(const TestDatabase& db)
        : session(std::make_unique<relctl::ui::PostgresBackend>(
              relctl::ui::ConnectionTarget::fromDsn(QString::fromStdString(db.dsn())), false)),
          window(&session)
    {
        window.show();
        session.start();
    }

    relctl::ui::ConsoleSession session;
    relctl::ui::MainWindow window;
};
