#include "relctl/process.h"

#include <algorithm>
#include <csignal>
#include <fcntl.h>
#include <spawn.h>
#include <string_view>

extern char** environ;

namespace relctl {

namespace {

// posix_spawn's argument vectors: pointers into the strings, null-terminated.
std::vector<char*> pointers(const std::vector<std::string>& strings)
{
    std::vector<char*> out;
    out.reserve(strings.size() + 1);
    for (const std::string& s : strings)
        out.push_back(const_cast<char*>(s.c_str()));
    out.push_back(nullptr);
    return out;
}

} // namespace

Spawned spawn(const SpawnOptions& options)
{
    if (options.argv.empty())
        return {-1, EINVAL};
    std::vector<char*> args = pointers(options.argv);
    std::vector<char*> envp = pointers(options.environment);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (options.output >= 0) {
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&actions, options.output, 1);
        posix_spawn_file_actions_adddup2(&actions,
                                         options.errorOutput >= 0 ? options.errorOutput : options.output, 2);
    }
    if (!options.cwd.empty())
        posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());

    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    short flags = POSIX_SPAWN_SETSIGMASK;
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attributes, &none);
    if (!options.defaultSignals.empty()) {
        sigset_t defaults;
        sigemptyset(&defaults);
        for (const int sig : options.defaultSignals)
            sigaddset(&defaults, sig);
        posix_spawnattr_setsigdefault(&attributes, &defaults);
        flags |= POSIX_SPAWN_SETSIGDEF;
    }
    if (options.newProcessGroup) {
        posix_spawnattr_setpgroup(&attributes, 0);
        flags |= POSIX_SPAWN_SETPGROUP;
    }
    posix_spawnattr_setflags(&attributes, flags);

    Spawned spawned;
    spawned.error = posix_spawnp(&spawned.pid, args[0], &actions, &attributes, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (spawned.error != 0)
        spawned.pid = -1;
    return spawned;
}

std::vector<std::string> environmentWith(const std::vector<std::string>& overrides)
{
    const auto nameOf = [](std::string_view entry) { return entry.substr(0, entry.find('=') + 1); };
    std::vector<std::string> out;
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string_view entry(*e);
        const bool replaced = std::any_of(overrides.begin(), overrides.end(),
                                          [&](const std::string& o) { return nameOf(o) == nameOf(entry); });
        if (!replaced)
            out.emplace_back(entry);
    }
    out.insert(out.end(), overrides.begin(), overrides.end());
    return out;
}

} // namespace relctl
