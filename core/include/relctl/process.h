#pragma once

// Process plumbing shared by the embedded cluster (initdb, pg_ctl) and
// `relctl run` (the wrapped command): programs started without a shell and
// without fork, and the descriptors they write to (relctl/fd.h).

#include "relctl/fd.h"

#include <filesystem>
#include <string>
#include <sys/types.h>
#include <vector>

namespace relctl {

struct SpawnOptions
{
    // argv[0] is looked up in PATH unless it contains a slash.
    std::vector<std::string> argv;
    // The program's whole environment, NAME=VALUE (see environmentWith).
    std::vector<std::string> environment;
    // Where it starts; empty: where the caller is.
    std::filesystem::path cwd;
    // When set: stdin from /dev/null, stdout and stderr to this descriptor.
    int output = -1;
    // With output: stderr to this descriptor instead.
    int errorOutput = -1;
    // In a new process group whose id is its pid, so that it and everything
    // it starts can be signalled together.
    bool newProcessGroup = false;
    // Reset to their default disposition in the program. The program always
    // starts with no signal blocked: what the caller blocks or ignores (relctl
    // run reads its signals from a signalfd) is its own business.
    std::vector<int> defaultSignals;
};

struct Spawned
{
    pid_t pid = -1;
    int error = 0; // an errno value when the program could not be started
};

// posix_spawn, not fork: other threads may exist (a heartbeat, a connection),
// and glibc reports an exec failure here rather than as a child exiting 127.
Spawned spawn(const SpawnOptions& options);

// This process's environment, with the NAME=VALUE entries of `overrides`
// replacing inherited entries of the same name.
std::vector<std::string> environmentWith(const std::vector<std::string>& overrides);

} // namespace relctl
