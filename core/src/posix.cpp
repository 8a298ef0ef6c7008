#include "posix.h"

#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

namespace relctl::detail {

Fd::~Fd()
{
    close(fd); // close(-1) is a harmless EBADF
}

std::string systemError(const std::string& what, int error)
{
    return what + ": " + std::strerror(error);
}

// getpw*_r, not getpw*: the console may call this from a worker thread.
std::optional<Account> lookupAccount(const char* name)
{
    std::vector<char> buffer(16384);
    passwd entry{};
    passwd* found = nullptr;
    const int rc = name ? getpwnam_r(name, &entry, buffer.data(), buffer.size(), &found)
                        : getpwuid_r(geteuid(), &entry, buffer.data(), buffer.size(), &found);
    if (rc != 0 || found == nullptr)
        return std::nullopt;
    return Account{entry.pw_name, entry.pw_uid, entry.pw_gid, entry.pw_dir ? entry.pw_dir : ""};
}

bool asRoot()
{
    return geteuid() == 0;
}

std::string firstLine(const std::filesystem::path& file)
{
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);
    return line;
}

std::string spawnAndWait(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                         const std::filesystem::path& cwd, int outFd)
{
    std::vector<char*> args, envp;
    for (const std::string& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    for (const std::string& e : env)
        envp.push_back(const_cast<char*>(e.c_str()));
    args.push_back(nullptr);
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, outFd, 1);
    posix_spawn_file_actions_adddup2(&actions, outFd, 2);
    // The server's user may not be able to enter relctl's working directory (/root).
    if (!cwd.empty())
        posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
    // A relctl that blocks or ignores signals (`relctl run` reads them from a
    // signalfd) must not pass that on to initdb, pg_ctl and the server.
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    for (int sig : {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2})
        sigaddset(&defaults, sig);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (rc != 0)
        return systemError("could not start " + argv[0], rc);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return systemError("waitpid");
    if (WIFSIGNALED(status))
        return "killed by signal " + std::to_string(WTERMSIG(status));
    return WEXITSTATUS(status) == 0 ? std::string() : "exit status " + std::to_string(WEXITSTATUS(status));
}

} // namespace relctl::detail
