#include "relctl/protocol.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sys/random.h>
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
