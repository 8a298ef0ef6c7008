#include "relctl/protocol.h"

#include "fnv.h"

#include <algorithm>
#include <array>
#include <climits>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace relctl {

ClientContext ClientContext::current(std::string jobUrl)
{
    std::array<char, HOST_NAME_MAX + 1> name{};
    if (gethostname(name.data(), name.size() - 1) != 0)
        name[0] = '\0';
    return ClientContext{name.data(), static_cast<int>(getpid()), std::move(jobUrl)};
}

nlohmann::json ClientContext::toJson() const
{
    nlohmann::json j{{"host", host}, {"pid", pid}};
    j["job_url"] = jobUrl.empty() ? nlohmann::json() : nlohmann::json(jobUrl);
    return j;
}

namespace {

// A string member, or empty when it is absent or not a string.
std::string stringMember(const nlohmann::json& j, const char* key)
{
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

} // namespace

nlohmann::json StopReport::toJson() const
{
    nlohmann::json j{{"cause", cause}, {"command_started", commandStarted}};
    if (signal)
        j["signal"] = *signal;
    if (processGroup)
        j["process_group"] = *processGroup;
    if (exitCode)
        j["exit_code"] = *exitCode;
    if (killedBy)
        j["killed_by"] = *killedBy;
    if (commandStarted)
        j["escalated"] = escalated;
    return j;
}

bool Outcome::replayed() const
{
    auto it = body.find("replayed");
    return it != body.end() && it->is_boolean() && it->get<bool>();
}

std::string Outcome::message() const
{
    return stringMember(body, "message");
}

Outcome Outcome::fromReply(nlohmann::json reply)
{
    Outcome o;
    if (!reply.is_object())
        throw Error(ExitCode::Internal, "unexpected reply from the database: " + reply.dump());
    const std::string status = stringMember(reply, "status");
    if (status == "ok") {
        o.code = ExitCode::Ok;
    } else if (status == "busy") {
        o.code = ExitCode::Busy;
        o.reason = "busy";
    } else if (status == "refused") {
        o.reason = stringMember(reply, "reason");
        o.code = exitCodeForReason(o.reason);
    } else {
        throw Error(ExitCode::Internal, "unexpected reply from the database: " + reply.dump());
    }
    o.body = std::move(reply);
    return o;
}

std::string newOperationId()
{
    // One getrandom(2) call: a std::random_device is set up anew each time,
    // and its set-up probes the CPU (cpuid, which traps on a virtual machine);
    // a `relctl run` makes three of these before its command starts.
    std::array<unsigned char, 16> bytes{};
    std::size_t filled = 0;
    while (filled < bytes.size()) {
        const ssize_t n = getrandom(bytes.data() + filled, bytes.size() - filled, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            throw Error(ExitCode::Internal, std::string("cannot read random bytes: ") + std::strerror(errno));
        filled += static_cast<std::size_t>(n);
    }
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    out.reserve(2 * bytes.size());
    for (unsigned char b : bytes) {
        out += kDigits[b >> 4];
        out += kDigits[b & 0x0f];
    }
    return out;
}

namespace {

std::filesystem::path stateDirectory()
{
    if (const char* dir = std::getenv("RELCTL_STATE_DIR"); dir && *dir)
        return dir;
    if (const char* dir = std::getenv("XDG_STATE_HOME"); dir && *dir)
        return std::filesystem::path(dir) / "relctl";
    if (const char* home = std::getenv("HOME"); home && *home)
        return std::filesystem::path(home) / ".local" / "state" / "relctl";
    throwUsage("no place to keep request secrets: set RELCTL_STATE_DIR, XDG_STATE_HOME or HOME, "
               "or RELCTL_OP_KEY");
}

// A stable file name for any op id (which may hold any character). Two ids
// sharing a name would share a secret, which gives neither away.
std::string fileNameFor(const std::string& opId)
{
    // The seed is not FNV's offset basis (a digit went missing once), and it
    // stays so: a changed name would lose the secret of a retry that spans
    // an upgrade of relctl.
    return detail::Fnv1a(1469598103934665603ULL).add(opId).hex();
}

[[noreturn]] void stateError(const std::filesystem::path& path, const std::string& what)
{
    throw Error(ExitCode::Internal, "cannot " + what + " " + path.string() + ": " + std::strerror(errno));
}

std::string readSecret(const std::filesystem::path& path)
{
    std::ifstream in(path);
    std::string secret;
    if (!in || !std::getline(in, secret) || secret.size() < 16)
        throw Error(ExitCode::Internal, "unreadable request secret in " + path.string());
    return secret;
}

} // namespace

std::string requestSecret(const std::string& opId)
{
    if (const char* key = std::getenv("RELCTL_OP_KEY"); key && *key) {
        const std::string k = key;
        if (k.size() < 16 || k.size() > 512)
            throwUsage("RELCTL_OP_KEY must have 16 to 512 characters");
        return k + ":" + opId;
    }
    const std::filesystem::path dir = stateDirectory() / "requests";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec)
        throw Error(ExitCode::Internal, "cannot create " + dir.string() + ": " + ec.message());
    const std::filesystem::path path = dir / fileNameFor(opId);
    if (std::filesystem::exists(path, ec))
        return readSecret(path);
    // Written whole under a temporary name, then linked into place: a
    // concurrent first use of the same op id finds either no file or a whole
    // one, and the loser of the race adopts the winner's secret.
    std::string secret = newOperationId() + newOperationId();
    const std::filesystem::path temporary = path.string() + ".tmp." + std::to_string(getpid());
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        stateError(temporary, "create");
    const std::string line = secret + "\n";
    const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    ::close(fd);
    if (!written) {
        ::unlink(temporary.c_str());
        stateError(temporary, "write");
    }
    const int linked = ::link(temporary.c_str(), path.c_str());
    const int linkErrno = errno;
    ::unlink(temporary.c_str());
    if (linked == 0)
        return secret;
    if (linkErrno == EEXIST)
        return readSecret(path);
    errno = linkErrno;
    stateError(path, "create");
}

std::size_t jsonTextDepth(std::string_view text)
{
    std::size_t depth = 0, deepest = 0;
    bool inString = false, escaped = false;
    for (char c : text) {
        if (inString) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '{' || c == '[') {
            deepest = std::max(deepest, ++depth);
        } else if ((c == '}' || c == ']') && depth > 0) {
            --depth;
        }
    }
    return deepest;
}

std::size_t jsonDepth(const nlohmann::json& value)
{
    std::size_t deepest = 0;
    std::vector<std::pair<const nlohmann::json*, std::size_t>> pending{{&value, 1}};
    while (!pending.empty()) {
        const auto [j, level] = pending.back();
        pending.pop_back();
        if (!j->is_structured())
            continue;
        deepest = std::max(deepest, level);
        for (const nlohmann::json& child : *j)
            pending.emplace_back(&child, level + 1);
    }
    return deepest;
}

nlohmann::json readManifest(const std::string& path)
{
    if (path.empty())
        throwUsage("--manifest needs a file name, or - for standard input");
    std::string text;
    if (path == "-") {
        text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    } else {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(path, ec))
            throwUsage("cannot read manifest " + path + ": " +
                       (std::filesystem::exists(path, ec) ? "not a regular file" : "no such file"));
        std::ifstream in(path, std::ios::binary);
        if (!in)
            throwUsage("cannot read manifest " + path);
        // Read at most one byte past the limit: an oversized file is refused
        // without being read whole.
        text.resize(kMaxManifestBytes + 1);
        in.read(text.data(), static_cast<std::streamsize>(text.size()));
        if (in.bad())
            throwUsage("cannot read manifest " + path);
        text.resize(static_cast<std::size_t>(in.gcount()));
    }
    return parseManifest(text, path == "-" ? std::string("from standard input") : path);
}

nlohmann::json parseManifest(std::string_view text, const std::string& name)
{
    if (text.size() > kMaxManifestBytes)
        throwUsage("manifest " + name + " is larger than 65536 bytes (64 KiB), the limit");
    // Before parsing: a deeply nested document is refused without being built.
    if (jsonTextDepth(text) > kMaxManifestDepth)
        throwUsage("manifest " + name + " is nested deeper than " + std::to_string(kMaxManifestDepth) +
                   " levels, the limit");
    nlohmann::json manifest = nlohmann::json::parse(text, nullptr, false);
    if (manifest.is_discarded())
        throwUsage("manifest " + name + " is not valid JSON");
    if (!manifest.is_object())
        throwUsage("manifest " + name + " must be a JSON object");
    return manifest;
}

} // namespace relctl
