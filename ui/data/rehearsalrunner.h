#pragma once

// Rehearsals from the console: rehearsal::run() on a thread of its own, its
// observer's callbacks delivered on the GUI thread as signals carrying
// values. The engine blocks for seconds (it waits on relctl processes and
// polls the scratch database), so the GUI thread never calls it.
// PostgresBackend runs the session's rehearsals with it.

#include "connectiontarget.h"
#include "metatypes.h"
#include "relctl/rehearsal.h"

#include <QObject>
#include <QString>
#include <atomic>
#include <filesystem>
#include <thread>

namespace relctl::ui {

class RehearsalRunner final : public QObject
{
    Q_OBJECT

public:
    explicit RehearsalRunner(QObject* parent = nullptr);
    // Cancels a run in progress and waits for it, so its scratch database is
    // dropped and its relctl processes are gone before the console exits.
    ~RehearsalRunner() override;
    RehearsalRunner(const RehearsalRunner&) = delete;
    RehearsalRunner& operator=(const RehearsalRunner&) = delete;

    // The relctl executable the actors run when the options name none (by
    // default rehearsal::defaultRelctl(): the one beside release-console).
    void setRelctl(std::filesystem::path relctl) { m_relctl = std::move(relctl); }

    // Starts a rehearsal on the server of `target`: for the embedded database
    // its administrator creates the scratch database (and --like reads the
    // relctl database beside it); for a DSN, that login does, so it needs
    // CREATEDB and superuser. `options.server` and `likeConninfo` are set here,
    // on the run's thread (starting the embedded cluster may take seconds).
    // False, and nothing started, while a run is in progress.
    bool start(const ConnectionTarget& target, relctl::rehearsal::Options options);
    // Stops the run at its next step; finished() follows with a cancelled
    // report once its processes are killed and the scratch database dropped.
    void cancel();
    bool isRunning() const { return m_running; }

signals:
    void scenarioStarted(const relctl::rehearsal::Scenario& scenario, int index, int count);
    void stepLogged(const relctl::rehearsal::Step& step);
    // The scenario's environment as the scratch database has it now.
    void timelineUpdated(const QString& scenario, const relctl::TimelineSlice& slice);
    void scenarioFinished(const relctl::rehearsal::ScenarioResult& result);
    // The run is over. `error` says why it could not start (the report is
    // then empty); isRunning() is already false.
    void finished(const relctl::rehearsal::Report& report, const QString& error);

private:
    void conclude(const relctl::rehearsal::Report& report, const QString& error);

    std::filesystem::path m_relctl;
    std::atomic<bool> m_cancel{false};
    bool m_running = false;
    std::thread m_thread;
};

} // namespace relctl::ui
