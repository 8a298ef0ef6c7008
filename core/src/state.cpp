#include "relctl/state.h"

#include "fnv.h"
#include "privatefiles.h"
#include "relctl/error.h"
#include "relctl/fd.h"
#include "relctl/parse.h"
#include "relctl/protocol.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <memory>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace relctl {

namespace state {

namespace {

namespace fs = std::filesystem;

constexpr const char* kStampName = ".pruned";

Clock::time_point modified(const struct stat& st)
{
    return Clock::time_point(std::chrono::duration_cast<Clock::duration>(
        std::chrono::seconds(st.st_mtim.tv_sec) + std::chrono::nanoseconds(st.st_mtim.tv_nsec)));
}

// A secret's file name: sixteen lower-case hex digits (fileNameFor).
bool isSecretName(std::string_view name)
{
    return name.size() == 16 && std::all_of(name.begin(), name.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

// A secret written under "NAME.tmp.PID" and not yet linked into place.
bool isTemporaryName(std::string_view name)
{
    return name.size() > 21 && isSecretName(name.substr(0, 16)) && name.substr(16, 5) == ".tmp.";
}

std::string environment(const char* name)
{
    const char* value = std::getenv(name);
    return value ? value : "";
}

[[noreturn]] void systemFailure(const fs::path& path, const std::string& what, int error = errno)
{
    throw Error(ExitCode::Internal, "cannot " + what + " " + path.string() + ": " + std::strerror(error));
}

struct DirCloser
{
    void operator()(DIR* d) const { closedir(d); }
};

// Removes one secret (or temporary file) if it still is older than cutoff:
// under an exclusive lock, so that no use is reading or refreshing it, and
// only while the name still names the inode examined.
bool removeIfOlder(int dirFd, const std::string& name, Clock::time_point cutoff, std::uintmax_t& bytes)
{
    const Fd fd(openat(dirFd, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (fd.get() < 0)
        return false;
    if (flock(fd.get(), LOCK_EX | LOCK_NB) != 0)
        return false; // in use right now
    struct stat held, named;
    if (fstat(fd.get(), &held) != 0 || held.st_nlink == 0 || modified(held) >= cutoff)
        return false;
    if (fstatat(dirFd, name.c_str(), &named, AT_SYMLINK_NOFOLLOW) != 0 || named.st_ino != held.st_ino ||
        named.st_dev != held.st_dev)
        return false;
    if (unlinkat(dirFd, name.c_str(), 0) != 0)
        return false;
    bytes += static_cast<std::uintmax_t>(held.st_size);
    return true;
}

std::chrono::milliseconds retentionFromEnvironment()
{
    const std::string text = environment("RELCTL_STATE_RETENTION");
    if (text.empty())
        return Policy{}.retention;
    const auto d = parseDuration(text);
    if (!d)
        throwUsage("RELCTL_STATE_RETENTION: invalid duration \"" + text +
                   "\": expected an integer with ms, s, m or h (a bare integer means seconds)");
    if (*d < kMinimumAge)
        throwUsage("RELCTL_STATE_RETENTION must be at least " + formatDuration(kMinimumAge) + ", not \"" +
                   text + "\"");
    return *d;
}

std::int64_t maxFilesFromEnvironment()
{
    const std::string text = environment("RELCTL_STATE_MAX_FILES");
    if (text.empty())
        return Policy{}.maxFiles;
    const auto n = parsePositiveInt(text);
    if (!n || *n > 100'000'000)
        throwUsage("RELCTL_STATE_MAX_FILES: invalid value \"" + text +
                   "\": expected an integer from 1 to 100000000");
    return *n;
}

} // namespace

Policy Policy::fromEnvironment()
{
    return Policy{retentionFromEnvironment(), maxFilesFromEnvironment()};
}

fs::path directory()
{
    if (const std::string dir = environment("RELCTL_STATE_DIR"); !dir.empty())
        return dir;
    if (const std::string dir = environment("XDG_STATE_HOME"); !dir.empty())
        return fs::path(dir) / "relctl";
    if (const std::string home = environment("HOME"); !home.empty())
        return fs::path(home) / ".local" / "state" / "relctl";
    throwUsage("no place to keep request secrets: set RELCTL_STATE_DIR, XDG_STATE_HOME or HOME, "
               "or RELCTL_OP_KEY");
}

fs::path requestsDirectory()
{
    return directory() / "requests";
}

// Two ids sharing a name would share a secret, which gives neither away.
std::string requestFileName(const std::string& opId)
{
    // The seed is not FNV's offset basis (a digit went missing once), and it
    // stays so: a changed name would lose the secret of a retry that spans
    // an upgrade of relctl.
    return detail::Fnv1a(1469598103934665603ULL).add(opId).hex();
}

fs::path pruneStamp(const fs::path& requests)
{
    return requests / kStampName;
}

Summary summarize(const fs::path& requests, const Policy& policy)
{
    Summary s;
    s.requests = requests;
    s.policy = policy;
    const std::unique_ptr<DIR, DirCloser> dir(opendir(requests.c_str()));
    if (!dir) {
        if (errno == ENOENT)
            return s;
        systemFailure(requests, "read");
    }
    s.exists = true;
    const int dirFd = dirfd(dir.get());
    while (const dirent* entry = readdir(dir.get())) {
        const std::string_view name = entry->d_name;
        struct stat st;
        if (fstatat(dirFd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (name == kStampName) {
            s.lastPruned = modified(st);
        } else if (isSecretName(name)) {
            ++s.secrets;
            s.bytes += static_cast<std::uintmax_t>(st.st_size);
            const Clock::time_point at = modified(st);
            s.oldest = s.oldest ? std::min(*s.oldest, at) : at;
            s.newest = s.newest ? std::max(*s.newest, at) : at;
        } else if (isTemporaryName(name)) {
            ++s.temporary;
            s.bytes += static_cast<std::uintmax_t>(st.st_size);
        }
    }
    return s;
}

PruneReport prune(const fs::path& requests, const PruneOptions& options)
{
    if (options.olderThan < kMinimumAge)
        throwUsage("--older-than must be at least " + formatDuration(kMinimumAge) +
                   ": nothing used within the last " + formatDuration(kMinimumAge) + " is removed");
    if (options.maxFiles < 1)
        throwUsage("--max-files must be a positive integer");
    PruneReport report;
    const std::unique_ptr<DIR, DirCloser> dir(opendir(requests.c_str()));
    if (!dir) {
        if (errno == ENOENT)
            return report;
        systemFailure(requests, "read");
    }
    const int dirFd = dirfd(dir.get());
    const Clock::time_point now = Clock::now();
    const Clock::time_point ageCutoff = now - options.olderThan;
    const Clock::time_point floorCutoff = now - kMinimumAge;

    struct Entry
    {
        std::string name;
        Clock::time_point at;
        std::uintmax_t bytes;
    };
    std::vector<Entry> secrets, temporary;
    std::int64_t kept = 0; // secrets that stay whatever their age (the one in use)
    errno = 0;
    while (const dirent* entry = readdir(dir.get())) {
        const std::string name = entry->d_name;
        const bool secret = isSecretName(name);
        if (!secret && !isTemporaryName(name))
            continue; // ".", "..", the stamp, and anything relctl did not write
        if (static_cast<std::size_t>(report.examined) >= options.examineLimit) {
            report.complete = false;
            break;
        }
        ++report.examined;
        if (name == options.keep) {
            ++kept;
            continue;
        }
        struct stat st;
        if (fstatat(dirFd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue;
        (secret ? secrets : temporary)
            .push_back({name, modified(st), static_cast<std::uintmax_t>(st.st_size)});
    }
    // The least recently used first: the count cap removes from the front.
    std::sort(secrets.begin(), secrets.end(), [](const Entry& a, const Entry& b) { return a.at < b.at; });

    std::size_t budget = options.removeLimit;
    const auto remove = [&](const Entry& e, Clock::time_point cutoff) {
        if (budget == 0) {
            report.complete = false;
            return false;
        }
        if (options.dryRun) {
            --budget;
            report.bytesRemoved += e.bytes;
            return true;
        }
        if (!removeIfOlder(dirFd, e.name, cutoff, report.bytesRemoved))
            return false;
        --budget;
        return true;
    };
    for (const Entry& e : temporary)
        if (e.at < floorCutoff && remove(e, floorCutoff))
            ++report.removedTemporary;
    std::int64_t remaining = kept + static_cast<std::int64_t>(secrets.size());
    std::vector<bool> gone(secrets.size(), false);
    for (std::size_t i = 0; i < secrets.size() && secrets[i].at < ageCutoff; ++i)
        if (remove(secrets[i], ageCutoff)) {
            gone[i] = true;
            ++report.removedByAge;
            --remaining;
        }
    for (std::size_t i = 0; i < secrets.size() && remaining > options.maxFiles; ++i) {
        if (gone[i])
            continue;
        if (secrets[i].at >= floorCutoff)
            break; // used within kMinimumAge: kept even over the cap
        if (remove(secrets[i], floorCutoff)) {
            ++report.removedByCount;
            --remaining;
        }
    }
    report.kept = remaining;
    return report;
}

void pruneIfDue(const fs::path& requests, const Policy& policy, const std::string& keep)
{
    try {
        const fs::path stamp = pruneStamp(requests);
        const Clock::time_point now = Clock::now();
        struct stat st;
        // A stamp from the future (a clock set back) does not postpone pruning forever.
        if (stat(stamp.c_str(), &st) == 0 && modified(st) > now - kPruneInterval &&
            modified(st) <= now + kPruneInterval)
            return;
        // Claimed first, so that concurrent uses do not all make the pass;
        // two that do anyway are safe (removeIfOlder).
        const Fd fd(open(stamp.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
        if (fd.get() < 0 || futimens(fd.get(), nullptr) != 0)
            systemFailure(stamp, "write");
        PruneOptions options;
        options.olderThan = policy.retention;
        options.maxFiles = policy.maxFiles;
        options.examineLimit = static_cast<std::size_t>(policy.maxFiles) + kExamineMarginOnUse;
        options.removeLimit = kRemoveLimitOnUse;
        options.keep = keep;
        const PruneReport report = prune(requests, options);
        spdlog::debug("pruned {} request secrets ({} by age, {} over the cap), {} kept, {} examined{}",
                      report.removed(), report.removedByAge, report.removedByCount, report.kept,
                      report.examined, report.complete ? "" : "; more to do on the next use");
        if (!report.complete && report.removed() + report.removedTemporary > 0) {
            // Due again at once: the next use goes on where this one stopped.
            // (One that made no progress waits the interval: the next use
            // would examine the same entries.)
            const std::array<timespec, 2> past{timespec{0, 0}, timespec{0, 0}};
            futimens(fd.get(), past.data());
        }
    } catch (const std::exception& e) {
        spdlog::warn("pruning request secrets in {} failed: {}", requests.string(), e.what());
    }
}

} // namespace state

namespace {

namespace fs = std::filesystem;

// The secret kept in the file `name` of the requests directory open on
// dirFd (path: its name in messages), its use recorded as the file's
// modification time (the retention counts from the last use); nothing when
// there is no such file, or a prune removed it before this use could take its
// lock. A file that is not the user's alone is refused (detail::checkPrivateFile).
std::optional<std::string> useSecret(int dirFd, const std::string& name, const fs::path& path)
{
    // O_NOFOLLOW: a link in its place would read (and refresh) a file chosen
    // by whoever made the link. O_NONBLOCK: a FIFO cannot hang the open.
    const Fd fd(openat(dirFd, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
    if (fd.get() < 0) {
        if (errno == ENOENT)
            return std::nullopt;
        if (errno == ELOOP)
            detail::refusePrivatePath(path, "it is a symbolic link");
        state::systemFailure(path, "read");
    }
    detail::checkPrivateFile(fd.get(), path);
    // Shared: uses do not wait for each other, only for a prune (which holds
    // the exclusive lock while it checks the age again and unlinks).
    while (flock(fd.get(), LOCK_SH) != 0)
        if (errno != EINTR)
            state::systemFailure(path, "lock");
    struct stat st;
    if (fstat(fd.get(), &st) != 0)
        state::systemFailure(path, "read");
    if (st.st_nlink == 0)
        return std::nullopt; // pruned just now: this use makes a new one
    if (futimens(fd.get(), nullptr) != 0)
        state::systemFailure(path, "refresh");
    std::array<char, 1024> buffer{};
    const ssize_t n = read(fd.get(), buffer.data(), buffer.size());
    std::string secret(buffer.data(), n > 0 ? static_cast<std::size_t>(n) : 0);
    secret = secret.substr(0, secret.find('\n'));
    if (secret.size() < 16)
        throw Error(ExitCode::Internal, "unreadable request secret in " + path.string());
    return secret;
}

// A new secret in the file `name` of the requests directory open on dirFd;
// nothing when another process created it first.
std::optional<std::string> createSecret(int dirFd, const std::string& name, const fs::path& path)
{
    // Written whole under a temporary name, then linked into place: a
    // concurrent first use of the same op id finds either no file or a whole
    // one, and the loser of the race adopts the winner's secret. The
    // temporary name is this use's alone (the pid and a random part), and
    // O_EXCL|O_NOFOLLOW write only a file this call created.
    std::string secret = newOperationId() + newOperationId();
    const std::string temporary =
        name + ".tmp." + std::to_string(getpid()) + "." + newOperationId().substr(0, 8);
    const fs::path shown = path.parent_path() / temporary;
    const int fd =
        ::openat(dirFd, temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        state::systemFailure(shown, "create");
    const std::string line = secret + "\n";
    const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    ::close(fd);
    if (!written) {
        const int error = errno;
        ::unlinkat(dirFd, temporary.c_str(), 0);
        state::systemFailure(shown, "write", error);
    }
    const int linked = ::linkat(dirFd, temporary.c_str(), dirFd, name.c_str(), 0);
    const int linkErrno = errno;
    ::unlinkat(dirFd, temporary.c_str(), 0);
    if (linked == 0)
        return secret;
    if (linkErrno == EEXIST)
        return std::nullopt;
    state::systemFailure(path, "create", linkErrno);
}

} // namespace

std::string requestSecret(const std::string& opId)
{
    if (const char* key = std::getenv("RELCTL_OP_KEY"); key && *key) {
        const std::string k = key;
        if (k.size() < 16 || k.size() > 512)
            throwUsage("RELCTL_OP_KEY must have 16 to 512 characters");
        // A keyed digest, not the key: the secret travels as a statement's
        // parameter, which a statement log shows, and from one op id's secret
        // no other op id's can be derived.
        return hmacSha256Hex(k, opId);
    }
    // Checked before anything is written: a bad setting is invalid input.
    const state::Policy policy = state::Policy::fromEnvironment();
    const fs::path stateDir = state::directory();
    const fs::path dir = state::requestsDirectory();
    detail::createPrivateDirectories(dir);
    // Both levels: whoever may write to the state directory can replace
    // requests/ with a directory of their own.
    const Fd stateFd = detail::openPrivateDirectory(AT_FDCWD, stateDir.string(), stateDir, true);
    const Fd dirFd = detail::openPrivateDirectory(stateFd.get(), dir.filename().string(), dir, false);
    const std::string name = state::requestFileName(opId);
    const fs::path path = dir / name;
    // Each round either uses the file or creates it; a prune or a concurrent
    // creator in between only sends it round again.
    for (int round = 0; round < 8; ++round) {
        std::optional<std::string> secret = useSecret(dirFd.get(), name, path);
        if (!secret)
            secret = createSecret(dirFd.get(), name, path);
        if (secret) {
            state::pruneIfDue(dir, policy, name);
            return *secret;
        }
    }
    throw Error(ExitCode::Internal, "cannot keep the request secret in " + path.string() +
                                        ": it was removed and created again concurrently, repeatedly");
}

} // namespace relctl
