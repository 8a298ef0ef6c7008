#pragma once

#include "output.h"

#include <string>
#include <vector>

namespace relctl::cli {

// relctl db status|start|stop|path: manages the embedded default database.
int dbCommand(const std::vector<std::string>& words, const Output& output);

} // namespace relctl::cli
