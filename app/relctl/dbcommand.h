#pragma once

#include "output.h"

#include <string>

namespace relctl::cli {

// relctl db status|start|stop|path: manages the embedded default database.
// sub: the subcommand, already checked by the command line.
// `demo`: release-console --demo's cluster instead of the default one.
int dbCommand(const std::string& sub, bool demo, const Output& output);

} // namespace relctl::cli
