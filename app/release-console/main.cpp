// release-console: the Qt Widgets application for release managers and
// incident reviewers, over the same core as relctl.

#include "consolesession.h"
#include "demo.h"
#include "mainwindow.h"
#include "postgresbackend.h"
#include "startupreport.h"
#include "timelinewidget.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QSettings>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>

int main(int argc, char** argv)
{
    // Connection attempts and calls are bounded by core (connect_timeout
    // 5 s unless PGCONNECT_TIMEOUT or the connection string says otherwise).
    setenv("PGAPPNAME", "release-console", 0);
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("relctl"));
    QApplication::setApplicationName(QStringLiteral("release-console"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("relctl release console"));
    parser.addHelpOption();
    const QCommandLineOption dsn(QStringLiteral("dsn"),
                                 QStringLiteral("libpq connection string or URI (default: the settings, "
                                                "$RELCTL_DSN, else the embedded database)"),
                                 QStringLiteral("conninfo"));
    const QCommandLineOption demo(
        QStringLiteral("demo"),
        QStringLiteral("Open the embedded database with a demo history (seeded only there, and only "
                       "while it has no environments); refused when another database is named"));
    const QCommandLineOption screenshot(
        QStringLiteral("screenshot"),
        QStringLiteral("Render the main window after loading to FILE (PNG), then exit"),
        QStringLiteral("file"));
    parser.addOptions({dsn, demo, screenshot});
    parser.process(app);

    using relctl::ui::ConnectionTarget;
    ConnectionTarget target = parser.isSet(dsn) ? ConnectionTarget::fromDsn(parser.value(dsn))
                                                : ConnectionTarget::load(QSettings());
    if (parser.isSet(demo)) {
        // The demo's history is fabricated and the audit trail is
        // append-only: written into a real database it could never be
        // removed. So it goes only into the embedded database, and the run
        // is refused (before anything connects) when --dsn, the saved
        // connection or $RELCTL_DSN / PG* name any other.
        if (const QString refusal = relctl::ui::demoRefusal(target, parser.isSet(dsn)); !refusal.isEmpty()) {
            std::fprintf(stderr, "release-console: %s\n", qPrintable(refusal));
            return 2;
        }
        target = ConnectionTarget::embedded();
    }
    relctl::ui::ConsoleSession session(
        std::make_unique<relctl::ui::PostgresBackend>(target, parser.isSet(demo)));
    relctl::ui::MainWindow window(&session);
    window.setConnectionTarget(target);
    window.setDemo(parser.isSet(demo));
    if (parser.isSet(demo)) {
        // The demo history is written in a second or two: at the default ten
        // minutes it would be one smudge at the right edge. The first slice
        // (read after seeding) fits the view to its markers and stops
        // following, so the story stays put until Follow now is pressed.
        QObject::connect(
            &session, &relctl::ui::ConsoleSession::timelineReady, &window,
            [&window](const relctl::TimelineSlice& slice) {
                if (slice.markers.empty())
                    return;
                const auto [first, last] =
                    std::minmax_element(slice.markers.begin(), slice.markers.end(),
                                        [](const relctl::TimelineMarker& a, const relctl::TimelineMarker& b) {
                                            return a.at < b.at;
                                        });
                const qint64 span = std::max<qint64>(last->at - first->at, 1000);
                window.timeline()->setFollowNow(false);
                window.timeline()->setVisibleRange(first->at - span / 5, last->at + span / 3);
                // And opens on the demo's point: the stale write that was refused.
                const auto refusal =
                    std::find_if(slice.markers.begin(), slice.markers.end(),
                                 [](const relctl::TimelineMarker& m) { return m.kind == "refusal"; });
                if (refusal != slice.markers.end())
                    window.selectEvent(refusal->eventId, refusal->at, true);
            },
            Qt::SingleShotConnection);
    }
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
