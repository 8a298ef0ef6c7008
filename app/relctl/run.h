#pragma once

#include "arguments.h"
#include "output.h"
#include "relctl/database.h"

#include <functional>
#include <string>
#include <vector>

namespace relctl::cli {

// What `relctl run` needs from the command line around it.
struct RunContext
{
    const Arguments& arguments; // run's own options
    // The words after "--": the command and its arguments, untouched.
    const std::vector<std::string>& command;
    const Output& output;
    std::string jobUrl;
    // Opens a new connection (the wrapper keeps one per thread).
    std::function<Database()> connect;
};

// relctl run --env E --job J --release R --generation N [--ttl D] [--wait D]
//            [--manifest FILE] [--op-id ID] [--grace D] -- CMD [ARGS...]
int runCommand(const RunContext& context);

} // namespace relctl::cli
