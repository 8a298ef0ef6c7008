#pragma once

#include "relctl/error.h"
#include "relctl/parse.h"

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace relctl {

// Who is calling: recorded with every event so a refusal can be traced to the
// job, host and process that attempted it.
struct ClientContext
{
    std::string host;
    int pid = 0;
    std::string jobUrl;

    static ClientContext current(std::string jobUrl = {});
    nlohmann::json toJson() const;
};

struct EnvironmentSpec
{
    std::string name;
    std::optional<std::chrono::milliseconds> defaultTtl;
    std::optional<std::chrono::milliseconds> maxTtl;
};

struct AcquireRequest
{
    std::string env;
    std::string job;
    std::string release;
    std::int64_t generation = 0;
    std::optional<std::chrono::milliseconds> ttl; // the environment's default when empty
    std::string opId;                             // generated when empty
    // How long to wait in the environment's queue when it is busy; empty or
    // zero: answer busy at once.
    std::optional<std::chrono::milliseconds> wait;
    // The request's secret (see requestSecret()); requestSecret(opId) when empty.
    std::string secret;
};

struct PublishRequest
{
    Handle lease;
    std::optional<nlohmann::json> manifest; // a JSON object of at most kMaxManifestBytes
    std::string opId;                       // generated when empty
};

// What a wrapper stopped when it was cancelled or lost its lease, recorded
// with its release (relctl.stop_report): the reviewer learns which process
// group was stopped and how, and that work the command started elsewhere may
// still go on.
struct StopReport
{
    std::string cause;                 // "cancelled" or "lease-lost"
    std::optional<std::string> signal; // what the wrapper received, e.g. "SIGTERM"
    bool commandStarted = false;
    std::optional<int> processGroup;     // the command's
    std::optional<int> exitCode;         // the command's, 128 + signal when killed
    std::optional<std::string> killedBy; // the signal that ended the command
    bool escalated = false;              // SIGKILL was needed after the grace period

    nlohmann::json toJson() const;
};

// A publish without a lease, accepted only while the environment's
// serialization is off (staged rollout); freshness is still checked.
struct UnserializedPublishRequest
{
    std::string env;
    std::string job;
    std::string release;
    std::int64_t generation = 0;
    std::optional<nlohmann::json> manifest;
    std::string opId; // generated when empty
};

// Changes to an environment's queue policy and serialization; empty: unchanged.
struct EnvironmentSettings
{
    std::string name;
    std::optional<std::string> policy;        // ordered | newest
    std::optional<std::string> supersede;     // auto | approval
    std::optional<std::string> serialization; // enforced | off
    // Promotions: the environment a candidate must have been accepted on
    // first ("" clears it), for how long, and how many distinct approvals it
    // needs here (0: none).
    std::optional<std::string> promoteFrom;
    std::optional<std::chrono::milliseconds> soak;
    std::optional<int> approvals;
    // The PostgreSQL role whose members alone may decide this environment's
    // promotion and supersession requests ("" clears it). Initialised, so the
    // settings written as a list of the members before it stay complete.
    std::optional<std::string> approverRole = std::nullopt;
};

// `promote request`: opens the promotion request of (release, generation) on
// env before any job asks, so approvers can decide ahead of the deploy.
struct PromotionRequest
{
    std::string env;
    std::string release;
    std::int64_t generation = 0;
    std::string by;
    std::optional<std::string> reason;
};

// Makes an earlier manifest of env current again; name exactly one target.
// Waits up to `wait` while another job holds the environment's lease.
struct RollbackRequest
{
    std::string env;
    std::optional<std::string> toRelease;
    std::optional<std::int64_t> toGeneration;
    std::optional<std::int64_t> toManifest;
    std::string by;
    std::string reason;
    std::string opId; // generated when empty
    std::optional<std::chrono::milliseconds> wait;
};

struct AuditQuery
{
    std::optional<std::string> env;
    std::optional<std::string> job;
    std::optional<std::string> reason;
    std::optional<std::string> operation;
    // Either an absolute time (anything PostgreSQL reads as timestamptz) or an
    // age measured back from the server's clock.
    std::optional<std::string> since;
    std::optional<std::chrono::milliseconds> sinceAgo;
    std::optional<int> limit;
};

inline constexpr std::size_t kMaxManifestBytes = std::size_t{64} * 1024;
// At most 64 levels of nesting (the object itself is level 1): deeper
// documents serve no release and make recursive JSON code exhaust its stack.
inline constexpr std::size_t kMaxManifestDepth = 64;

// The deepest nesting of arrays and objects in JSON text, counted on the raw
// text (brackets outside strings) without parsing it, so that a hostile
// document is measured without recursion. Meaningful for valid JSON only.
std::size_t jsonTextDepth(std::string_view text);
// The same for a parsed value, walked without recursion.
std::size_t jsonDepth(const nlohmann::json& value);

// The answer to a protocol operation. Refusals and busy are outcomes, not
// errors: they carry the reason and everything the database said about it.
struct Outcome
{
    ExitCode code = ExitCode::Ok;
    std::string reason; // empty when accepted; "busy" or a refusal reason code otherwise
    nlohmann::json body;

    bool accepted() const { return code == ExitCode::Ok; }
    bool replayed() const;
    std::string message() const; // empty when the reply has none

    // An accepted reply as its type (Grant, Publication, ...: relctl/replies_*.h,
    // whose include provides the conversion). A refusal, busy, or a reply
    // without a key the type expects is Error(Internal): a caller asks for
    // the reply only once it knows the outcome was accepted. The body itself
    // stays what the server sent, for --json.
    template <class Reply> Reply reply() const
    {
        const auto shown = [this] {
            return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        };
        if (!accepted())
            throw Error(ExitCode::Internal, "unexpected reply: " + shown());
        try {
            return body.template get<Reply>();
        } catch (const nlohmann::json::exception& e) {
            throw Error(ExitCode::Internal, "unexpected reply: " + shown() + " (" + e.what() + ")");
        }
    }

    // Decodes a protocol function's reply ({"status": "ok"|"busy"|"refused", ...}).
    static Outcome fromReply(nlohmann::json reply);
};

// A fresh operation id: 128 random bits in hex.
std::string newOperationId();

// The secret of the request an op id names. A retry of an acquire presents it
// to be given the acquired lease's id again: an op id alone is no credential
// (migrations/functions/operations.sql). With $RELCTL_OP_KEY (16 to 512
// characters, e.g. a CI secret variable) it is hmacSha256Hex(key, opId), so a
// re-run on another machine with the same key proves itself, and the key
// itself never leaves the process (the secret is a statement parameter, which
// a server's statement log may show).
// Otherwise it is random, created on the first use of the op id and kept in
// $RELCTL_STATE_DIR/requests (default $XDG_STATE_HOME/relctl or
// ~/.local/state/relctl) as a file of mode 0600. Directories it creates have
// mode 0700; a state directory, requests directory or secret file that
// another user owns or may write to (a secret file: read) is refused with
// Error(Usage), as is a symbolic link in place of requests/ or of a secret.
std::string requestSecret(const std::string& opId);

// HMAC-SHA256 (RFC 2104) of message under key, as 64 lower-case hex digits.
std::string hmacSha256Hex(std::string_view key, std::string_view message);

// Reads and validates a manifest (a JSON object of at most 64 KiB and 64
// levels of nesting) from a file, or standard input for "-". Throws
// Error(Usage) naming the problem.
nlohmann::json readManifest(const std::string& path);
// The same checks on a manifest's text; `name` says where it came from in messages.
nlohmann::json parseManifest(std::string_view text, const std::string& name);

} // namespace relctl
