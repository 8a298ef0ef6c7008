#include "context.h"

#include "relctl/embedded.h"
#include "relctl/error.h"
#include "relctl/parse.h"
#include "run_support.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace relctl::cli {

namespace {

// The handle in a file, surrounding whitespace (a trailing newline) trimmed.
std::string readLeaseFile(const std::string& path)
{
    if (path.empty())
        throwUsage("--lease-file needs a file name");
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        throwUsage("cannot read --lease-file " + path + ": " +
                   (std::filesystem::exists(path, ec) ? "not a regular file" : "no such file"));
    std::ifstream in(path, std::ios::binary);
    std::string text(4096, '\0'); // a handle is about 100 bytes: a large file is not one
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    if (in.bad() || !in.is_open())
        throwUsage("cannot read --lease-file " + path);
    text.resize(static_cast<std::size_t>(in.gcount()));
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos)
        throwUsage("--lease-file " + path + " is empty");
    return text.substr(first, text.find_last_not_of(" \t\r\n") + 1 - first);
}

} // namespace

CommandContext::CommandContext(Invocation invocation)
    : m_globals(std::move(invocation.globals)), m_args(std::move(invocation.arguments)),
      m_childCommand(std::move(invocation.childCommand)), m_out(m_globals.json)
{
}

std::string CommandContext::word(std::size_t i) const
{
    std::istringstream words(m_args.command());
    std::string w;
    for (std::size_t n = 0; n <= i; ++n)
        if (!(words >> w))
            return std::string();
    return w;
}

Database& CommandContext::database(std::optional<std::chrono::milliseconds> wait)
{
    if (!m_db)
        m_db.emplace(connectWithin([this] { return connect(); }, wait, diagnostic));
    return *m_db;
}

Database CommandContext::connect() const
{
    std::string dsn;
    if (auto named = namedDsn())
        dsn = *named;
    else if (embeddedIsDefault())
        dsn = EmbeddedCluster::forCurrentUser().ensureRunning();
    return Database(dsn, ClientContext::current(m_globals.jobUrl));
}

std::optional<std::string> CommandContext::namedDsn() const
{
    if (m_globals.dsn)
        return m_globals.dsn;
    if (const char* env = std::getenv("RELCTL_DSN"); env && *env)
        return std::string(env);
    if (!embeddedIsDefault())
        return std::string();
    return std::nullopt;
}

Handle CommandContext::handle() const
{
    const Arguments& o = m_args;
    if (o.has("lease") && o.has("lease-file"))
        throwUsage("give either --lease or --lease-file, not both");
    std::optional<std::string> text;
    std::string source;
    if (auto path = o.get("lease-file")) {
        text = readLeaseFile(*path);
        source = "in --lease-file " + *path;
    } else if ((text = o.get("lease"))) {
        std::cerr << "relctl: warning: --lease puts the lease secret in the process list; use "
                     "RELCTL_LEASE or --lease-file\n";
        source = "in --lease";
    } else if (const char* env = std::getenv("RELCTL_LEASE")) {
        text = env;
        source = "in RELCTL_LEASE";
    }
    if (!text || text->empty())
        throwUsage("no lease given: pass --lease-file FILE or set RELCTL_LEASE");
    auto h = parseHandle(*text);
    // Not echoed: a near-miss handle still carries most of the secret.
    if (!h)
        throwUsage("malformed lease handle " + source + ": expected ENV:TOKEN:LEASE_ID (32 hex digits)");
    return *h;
}

std::string CommandContext::withoutPasswords(const std::string& message) const
{
    return redactPasswords(message, namedDsn().value_or(std::string()));
}

} // namespace relctl::cli
