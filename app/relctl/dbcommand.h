#pragma once

#include "output.h"

#include <string>

namespace relctl::cli {

// relctl db status|start|stop|path: manages the embedded default database.
// sub: the subcommand, already checked by the command line.
int dbCommand(const std::string& sub, const Output& output);

} // namespace relctl::cli
