#pragma once

namespace relctl::cli {

// Runs one relctl command line and returns its exit code (see relctl::ExitCode).
int run(int argc, char** argv);

} // namespace relctl::cli
