#pragma once

#include "arguments.h"
#include "output.h"

#include <optional>
#include <string>

namespace relctl::cli {

// What `relctl rehearse` needs from the command line around it.
struct RehearseContext
{
    const Arguments& arguments;
    const Output& output;
    // The global --dsn (or $RELCTL_DSN / PG*): the server scratch databases are
    // created on and --like is read from; empty: the embedded default database.
    std::optional<std::string> dsn;
};

// relctl rehearse [SCENARIO...|all] [--list] [--like ENV] [--keep] [--dsn DB]
//                 [--ttl D] [--report FILE.html] [--relctl PATH]
int rehearseCommand(const RehearseContext& context);

} // namespace relctl::cli
