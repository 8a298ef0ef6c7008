// relctl watch: follows the audit trail for the events that need a release
// manager's decision and hands each to a hook, at least once. The work is
// core's (relctl/decisionwatch.h); this is its command line.
#include "context.h"
#include "grammar.h"
#include "groups.h"
#include "relctl/decisionwatch.h"
#include "relctl/embedded.h"
#include "relctl/error.h"

#include <string>

namespace relctl::cli {

namespace groups {

namespace {

void buildWatch(CLI::App* c)
{
    flag(c, "decisions", "follow the events that need a release manager's decision")->required();
    text(c, "exec", "CMD",
         "run CMD through /bin/sh -c for each event, the event as JSON on its stdin (default: print each "
         "event as one JSON line)");
    text(c, "position", "FILE",
         "where the position is kept (default: $XDG_STATE_HOME/relctl/watch/DB-HASH.position, else "
         "~/.local/state/relctl/watch/DB-HASH.position, one per server and database)");
    value(c, "after", "ID",
          "on a first start (no position file), begin after event ID instead of at the "
          "trail's end")
        ->check(rule([](const std::string& v) -> std::optional<std::string> {
            if (v.empty() || v.size() > 18 || v.find_first_not_of("0123456789") != std::string::npos)
                return "invalid value \"" + v + "\": expected an event id (0 or a positive integer)";
            return std::nullopt;
        }));
    flag(c, "from-start", "on a first start, begin at the trail's first event (the same as --after 0)");
    flag(c, "once", "deliver what is pending, then exit (for cron and tests)");
    duration(c, "poll", true,
             "read the trail at least this often (default 5s); announced events wake it "
             "at once");
    std::string kinds = "Events that need a decision (accepted ones only):";
    for (const decisionwatch::DecisionKind& k : decisionwatch::decisionKinds())
        kinds += "\n  " + std::string(k.operation) + ": " + std::string(k.why) + ".";
    c->footer(
        kinds +
        "\n\nDelivery is at least once. With --exec, the hook's exit status 0 acknowledges the event and "
        "the position is saved (atomically); any other status, or a killed hook, is not an acknowledgement: "
        "the same event is run again after 1 s, 2 s, 4 s ... (at most 1 min), and the watch does not move "
        "past it; with --once it gives up after 4 tries (exit 1) and the next run starts with that event. "
        "The hook gets RELCTL_EVENT_ID, RELCTL_EVENT_KIND (the operation) and RELCTL_ENV. Without "
        "--exec an event is acknowledged once its line is written. If the watch is stopped or killed "
        "between running the hook and saving the position, the event is delivered again at the next start; "
        "an acknowledged event never is, and none is skipped, including one whose id was taken before a "
        "committed event's but committed after it. SIGTERM or SIGINT stops it after the delivery in "
        "progress (exit 0). It waits on LISTEN and reads the trail every --poll, and reconnects when the "
        "database goes away. A first start without a position file begins at the trail's end (--after, "
        "--from-start); a damaged position file is refused (exit 2) and left as it is. Needs a login with "
        "relctl_reviewer (without it: exit 1, naming the login).");
}

int watch(CommandContext& c)
{
    const Arguments& o = c.args();
    decisionwatch::Options w;
    w.exec = o.get("exec");
    if (auto position = o.get("position"))
        w.positionFile = *position;
    if (o.has("after") && o.has("from-start"))
        throwUsage("give either --after or --from-start, not both");
    if (auto after = o.get("after"))
        w.startAfter = std::stoll(*after);
    if (o.has("from-start"))
        w.startAfter = 0;
    w.once = o.has("once");
    if (auto poll = o.duration("poll", true))
        w.poll = *poll;
    if (auto named = c.namedDsn())
        w.conninfo = *named;
    else if (embeddedIsDefault())
        w.conninfo = EmbeddedCluster::forCurrentUser().ensureRunning();
    return decisionwatch::run(w);
}

constexpr Command kWatch[] = {
    {"watch", "follow the audit trail and run a hook for each event that needs a decision", buildWatch,
     watch},
};

} // namespace

std::span<const Command> watch()
{
    return kWatch;
}

} // namespace groups

} // namespace relctl::cli
