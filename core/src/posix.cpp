#include "posix.h"

#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace relctl::detail {

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
    // A relctl that blocks or ignores signals (`relctl run` reads them from a
    // signalfd) must not pass that on to initdb, pg_ctl and the server. The
    // server's user may not be able to enter relctl's working directory (/root).
    SpawnOptions options;
    options.argv = argv;
    options.environment = env;
    options.cwd = cwd;
    options.output = outFd;
    options.defaultSignals = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2};
    const Spawned spawned = spawn(options);
    if (spawned.error != 0)
        return systemError("could not start " + argv.at(0), spawned.error);
    int status = 0;
    while (waitpid(spawned.pid, &status, 0) < 0)
        if (errno != EINTR)
            return systemError("waitpid");
    if (WIFSIGNALED(status))
        return "killed by signal " + std::to_string(WTERMSIG(status));
    return WEXITSTATUS(status) == 0 ? std::string() : "exit status " + std::to_string(WEXITSTATUS(status));
}

} // namespace relctl::detail
