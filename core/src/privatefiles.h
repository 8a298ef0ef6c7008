#pragma once

// Private to core: the local state directory is trusted only when no one but
// this user could have put anything in it. A request secret read from a
// directory another user can write to may be theirs (planted, or swapped for a
// symbolic link to a file they read back), and then a retry would present a
// secret they know, or leak one to them.

#include "relctl/fd.h"

#include <filesystem>
#include <string>

namespace relctl::detail {

// Creates dir and every missing directory above it with mode 0700 whatever
// the umask (the XDG base directory rule for state), leaving existing ones as
// they are.
void createPrivateDirectories(const std::filesystem::path& dir);

// Opens the directory `name` (relative to the directory open on `at`, or to
// the working directory for AT_FDCWD), for opening files relative to it
// (openat). Error(Usage), naming it as `shown` with the reason, when it is
// not a directory owned by the effective user, or group or others may write
// to it. followLink: false refuses a symbolic link in its place.
Fd openPrivateDirectory(int at, const std::string& name, const std::filesystem::path& shown, bool followLink);

// Error(Usage) when the file open on fd (shown as path) is not a regular file
// owned by the effective user with no permission for group or others.
void checkPrivateFile(int fd, const std::filesystem::path& path);

// Error(Usage): path is refused for request secrets, for the reason given.
[[noreturn]] void refusePrivatePath(const std::filesystem::path& path, const std::string& why);

} // namespace relctl::detail
