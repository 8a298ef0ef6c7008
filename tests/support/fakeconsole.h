#pragma once

// The release console's window over the in-memory backend (FakeBackend), for
// the widget tests that need no database: the fake, the session that owns it
// and the main window, built the same way for each of them. A test's own
// console derives from it, fills `fake` in its constructor and then calls
// start(). (TestConsole, testconsole.h, is the same over PostgreSQL.)

#include "consolesession.h"
#include "fakebackend.h"
#include "mainwindow.h"

#include <chrono>
#include <memory>

struct FakeConsole
{
    FakeConsole()
        : fake(new relctl::ui::FakeBackend), session(std::unique_ptr<relctl::ui::ConsoleBackend>(fake)),
          window(&session)
    {
    }

    // Shows the window and starts the session on what the fake holds by now.
    void start()
    {
        // The debounce of a reload after events, shortened: waited for at every start.
        session.setReloadDelay(std::chrono::milliseconds(20));
        window.show();
        session.start();
    }

    relctl::ui::FakeBackend* fake; // owned by the session
    relctl::ui::ConsoleSession session;
    relctl::ui::MainWindow window;
};
