// release-console: the Qt Widgets application for release managers and
// incident reviewers, over the same core as relctl.

#include "connectiontarget.h"
#include "consolesession.h"
#include "consolestart.h"
#include "demoopening.h"
#include "mainwindow.h"
#include "passwordprompt.h"
#include "postgresbackend.h"
#include "relctl/version.h"
#include "startupreport.h"
#include "timelinewidget.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QSettings>
#include <QTimer>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace {

struct Options
{
    QCommandLineOption dsn{QStringLiteral("dsn"),
                           QStringLiteral("libpq connection string or URI (default: the settings, "
                                          "$RELCTL_DSN, else the embedded database)"),
                           QStringLiteral("conninfo")};
    QCommandLineOption demo{
        QStringLiteral("demo"),
        QStringLiteral("Open the demo: a week's history in a database of its own beside the embedded one "
                       "(seeded on first use, and again once a day old), whatever connection is saved; "
                       "refused with --dsn")};
    QCommandLineOption screenshot{
        QStringLiteral("screenshot"),
        QStringLiteral("Render the main window after loading to FILE (PNG), then exit"),
        QStringLiteral("file")};
};

void describe(QCommandLineParser& parser, const Options& o)
{
    QCoreApplication::setOrganizationName(QStringLiteral("relctl"));
    QCoreApplication::setApplicationName(QStringLiteral("release-console"));
    QCoreApplication::setApplicationVersion(QString::fromStdString(relctl::describedVersion()));
    parser.setApplicationDescription(QStringLiteral("relctl release console"));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOptions({o.dsn, o.demo, o.screenshot});
}

// --help and --version print and exit: they need no display, so they are
// answered before the QApplication, which cannot start without one.
bool onlyDescribes(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i)
        for (const char* word : {"-h", "--help", "--help-all", "-v", "--version"})
            if (std::strcmp(argv[i], word) == 0)
                return true;
    return false;
}

// Whether Qt can open a window: without a display its default platform
// plugin aborts the process (exit 134) with a message about xcb.
bool hasDisplay(int argc, char** argv)
{
    for (const char* name : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"})
        if (qEnvironmentVariableIsSet(name))
            return true;
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "-platform") == 0 || std::strcmp(argv[i], "--platform") == 0)
            return true;
    return false;
}

} // namespace

int main(int argc, char** argv)
{
    // Connection attempts and calls are bounded by core (connect_timeout
    // 5 s unless PGCONNECT_TIMEOUT or the connection string says otherwise).
    setenv("PGAPPNAME", "release-console", 0);
    const Options options;
    const QCommandLineOption& dsn = options.dsn;
    const QCommandLineOption& demo = options.demo;
    const QCommandLineOption& screenshot = options.screenshot;
    if (onlyDescribes(argc, argv)) {
        QCoreApplication headless(argc, argv);
        QCommandLineParser parser;
        describe(parser, options);
        parser.process(headless); // prints, and exits (2 for a bad option beside them)
        return 0;
    }
    if (!hasDisplay(argc, argv)) {
        // Said in one line, a bad option first: a person at an ssh prompt or
        // a CI log reads it, not Qt's abort.
        QCoreApplication headless(argc, argv);
        QCommandLineParser parser;
        describe(parser, options);
        if (!parser.parse(QCoreApplication::arguments())) {
            std::fprintf(stderr, "release-console: %s\n", qPrintable(parser.errorText()));
            return 2;
        }
        std::fprintf(stderr, "release-console: no display (neither DISPLAY nor WAYLAND_DISPLAY is set); "
                             "QT_QPA_PLATFORM=offscreen renders without one, for --screenshot\n");
        return 2;
    }
    QApplication app(argc, argv);
    QCommandLineParser parser;
    describe(parser, options);
    // A bad option is said on stderr and, for a console started from a
    // desktop menu, in a dialog.
    if (!parser.parse(QCoreApplication::arguments()))
        return relctl::ui::refuseToStart(parser.errorText(), 2, !parser.isSet(screenshot));

    using relctl::ui::ConnectionTarget;
    {
        // An older version saved the password in the clear: this run keeps
        // it in memory and the file no longer holds it.
        QSettings settings;
        ConnectionTarget::removeSavedPassword(settings);
    }
    ConnectionTarget target = parser.isSet(dsn) ? ConnectionTarget::fromDsn(parser.value(dsn))
                                                : ConnectionTarget::load(QSettings());
    if (parser.isSet(demo)) {
        // The demo's history is fabricated and the audit trail is
        // append-only: it lives in a database of its own, which nothing but
        // --demo opens. The saved connection, $RELCTL_DSN and PG* variables
        // are left for the next run; only --dsn on the same command line
        // contradicts --demo, and is refused before anything connects.
        if (const QString refusal = relctl::ui::demoRefusal(target, parser.isSet(dsn)); !refusal.isEmpty())
            return relctl::ui::refuseToStart(refusal, 2, !parser.isSet(screenshot));
        target = ConnectionTarget::demo();
    }
    relctl::ui::ConsoleSession session(
        std::make_unique<relctl::ui::PostgresBackend>(target, parser.isSet(demo)));
    // Connecting starts before the window is built: the server opens its
    // sessions while this thread builds the widgets (20 ms sooner usable at
    // 2,000 environments). Nothing it answers is seen before the window
    // exists: answers are queued signals, handled once the event loop runs.
    session.start();
    relctl::ui::MainWindow window(&session);
    window.setConnectionTarget(target);
    window.setDemo(parser.isSet(demo));
    // A person's console keeps the docks and size they left; a screenshot
    // shows the console as it first opens.
    window.setRemembersLayout(!parser.isSet(screenshot));
    if (parser.isSet(demo))
        relctl::ui::openOnLastDay(&session, &window);
    // A server that wants a password no file gave: asked for, masked.
    if (!parser.isSet(screenshot))
        new relctl::ui::PasswordPrompt(&session, &window);
    // RELCTL_CONSOLE_REPORT=FILE (the console benchmark): when the window
    // became usable, written to FILE. Off unless set.
    relctl::ui::StartupReport::fromEnvironment(&window, &session);
    window.show();

    if (parser.isSet(screenshot)) {
        // Render once the first environments and timeline slice are in (or
        // after a bound, showing whatever state the console is in).
        const QString file = parser.value(screenshot);
        auto shoot = [&window, file] {
            const bool saved = window.grab().save(file, "PNG");
            QCoreApplication::exit(saved ? 0 : 1);
        };
        int loaded = 0;
        auto progress = [&loaded, shoot] {
            if (++loaded == 2)
                QTimer::singleShot(500, shoot);
        };
        QObject::connect(&session, &relctl::ui::ConsoleSession::environmentsLoaded, &window, progress,
                         Qt::SingleShotConnection);
        QObject::connect(&session, &relctl::ui::ConsoleSession::timelineReady, &window, progress,
                         Qt::SingleShotConnection);
        QTimer::singleShot(60000, &window, shoot);
    }
    return QApplication::exec();
}
