// release-console: the Qt Widgets application for release managers and
// incident reviewers, over the same core as relctl.

#include "connectiontarget.h"
#include "consolesession.h"
#include "demoopening.h"
#include "mainwindow.h"
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
                       "(seeded on first use, and again once a day old); refused when another database is "
                       "named")};
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
    QApplication app(argc, argv);
    QCommandLineParser parser;
    describe(parser, options);
    parser.process(app);

    using relctl::ui::ConnectionTarget;
    ConnectionTarget target = parser.isSet(dsn) ? ConnectionTarget::fromDsn(parser.value(dsn))
                                                : ConnectionTarget::load(QSettings());
    if (parser.isSet(demo)) {
        // The demo's history is fabricated and the audit trail is
        // append-only: it lives in a database of its own, which nothing but
        // --demo opens. A run that also names another database (--dsn, the
        // saved connection, $RELCTL_DSN / PG*) is refused before anything
        // connects, rather than leave the user unsure which one they see.
        if (const QString refusal = relctl::ui::demoRefusal(target, parser.isSet(dsn)); !refusal.isEmpty()) {
            std::fprintf(stderr, "release-console: %s\n", qPrintable(refusal));
            return 2;
        }
        target = ConnectionTarget::demo();
    }
    relctl::ui::ConsoleSession session(
        std::make_unique<relctl::ui::PostgresBackend>(target, parser.isSet(demo)));
    relctl::ui::MainWindow window(&session);
    window.setConnectionTarget(target);
    window.setDemo(parser.isSet(demo));
    if (parser.isSet(demo))
        relctl::ui::openOnLastDay(&session, &window);
    // RELCTL_CONSOLE_REPORT=FILE (the console benchmark): when the window
    // became usable, written to FILE. Off unless set.
    relctl::ui::StartupReport::fromEnvironment(&window, &session);
    window.show();
    session.start();

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
