#pragma once

namespace relctl {

// Sends core's diagnostics to stderr (stdout carries replies) at the level
// named by $RELCTL_LOG: trace, debug, info, warn (the default), error or off.
void configureLogging();

} // namespace relctl
