#pragma once

#include "arguments.h"
#include "output.h"

#include <string>

namespace relctl::cli {

// relctl state show|prune: the request secrets kept on this machine
// (relctl/state.h). sub: the subcommand, already checked by the command line.
int stateCommand(const std::string& sub, const Arguments& arguments, const Output& output);

} // namespace relctl::cli
