#pragma once

// What the benchmark programs share: starting programs, statistics.

#include "relctl/process.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/wait.h>
#include <vector>

namespace relctl::bench {

using Clock = std::chrono::steady_clock;

[[noreturn]] inline void fail(const std::string& what)
{
    std::fprintf(stderr, "relctl bench: %s\n", what.c_str());
    std::exit(1);
}

// Starts a program with stdin from /dev/null and its output to `output`
// (default: discarded), with `overrides` added to this environment.
inline pid_t spawn(const std::vector<std::string>& args, int output = -1,
                   const std::vector<std::string>& overrides = {}, const std::string& cwd = {})
{
    static const relctl::Fd devNull(open("/dev/null", O_WRONLY | O_CLOEXEC));
    relctl::SpawnOptions options;
    options.argv = args;
    options.environment = relctl::environmentWith(overrides);
    options.output = output >= 0 ? output : devNull.get();
    options.cwd = cwd;
    const relctl::Spawned spawned = relctl::spawn(options);
    if (spawned.error != 0)
        fail("cannot start " + args.at(0) + ": " + std::strerror(spawned.error));
    return spawned.pid;
}

inline int reap(pid_t pid)
{
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Runs a program to its end; its wall time in ms, or fails the bench.
inline double timed(const std::vector<std::string>& args, const std::vector<std::string>& overrides = {},
                    const std::string& cwd = {})
{
    const auto start = Clock::now();
    const int code = reap(spawn(args, -1, overrides, cwd));
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (code != 0)
        fail(args.at(0) + " exited with " + std::to_string(code));
    return ms;
}

inline double percentile(std::vector<double> v, double p)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1,
                      static_cast<std::size_t>(std::lround(p * static_cast<double>(v.size() - 1))))];
}

inline double median(const std::vector<double>& v)
{
    return percentile(v, 0.5);
}

// The value after command-line option argv[i] (advancing i), or a failure
// naming the option.
inline std::string optionValue(int& i, int argc, char** argv)
{
    if (i + 1 >= argc)
        fail(std::string(argv[i]) + " needs a value");
    return argv[++i];
}

// Whether a program is on PATH.
inline bool onPath(const std::string& program)
{
    const char* path = std::getenv("PATH");
    std::string rest = path != nullptr ? path : "";
    for (std::size_t start = 0; start <= rest.size();) {
        const std::size_t end = std::min(rest.find(':', start), rest.size());
        const std::string dir = rest.substr(start, end - start);
        if (!dir.empty() && access((dir + "/" + program).c_str(), X_OK) == 0)
            return true;
        start = end + 1;
    }
    return false;
}

} // namespace relctl::bench

#include <fstream>
#include <sstream>
#include <unistd.h>

namespace relctl::bench {

// Runs a program to its end and returns what it printed (stdout and stderr);
// fails the bench when it does not exit 0.
inline std::string capture(const std::vector<std::string>& args,
                           const std::vector<std::string>& overrides = {}, const std::string& cwd = {})
{
    char path[] = "/tmp/relctl-bench-XXXXXX";
    const relctl::Fd file(mkstemp(path));
    if (file.get() < 0)
        fail("cannot create a temporary file");
    unlink(path);
    const int code = reap(spawn(args, file.get(), overrides, cwd));
    std::string out;
    lseek(file.get(), 0, SEEK_SET);
    char buffer[4096];
    for (ssize_t n; (n = read(file.get(), buffer, sizeof buffer)) > 0;)
        out.append(buffer, static_cast<std::size_t>(n));
    if (code != 0)
        fail(args.at(0) + " exited with " + std::to_string(code) + ":\n" + out);
    return out;
}

} // namespace relctl::bench
