#include "rehearsalrunner.h"

#include "relctl/embedded.h"

#include <exception>
#include <utility>

namespace relctl::ui {

namespace {

// The engine's observer, called on the run's thread. Every callback becomes a
// queued call on the runner, so its signals are emitted on the GUI thread, in
// the order the engine reported them; a call still queued when the runner is
// deleted is dropped with it.
class Forwarder final : public relctl::rehearsal::Observer
{
public:
    explicit Forwarder(RehearsalRunner* runner) : m_runner(runner) {}

    void scenarioStarted(const relctl::rehearsal::Scenario& scenario, int index, int count) override
    {
        post([scenario, index, count](RehearsalRunner* r) {
            emit r->scenarioStarted(scenario, index, count);
        });
    }
    void step(const relctl::rehearsal::Step& step) override
    {
        post([step](RehearsalRunner* r) { emit r->stepLogged(step); });
    }
    void timeline(const std::string& scenario, const relctl::TimelineSlice& slice) override
    {
        post([name = QString::fromStdString(scenario), slice](RehearsalRunner* r) {
            emit r->timelineUpdated(name, slice);
        });
    }
    void scenarioFinished(const relctl::rehearsal::ScenarioResult& result) override
    {
        post([result](RehearsalRunner* r) { emit r->scenarioFinished(result); });
    }

private:
    template <typename Call> void post(Call&& call)
    {
        QMetaObject::invokeMethod(
            m_runner, [runner = m_runner, call = std::forward<Call>(call)] { call(runner); },
            Qt::QueuedConnection);
    }

    RehearsalRunner* m_runner;
};

} // namespace

RehearsalRunner::RehearsalRunner(QObject* parent) : QObject(parent)
{
    // For queued connections and spies of the signals' receivers.
    qRegisterMetaType<relctl::rehearsal::Scenario>();
    qRegisterMetaType<relctl::rehearsal::Step>();
    qRegisterMetaType<relctl::rehearsal::ScenarioResult>();
    qRegisterMetaType<relctl::rehearsal::Report>();
    qRegisterMetaType<relctl::TimelineSlice>();
}

RehearsalRunner::~RehearsalRunner()
{
    m_cancel = true;
    if (m_thread.joinable())
        m_thread.join();
}

bool RehearsalRunner::start(const ConnectionTarget& target, relctl::rehearsal::Options options)
{
    if (m_running)
        return false;
    m_running = true;
    m_cancel = false;
    if (options.relctl.empty())
        options.relctl = m_relctl;
    m_thread = std::thread([this, target, options = std::move(options)]() mutable {
        relctl::rehearsal::Report report;
        QString error;
        try {
            const ConnectionTarget server = target.effective();
            if (server.kind == ConnectionTarget::Kind::Embedded ||
                server.kind == ConnectionTarget::Kind::Demo) {
                // As `relctl rehearse` does: the administrator creates the
                // scratch database; the manager's database is what --like copies.
                EmbeddedCluster cluster = server.kind == ConnectionTarget::Kind::Demo
                                              ? EmbeddedCluster::demoForCurrentUser()
                                              : EmbeddedCluster::forCurrentUser();
                options.likeConninfo = cluster.ensureRunning();
                options.server = cluster.administratorConninfo();
            } else {
                options.server = server.dsn.toStdString();
            }
            Forwarder forwarder(this);
            report = relctl::rehearsal::run(options, forwarder, m_cancel);
        } catch (const std::exception& e) {
            // Only before the first scenario (a bad option, no server, no
            // CREATEDB): later failures are the report's failed scenarios.
            error = QString::fromStdString(e.what());
        }
        QMetaObject::invokeMethod(
            this, [this, report = std::move(report), error] { conclude(report, error); },
            Qt::QueuedConnection);
    });
    return true;
}

void RehearsalRunner::cancel()
{
    if (m_running)
        m_cancel = true;
}

void RehearsalRunner::conclude(const relctl::rehearsal::Report& report, const QString& error)
{
    // The thread posted this as its last act: joining waits only for it to return.
    if (m_thread.joinable())
        m_thread.join();
    m_running = false;
    emit finished(report, error);
}

} // namespace relctl::ui
