#include "statecommand.h"

#include "relctl/error.h"
#include "relctl/parse.h"
#include "relctl/state.h"

#include <cstdlib>
#include <ctime>

namespace relctl::cli {

namespace {

using state::Clock;

std::string isoTime(Clock::time_point at)
{
    const std::time_t t = Clock::to_time_t(at);
    std::tm utc{};
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &utc));
    return text;
}

json timeOrNull(const std::optional<Clock::time_point>& at)
{
    return at ? json(isoTime(*at)) : json();
}

std::string bytesText(std::uintmax_t bytes)
{
    if (bytes < 10 * 1024)
        return std::to_string(bytes) + " bytes";
    if (bytes < 10 * 1024 * 1024)
        return std::to_string(bytes / 1024) + " KiB";
    return std::to_string(bytes / (1024 * 1024)) + " MiB";
}

long long millis(std::chrono::milliseconds d)
{
    return static_cast<long long>(d.count());
}

int show(const Output& output)
{
    const state::Policy policy = state::Policy::fromEnvironment();
    const state::Summary s = state::summarize(state::requestsDirectory(), policy);
    const char* key = std::getenv("RELCTL_OP_KEY");
    const bool opKey = key != nullptr && *key != '\0';
    const json body{{"directory", s.requests.string()},
                    {"exists", s.exists},
                    {"secrets", s.secrets},
                    {"bytes", s.bytes},
                    {"temporary", s.temporary},
                    {"oldest_use", timeOrNull(s.oldest)},
                    {"newest_use", timeOrNull(s.newest)},
                    {"last_pruned", timeOrNull(s.lastPruned)},
                    {"retention_ms", millis(policy.retention)},
                    {"max_files", policy.maxFiles},
                    {"minimum_age_ms", millis(state::kMinimumAge)},
                    {"prune_interval_ms", millis(state::kPruneInterval)},
                    {"op_key", opKey}};
    std::string plain = "directory: " + s.requests.string() + (s.exists ? "" : " (not created yet)") + "\n" +
                        "request secrets: " + std::to_string(s.secrets) + " (" + bytesText(s.bytes) + ")\n";
    if (s.temporary > 0)
        plain += "interrupted writes: " + std::to_string(s.temporary) + "\n";
    if (s.oldest)
        plain += "least recently used: " + isoTime(*s.oldest) +
                 "\nmost recently used: " + isoTime(*s.newest) + "\n";
    plain += "last pruned on use: " + (s.lastPruned ? isoTime(*s.lastPruned) : std::string("never")) + "\n";
    plain +=
        "retention: " + formatDuration(policy.retention) + " after the last use (RELCTL_STATE_RETENTION)\n";
    plain += "at most: " + std::to_string(policy.maxFiles) +
             " secrets (RELCTL_STATE_MAX_FILES), none used within " + formatDuration(state::kMinimumAge) +
             " removed\n";
    if (opKey)
        plain += "RELCTL_OP_KEY is set: new op ids derive their secret from it and keep nothing here\n";
    return output.success(body, plain);
}

int prune(const Arguments& o, const Output& output)
{
    const state::Policy policy = state::Policy::fromEnvironment();
    state::PruneOptions options;
    options.olderThan = o.duration("older-than", true).value_or(policy.retention);
    options.maxFiles = o.positiveInt("max-files").value_or(policy.maxFiles);
    options.dryRun = o.has("dry-run");
    if (options.olderThan < state::kMinimumAge)
        throwUsage("--older-than must be at least " + formatDuration(state::kMinimumAge) +
                   ": nothing used within the last " + formatDuration(state::kMinimumAge) + " is removed");
    const std::filesystem::path requests = state::requestsDirectory();
    const state::PruneReport r = state::prune(requests, options);
    const json body{{"directory", requests.string()},
                    {"dry_run", options.dryRun},
                    {"older_than_ms", millis(options.olderThan)},
                    {"max_files", options.maxFiles},
                    {"examined", r.examined},
                    {"removed", r.removed()},
                    {"removed_by_age", r.removedByAge},
                    {"removed_by_count", r.removedByCount},
                    {"removed_temporary", r.removedTemporary},
                    {"bytes_removed", r.bytesRemoved},
                    {"kept", r.kept}};
    const std::string verb = options.dryRun ? "would remove " : "removed ";
    std::string plain = verb + std::to_string(r.removed()) + " request secrets (" +
                        bytesText(r.bytesRemoved) + ") from " + requests.string() + ": " +
                        std::to_string(r.removedByAge) + " unused for " + formatDuration(options.olderThan) +
                        ", " + std::to_string(r.removedByCount) + " least recently used over " +
                        std::to_string(options.maxFiles) + "; " + std::to_string(r.kept) + " kept\n";
    if (r.removedTemporary > 0)
        plain += verb + std::to_string(r.removedTemporary) + " files of interrupted writes\n";
    return output.success(body, plain);
}

} // namespace

int stateCommand(const std::string& sub, const Arguments& arguments, const Output& output)
{
    if (sub == "show")
        return show(output);
    return prune(arguments, output);
}

} // namespace relctl::cli
