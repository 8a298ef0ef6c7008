#include "dbcommand.h"

namespace relctl::cli {

int dbCommand(const std::vector<std::string>&, const Output&)
{
    throw Error(ExitCode::Internal, "relctl db is not available in this build yet");
}

} // namespace relctl::cli
