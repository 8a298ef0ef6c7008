#include "rehearse.h"

#include "relctl/embedded.h"
#include "relctl/error.h"
#include "relctl/rehearsal.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace relctl::cli {

namespace {

std::atomic<bool> g_cancel{false};

extern "C" void onInterrupt(int /*sig*/)
{
    g_cancel = true;
}

// The live log on stderr: one line per step, as it happens.
class StderrLog final : public rehearsal::Observer
{
public:
    void scenarioStarted(const rehearsal::Scenario& scenario, int index, int count) override
    {
        std::cerr << "\n== " << scenario.name << " (" << index + 1 << "/" << count << "): " << scenario.title
                  << "\n";
    }

    void step(const rehearsal::Step& s) override
    {
        std::ostringstream line;
        line << std::fixed << std::setprecision(3) << "  +" << static_cast<double>(s.elapsedMs) / 1000.0
             << "s  " << std::left << std::setw(10) << s.actor << std::setw(40) << s.action << " "
             << s.outcome;
        if (!s.reason.empty())
            line << ' ' << s.reason;
        if (s.token)
            line << "  token " << *s.token;
        if (s.generation)
            line << "  generation " << *s.generation;
        if (!s.detail.empty())
            line << "  (" << s.detail << ")";
        std::cerr << escapeControl(line.str()) << '\n';
    }

    void scenarioFinished(const rehearsal::ScenarioResult& result) override
    {
        std::cerr << "   " << (result.passed ? "passed" : "FAILED") << " in " << result.durationMs << " ms\n";
    }
};

std::string plainReport(const rehearsal::Report& report)
{
    std::ostringstream out;
    for (const rehearsal::ScenarioResult& s : report.scenarios) {
        out << (s.passed ? "PASS " : "FAIL ") << s.name << " (" << s.durationMs << " ms)\n";
        if (!s.error.empty())
            out << "  error: " << s.error << "\n";
        for (const history::Verdict& v : s.invariants)
            out << "  " << (v.passed ? "ok   " : "FAIL ") << v.name << ": " << v.detail << "\n";
    }
    if (report.cancelled)
        out << "cancelled\n";
    out << (report.passed() ? "all invariants held" : "a rehearsal failed") << " (" << report.scenarios.size()
        << " scenario(s), database " << report.database << (report.dropped ? ", dropped" : ", kept") << ")\n";
    return out.str();
}

std::string scenarioList()
{
    std::string out;
    for (const rehearsal::Scenario& s : rehearsal::scenarios())
        out += s.name + ": " + s.title + "\n    " + s.explanation + "\n";
    return out;
}

} // namespace

int rehearseCommand(const RehearseContext& context)
{
    const Arguments& o = context.arguments;
    if (o.has("list")) {
        nlohmann::json list = nlohmann::json::array();
        for (const rehearsal::Scenario& s : rehearsal::scenarios())
            list.push_back({{"name", s.name}, {"title", s.title}, {"explanation", s.explanation}});
        return context.output.success({{"scenarios", list}}, scenarioList());
    }

    rehearsal::Options options;
    options.scenarios = o.positionals();
    options.like = o.get("like");
    options.keep = o.has("keep");
    if (auto dsn = o.get("dsn"))
        options.dsn = *dsn;
    if (auto ttl = o.duration("ttl", true))
        options.ttl = *ttl;
    if (auto relctl = o.get("relctl"))
        options.relctl = *relctl;
    if (context.dsn) {
        options.server = *context.dsn;
    } else {
        // The embedded default database: scratch databases are created by its
        // administrator, beside the relctl database --like reads from.
        EmbeddedCluster cluster = EmbeddedCluster::forCurrentUser();
        options.likeConninfo = cluster.ensureRunning();
        options.server = cluster.administratorConninfo();
    }
    const std::optional<std::string> reportPath = o.get("report");
    if (reportPath) {
        std::ofstream probe(*reportPath, std::ios::app);
        if (!probe)
            throwUsage("cannot write the report to " + *reportPath);
    }

    // Ctrl-C (or a cancelled CI job) stops the run at its next step; the
    // scratch database is still dropped.
    struct sigaction action
    {
    };
    action.sa_handler = onInterrupt;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);

    StderrLog log;
    const rehearsal::Report report = rehearsal::run(options, log, g_cancel);
    if (reportPath) {
        std::ofstream out(*reportPath, std::ios::binary | std::ios::trunc);
        out << rehearsal::toHtml(report);
        if (!out)
            throw Error(ExitCode::Internal, "could not write the report to " + *reportPath);
        std::cerr << "report: " << *reportPath << "\n";
    }
    if (context.output.asJson())
        std::cout << dumpJson(rehearsal::toJson(report)) << '\n';
    else
        std::cout << escapeControl(plainReport(report), true);
    if (report.cancelled)
        return 128 + SIGINT;
    return report.passed() ? 0 : static_cast<int>(ExitCode::Violations);
}

} // namespace relctl::cli
