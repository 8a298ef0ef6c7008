#pragma once

// Private to core: the POSIX plumbing of the embedded cluster (accounts,
// descriptors, running programs without a shell).

#include "relctl/process.h"

#include <cerrno>
#include <filesystem>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace relctl::detail {

using relctl::Fd;

// "what: strerror(error)"
std::string systemError(const std::string& what, int error = errno);

struct Account
{
    std::string name;
    uid_t uid = 0;
    gid_t gid = 0;
    std::string home;
};

// The account of that name, or of the effective user when name is null.
std::optional<Account> lookupAccount(const char* name);

bool asRoot();

// The first line of a file ("" when it cannot be read).
std::string firstLine(const std::filesystem::path& file);

// Runs a program from an argv vector (no shell; looked up on PATH unless a
// path is given) in cwd, stdin from /dev/null, stdout and stderr to outFd, and
// waits for it. Returns what went wrong, or nothing.
std::string spawnAndWait(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                         const std::filesystem::path& cwd, int outFd);

} // namespace relctl::detail
