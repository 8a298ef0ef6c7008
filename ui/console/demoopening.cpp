#include "demoopening.h"

#include "consolesession.h"
#include "mainwindow.h"
#include "timelinewidget.h"

#include <memory>

namespace relctl::ui {

void openOnLastDay(ConsoleSession* session, MainWindow* window)
{
    struct State
    {
        bool zoomed = false;
        QMetaObject::Connection connection;
    };
    auto state = std::make_shared<State>();
    state->connection = QObject::connect(
        session, &ConsoleSession::timelineReady, window, [window, state](const relctl::TimelineSlice& slice) {
            if (!slice.historyLast)
                return; // nothing written yet
            constexpr qint64 hour = 3600 * 1000;
            TimelineWidget* timeline = window->timeline();
            if (!state->zoomed) {
                state->zoomed = true;
                timeline->setFollowNow(false);
                timeline->setVisibleRange(slice.serverNow.millis() - 23 * hour,
                                          slice.serverNow.millis() + hour);
                return; // the day's slice follows
            }
            // Markers come by environment, then time: the newest is looked for.
            const relctl::TimelineMarker* stale = nullptr;
            for (const relctl::TimelineMarker& m : slice.markers)
                if (m.kind == "refusal" && m.label.rfind("STALE_GENERATION", 0) == 0 &&
                    (!stale || m.at > stale->at))
                    stale = &m;
            if (!stale)
                return;
            QObject::disconnect(state->connection);
            window->selectEvent(stale->eventId, stale->at.millis(), true);
        });
}

} // namespace relctl::ui
