// What runs on this machine: the embedded default database, the request
// secrets, rehearsals on a scratch database, and the completion scripts.

#include "context.h"
#include "dbcommand.h"
#include "grammar.h"
#include "groups.h"
#include "reference.h"
#include "rehearse.h"
#include "relctl/rehearsal.h"
#include "statecommand.h"

#include <algorithm>
#include <iostream>

namespace relctl::cli::groups {

namespace {

// --demo: release-console --demo's own cluster instead, which only the
// console starts (it writes the demo's week first).
void demoFlag(CLI::App* c)
{
    flag(c, "demo", "the demo's cluster (release-console --demo) instead of the default");
}

// db status|start|stop|path (dbcommand.h).
int db(CommandContext& c)
{
    return dbCommand(c.word(1), c.args().has("demo"), c.out());
}

void buildStatePrune(CLI::App* c)
{
    duration(c, "older-than", true,
             "unused for longer than D (default: $RELCTL_STATE_RETENTION; at least 1h)");
    positiveInt(c, "max-files", "N",
                "then the least recently used beyond N (default: $RELCTL_STATE_MAX_FILES)");
    flag(c, "dry-run", "only say what would be removed");
    c->footer("Nothing used within the last hour is removed. Every use of an op id's secret refreshes it;\n"
              "relctl also prunes on use, at most once an hour.");
}

// state show|prune (statecommand.h).
int state(CommandContext& c)
{
    return stateCommand(c.word(1), c.args(), c.out());
}

std::string rehearsalFooter()
{
    std::string text = "Scenarios:\n";
    for (const rehearsal::Scenario& s : rehearsal::scenarios())
        text +=
            "  " + s.name + std::string(12 - std::min<std::size_t>(s.name.size(), 11), ' ') + s.title + "\n";
    return text + "The global --dsn names the server the scratch database is created on (the login needs\n"
                  "CREATEDB and superuser); without one, the embedded default database's server.\n"
                  "Exit 0 when every invariant held, 10 when one broke, 2 for invalid input.";
}

void buildRehearse(CLI::App* c)
{
    c->add_option("SCENARIO", "scenarios to play (default: all)")->expected(0, -1)->allow_extra_args();
    flag(c, "list", "name and explain the scenarios");
    value(c, "like", "ENV", "copy this environment's queue policy, supersede mode and serialization")
        ->check(rule(environmentNameProblem));
    flag(c, "keep", "keep the scratch database afterwards");
    value(c, "dsn", "CONNINFO", "rehearse in this existing, empty test database instead of a scratch one");
    duration(c, "ttl", true, "the scratch environments' lease TTL (default 1500ms)");
    value(c, "report", "FILE", "write a self-contained HTML report");
    value(c, "relctl", "PATH", "the relctl executable the jobs run (default: this one)");
    c->footer(rehearsalFooter());
}

int rehearse(CommandContext& c)
{
    return rehearseCommand(RehearseContext{c.args(), c.out(), c.namedDsn()});
}

void buildCompletion(CLI::App* c)
{
    positional(c, "SHELL", "bash or zsh")->check(oneOf({"bash", "zsh"}));
}

int completion(CommandContext& c)
{
    CommandLine grammar;
    std::cout << completionScript(grammar.reference(), c.args().positional(0, "SHELL"));
    return 0;
}

constexpr Command kDb[] = {
    {"status", "where it is and whether it runs", demoFlag, db},
    {"start", "start it (created on first use)", nullptr, db},
    {"stop", "stop its server", demoFlag, db},
    {"path", "print its directory", demoFlag, db},
};

constexpr Command kState[] = {
    {"show", "where they are, how many, and the retention", nullptr, state},
    {"prune", "remove the secrets no retry will need any more", buildStatePrune, state},
};

constexpr Command kLocal[] = {
    {"db", "the embedded default database", nullptr, nullptr, kDb},
    {"state", "the request secrets kept on this machine ($RELCTL_STATE_DIR)", nullptr, nullptr, kState},
    {"rehearse", "play failure scenarios on a scratch database and check the invariants", buildRehearse,
     rehearse},
    {"completion", "print the shell completion script (bash or zsh), generated from this grammar",
     buildCompletion, completion},
};

} // namespace

std::span<const Command> local()
{
    return kLocal;
}

} // namespace relctl::cli::groups
