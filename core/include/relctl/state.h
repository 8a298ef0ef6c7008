#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

// relctl's local state: the request secrets that let a retry of an op id on
// this machine prove itself (requestSecret() in protocol.h), one small file
// per op id in $RELCTL_STATE_DIR/requests. A secret matters only while a
// retry of its op id may still come, so each is kept for a retention after its
// last use and then removed, and the directory's count is capped; relctl
// prunes on use and `relctl state prune` on demand.
namespace relctl::state {

using Clock = std::chrono::system_clock;

// Nothing used within this age is ever removed, by the retention, the count
// cap or `state prune`: it covers a job's own retries and relctl's reconnect
// window many times over. Also the shortest retention accepted.
inline constexpr std::chrono::hours kMinimumAge{1};
// A use prunes at most once per interval per state directory (a stamp file's
// modification time says when it last did).
inline constexpr std::chrono::hours kPruneInterval{1};
// What one prune on use may do, so that no command pays for a large
// directory at once: it examines at most the cap plus kExamineMarginOnUse
// entries (enough to see that the cap is exceeded) and removes at most
// kRemoveLimitOnUse. A pass that stopped short and removed something leaves
// the prune due, and the next use goes on.
inline constexpr std::size_t kExamineMarginOnUse = 10'000;
inline constexpr std::size_t kRemoveLimitOnUse = 1'000;

struct Policy
{
    // RELCTL_STATE_RETENTION: how long after its last use a secret is kept.
    std::chrono::milliseconds retention = std::chrono::hours(24 * 7);
    // RELCTL_STATE_MAX_FILES: beyond this many secrets the least recently
    // used ones go first, but never one used within kMinimumAge.
    std::int64_t maxFiles = 10'000;

    // The policy from the environment; Error(Usage) for a bad value.
    static Policy fromEnvironment();
};

// $RELCTL_STATE_DIR, else $XDG_STATE_HOME/relctl, else ~/.local/state/relctl
// (Error(Usage) when none is set).
std::filesystem::path directory();
// Where the request secrets are: directory() / "requests".
std::filesystem::path requestsDirectory();

struct Summary
{
    std::filesystem::path requests;
    bool exists = false;
    std::int64_t secrets = 0;
    std::uintmax_t bytes = 0;
    std::int64_t temporary = 0;                      // left by a write that was interrupted
    std::optional<Clock::time_point> oldest, newest; // the secrets' last uses
    std::optional<Clock::time_point> lastPruned;     // the last prune on use
    Policy policy;
};

// What is in the directory; reads only.
Summary summarize(const std::filesystem::path& requests, const Policy& policy);

struct PruneOptions
{
    std::chrono::milliseconds olderThan = std::chrono::hours(24 * 7); // at least kMinimumAge
    std::int64_t maxFiles = 10'000;
    bool dryRun = false;
    std::size_t examineLimit = SIZE_MAX;
    std::size_t removeLimit = SIZE_MAX;
    std::string keep; // a file name never removed (the secret in use)
};

struct PruneReport
{
    std::int64_t examined = 0;
    std::int64_t removedByAge = 0;   // unused for longer than olderThan
    std::int64_t removedByCount = 0; // over maxFiles
    std::int64_t removedTemporary = 0;
    std::int64_t kept = 0;
    std::uintmax_t bytesRemoved = 0;
    bool complete = true; // false: a limit stopped the pass

    std::int64_t removed() const { return removedByAge + removedByCount; }
};

// Removes the secrets unused for longer than olderThan, then the least
// recently used ones beyond maxFiles that are older than kMinimumAge, and
// temporary files older than kMinimumAge. A secret is removed only under an
// exclusive lock after its age is checked again, so a concurrent use (which
// refreshes it under a shared lock) either keeps it or, coming second,
// creates a new one; it never goes on with a secret that was removed.
PruneReport prune(const std::filesystem::path& requests, const PruneOptions& options);

// Prune on use: when the last one is kPruneInterval old, a bounded prune
// with the policy. Never throws: a failure is logged and the use goes on.
void pruneIfDue(const std::filesystem::path& requests, const Policy& policy, const std::string& keep);

// The file name of an op id's secret in the requests directory: a stable
// hash, the same in every relctl version.
std::string requestFileName(const std::string& opId);

// The stamp file whose modification time is the last prune on use.
std::filesystem::path pruneStamp(const std::filesystem::path& requests);

} // namespace relctl::state
