#include "run.h"

namespace relctl::cli {

int runCommand(const RunContext&)
{
    throw Error(ExitCode::Internal, "relctl run is not available in this build yet");
}

} // namespace relctl::cli
