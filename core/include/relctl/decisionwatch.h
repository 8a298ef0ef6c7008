#pragma once

// `relctl watch --decisions`: follows the audit trail from a saved position
// and hands every event that needs a release manager's decision to a hook
// (or prints it), at least once, across restarts. Here because it reads the
// trail over SQL and starts the hook: the CLI only parses the options.

#include "relctl/event.h"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace relctl::decisionwatch {

// One kind of event that needs a decision: its operation, and why.
struct DecisionKind
{
    std::string_view operation;
    std::string_view why;
};

// The kinds, in the order the help lists them. Only accepted events count:
// a refused freeze or request changed nothing.
std::vector<DecisionKind> decisionKinds();
bool needsDecision(const Event& event);

// The position file: the id of the last event handled (delivered and
// acknowledged, or passed over as needing no decision), as decimal digits
// and a newline. Empty when the file does not exist. Throws Error(Usage)
// naming the file when it cannot be read or holds anything else: it is then
// left as it is.
std::optional<std::int64_t> readPosition(const std::filesystem::path& file);
// Writes the file atomically (a temporary file beside it, fsync, rename,
// fsync of the directory), creating the directory. Throws Error(Internal).
void writePosition(const std::filesystem::path& file, std::int64_t after);

// $XDG_STATE_HOME/relctl/watch (else ~/.local/state/relctl/watch)/
// DBNAME-HASH.position, HASH naming the server and database (host, port,
// dbname) so that two databases never share a position.
std::filesystem::path defaultPositionFile(const std::string& host, const std::string& port,
                                          const std::string& dbname);

struct Options
{
    std::string conninfo;
    std::optional<std::filesystem::path> positionFile; // empty: defaultPositionFile
    std::optional<std::string> exec;                   // empty: print each event as a JSON line
    // Where a first start (no position file) begins: after this id; empty:
    // at the trail's current end.
    std::optional<std::int64_t> startAfter;
    bool once = false; // deliver what is pending, then return
    std::chrono::milliseconds poll{5000};
    // How long an id missing below committed ones is given to commit before
    // the transactions that might still hold it are checked (read()).
    std::chrono::milliseconds settle{1000};
    std::chrono::milliseconds firstRetry{1000}; // a failed hook is run again after this, doubling
    std::chrono::milliseconds maxRetry{60000};
};

// Runs until SIGTERM or SIGINT (after the delivery in progress) or, with
// `once`, until nothing is pending; returns the exit code (0). Throws
// Error(Usage) for a bad position file, Error(Internal) for a login without
// relctl_reviewer, Error(Unavailable) when the database cannot be reached at
// the start (later it reconnects).
int run(const Options& options);

} // namespace relctl::decisionwatch
