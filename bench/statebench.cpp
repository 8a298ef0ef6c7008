// What the bounded request-secret directory costs ($RELCTL_STATE_DIR/requests,
// relctl/state.h), each figure next to the plain file-system work it cannot
// avoid, measured in the same run on the same directory:
//  - a use of an op id's secret when no prune is due (the common case: every
//    acquire with an op id), against opening and reading the file;
//  - a prune on use that is due but finds nothing to remove in 10,000
//    secrets (a scan), against readdir and stat of the same 10,000 files;
//  - `relctl state prune` removing 10,000 secrets past the retention, against
//    a scan of them and unlinking 10,000 files;
//  - a prune on use that removes its limit (1,000 secrets), against the scan
//    and unlinking 1,000 files.
// No database. Usage: relctl-state-bench [--json FILE] [--files N]

#include "goals.h"
#include "relctl/protocol.h"
#include "relctl/state.h"
#include "support.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace relctl;
using Steady = std::chrono::steady_clock;

double msSince(Steady::time_point start)
{
    return std::chrono::duration<double, std::milli>(Steady::now() - start).count();
}

void ageAll(const fs::path& dir, std::chrono::seconds age)
{
    const timespec at{std::time(nullptr) - static_cast<std::time_t>(age.count()), 0};
    const timespec times[2] = {at, at};
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename().string()[0] != '.')
            utimensat(AT_FDCWD, e.path().c_str(), times, 0);
}

// n secrets, made as relctl makes them.
void fill(const fs::path& state, int n, const std::string& prefix)
{
    setenv("RELCTL_STATE_DIR", state.c_str(), 1);
    for (int i = 0; i < n; ++i)
        requestSecret(prefix + std::to_string(i));
    // No prune on use meanwhile: the stamp is fresh.
    const Fd stamp(open(state::pruneStamp(state / "requests").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
    futimens(stamp.get(), nullptr);
}

// The reference for removals: n plain files of the same size, unlinked.
double unlinkFiles(const fs::path& dir, int n)
{
    fs::create_directories(dir);
    for (int i = 0; i < n; ++i) {
        const Fd fd(open((dir / std::to_string(i)).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        if (write(fd.get(), std::string(65, 'x').data(), 65) != 65)
            bench::fail("cannot write");
    }
    const auto start = Steady::now();
    for (int i = 0; i < n; ++i)
        unlink((dir / std::to_string(i)).c_str());
    return msSince(start);
}

double scanFiles(const fs::path& dir)
{
    const auto start = Steady::now();
    DIR* d = opendir(dir.c_str());
    long n = 0;
    while (const dirent* e = readdir(d)) {
        struct stat st;
        n += fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? 1 : 0;
    }
    closedir(d);
    return msSince(start);
}

} // namespace

int main(int argc, char** argv)
{
    std::string jsonPath;
    int files = 10'000;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--json" && i + 1 < argc)
            jsonPath = argv[++i];
        else if (a == "--files" && i + 1 < argc)
            files = std::atoi(argv[++i]);
        else if (a != "--dsn" || ++i >= argc) // bench.sh passes --dsn to every program
            bench::fail("usage: relctl-state-bench [--json FILE] [--files N]");
    }
    char pattern[] = "/tmp/relctl-state-bench-XXXXXX";
    if (mkdtemp(pattern) == nullptr)
        bench::fail("cannot create a temporary directory");
    const fs::path root = pattern;
    const fs::path state = root / "state", requests = state / "requests";
    for (const char* name : {"RELCTL_OP_KEY", "RELCTL_STATE_RETENTION", "RELCTL_STATE_MAX_FILES"})
        unsetenv(name);
    std::vector<bench::Goal> goals;

    fill(state, files, "op-");
    ageAll(requests, std::chrono::hours(2));

    // A use, nothing due: 2,000 uses of existing op ids against reading each file.
    const int uses = 2000;
    auto start = Steady::now();
    for (int i = 0; i < uses; ++i)
        requestSecret("op-" + std::to_string(i));
    const double useUs = msSince(start) * 1000 / uses;
    start = Steady::now();
    for (int i = uses; i < 2 * uses; ++i) {
        const Fd fd(open((requests / state::requestFileName("op-" + std::to_string(i))).c_str(), O_RDONLY));
        char buffer[128];
        if (read(fd.get(), buffer, sizeof buffer) <= 0)
            bench::fail("cannot read a secret");
    }
    const double readUs = msSince(start) * 1000 / uses;
    goals.push_back(bench::ratioAtMost("a use of a secret, no prune due (us)", useUs, readUs, "us", 4.0));

    // A due prune on use with nothing to remove: a scan of every secret.
    const double scanMs = scanFiles(requests);
    state::PruneOptions onUse;
    onUse.examineLimit = 10'000 + state::kExamineMarginOnUse; // the default cap's
    onUse.removeLimit = state::kRemoveLimitOnUse;
    start = Steady::now();
    const state::PruneReport nothing = state::prune(requests, onUse);
    const double noRemovalMs = msSince(start);
    if (nothing.removed() != 0)
        bench::fail("a prune removed secrets within the retention");
    goals.push_back(bench::ratioAtMost("a due prune on use over " + std::to_string(files) +
                                           " secrets, nothing to remove (ms)",
                                       noRemovalMs, scanMs, "ms", 3.0));

    // A due prune on use that removes its limit.
    ageAll(requests, std::chrono::hours(24 * 8));
    // Its reference: the scan above, and unlinking as many files.
    const double unlinkLimitMs =
        scanMs + unlinkFiles(root / "plain-limit", static_cast<int>(state::kRemoveLimitOnUse));
    start = Steady::now();
    const state::PruneReport limited = state::prune(requests, onUse);
    const double limitMs = msSince(start);
    if (limited.removed() != static_cast<std::int64_t>(state::kRemoveLimitOnUse))
        bench::fail("a prune on use removed " + std::to_string(limited.removed()));
    goals.push_back(bench::ratioAtMost("a due prune on use removing " +
                                           std::to_string(state::kRemoveLimitOnUse) + " secrets (ms)",
                                       limitMs, unlinkLimitMs, "ms", 3.0));

    // relctl state prune over the whole directory, every secret past the retention.
    fill(state, static_cast<int>(state::kRemoveLimitOnUse), "again-");
    ageAll(requests, std::chrono::hours(24 * 8));
    // Its reference: a scan of as many files, and unlinking them.
    const double unlinkAllMs = scanFiles(requests) + unlinkFiles(root / "plain-all", files);
    start = Steady::now();
    const state::PruneReport all = state::prune(requests, state::PruneOptions{});
    const double allMs = msSince(start);
    if (all.removed() != files)
        bench::fail("state prune removed " + std::to_string(all.removed()) + " of " + std::to_string(files));
    goals.push_back(bench::ratioAtMost("state prune removing " + std::to_string(files) + " secrets (ms)",
                                       allMs, unlinkAllMs, "ms", 3.0));

    fs::remove_all(root);
    for (const bench::Goal& g : goals)
        bench::print(g);
    bench::writeJson(jsonPath, goals);
    return 0;
}
