#include "privatefiles.h"

#include "relctl/error.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace relctl::detail {

namespace fs = std::filesystem;

namespace {

std::string octalMode(mode_t mode)
{
    char text[8];
    std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
    return text;
}

[[noreturn]] void failed(const fs::path& path, const std::string& what, int error = errno)
{
    throw Error(ExitCode::Internal, "cannot " + what + " " + path.string() + ": " + std::strerror(error));
}

// The owner is compared with the effective user, which is whom the files are
// created as: root is no exception, a directory of another user is theirs.
void checkOwner(const struct stat& st, const fs::path& path)
{
    if (st.st_uid != geteuid())
        refusePrivatePath(path, "it belongs to uid " + std::to_string(st.st_uid) +
                                    ", not to this user (uid " + std::to_string(geteuid()) + ")");
}

} // namespace

void refusePrivatePath(const fs::path& path, const std::string& why)
{
    throwUsage("refusing " + path.string() + " for request secrets: " + why);
}

void createPrivateDirectories(const fs::path& dir)
{
    struct stat st;
    if (dir.empty() || stat(dir.c_str(), &st) == 0)
        return;
    if (dir.has_parent_path() && dir.parent_path() != dir)
        createPrivateDirectories(dir.parent_path());
    if (mkdir(dir.c_str(), 0700) != 0) {
        if (errno == EEXIST)
            return; // made by a concurrent use; checked when opened
        failed(dir, "create");
    }
    // mkdir's mode passes through the umask, which may take the owner's bits
    // too (umask 0277 leaves 0500): set it whole.
    if (chmod(dir.c_str(), 0700) != 0)
        failed(dir, "set the mode of");
}

Fd openPrivateDirectory(int at, const std::string& name, const fs::path& shown, bool followLink)
{
    // The checks are made on the directory opened, not on its name, and the
    // files in it are then opened relative to it: a rename or a symbolic
    // link swapped in afterwards cannot redirect them.
    Fd fd(openat(at, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | (followLink ? 0 : O_NOFOLLOW)));
    if (fd.get() < 0) {
        // With O_DIRECTORY, Linux reports a symbolic link as ENOTDIR.
        const int error = errno;
        struct stat link;
        if (error == ELOOP ||
            (error == ENOTDIR && fstatat(at, name.c_str(), &link, AT_SYMLINK_NOFOLLOW) == 0 &&
             S_ISLNK(link.st_mode)))
            refusePrivatePath(shown, "it is a symbolic link");
        if (error == ENOTDIR)
            refusePrivatePath(shown, "it is not a directory");
        failed(shown, "open", error);
    }
    struct stat st;
    if (fstat(fd.get(), &st) != 0)
        failed(shown, "read");
    checkOwner(st, shown);
    // Write permission for anyone else lets them plant a secret, or remove
    // one and put a link in its place (the sticky bit does not stop a file
    // of their own).
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
        refusePrivatePath(shown, "group or others may write to it (mode " + octalMode(st.st_mode) +
                                     "); make it the user's alone (chmod 700)");
    return fd;
}

void checkPrivateFile(int fd, const fs::path& path)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        failed(path, "read");
    if (!S_ISREG(st.st_mode))
        refusePrivatePath(path, "it is not a regular file");
    checkOwner(st, path);
    if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0)
        refusePrivatePath(path, "group or others may read or write it (mode " + octalMode(st.st_mode) +
                                    "); a request secret is the user's alone (chmod 600)");
}

} // namespace relctl::detail
