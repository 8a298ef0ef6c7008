#include "session.h"

#include "relctl/error.h"
#include "relctl/parse.h"

#include <cstdlib>
#include <fcntl.h>
#include <libpq-fe.h>
#include <set>
#include <sys/socket.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace relctl::session {

namespace {

// A keyword/value value in single quotes, with \ and ' escaped: any value
// (spaces, quotes, an empty password) survives the round trip.
std::string quotedValue(const std::string& value)
{
    std::string out = "'";
    for (char c : value) {
        if (c == '\\' || c == '\'')
            out += '\\';
        out += c;
    }
    return out + "'";
}

std::string seconds(std::chrono::seconds s)
{
    return std::to_string(s.count()) + "s";
}

bool environmentSet(const char* name)
{
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0';
}

// The keywords a connection string (keyword/value or URI) sets, with their
// values, in libpq's order; Error(Usage) for a malformed string.
std::vector<std::pair<std::string, std::string>> settingsOf(const std::string& conninfo)
{
    char* message = nullptr;
    PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &message);
    if (options == nullptr) {
        std::string text = message ? message : "out of memory";
        PQfreemem(message);
        while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
            text.pop_back();
        throwUsage("invalid connection string: " + text);
    }
    std::vector<std::pair<std::string, std::string>> out;
    for (const PQconninfoOption* o = options; o->keyword != nullptr; ++o)
        if (o->val != nullptr)
            out.emplace_back(o->keyword, o->val);
    PQconninfoFree(options);
    return out;
}

} // namespace

std::string boundedConninfo(const std::string& conninfo)
{
    std::string out;
    std::set<std::string> given;
    std::string userOptions;
    for (const auto& [keyword, value] : settingsOf(conninfo)) {
        given.insert(keyword);
        if (keyword == "options")
            userOptions = value;
        else
            out += keyword + "=" + quotedValue(value) + " ";
    }

    // libpq reads PGOPTIONS only when the string has no options; as the
    // string now always has some, carry PGOPTIONS over by hand.
    if (!given.count("options"))
        if (const char* env = std::getenv("PGOPTIONS"))
            userOptions = env;
    std::string serverOptions = "-c lock_timeout=" + seconds(kLockTimeout) +
                                " -c statement_timeout=" + seconds(kStatementTimeout) +
                                " -c idle_in_transaction_session_timeout=" + seconds(kIdleInTransactionTimeout);
    if (!userOptions.empty())
        serverOptions += " " + userOptions;
    out += "options=" + quotedValue(serverOptions);

    const auto add = [&](const char* keyword, const std::string& value) {
        if (!given.count(keyword))
            out += std::string(" ") + keyword + "=" + quotedValue(value);
    };
    if (!environmentSet("PGCONNECT_TIMEOUT"))
        add("connect_timeout", std::to_string(kConnectTimeout.count()));
    add("keepalives", "1");
    add("keepalives_idle", std::to_string(kKeepalivesIdleSeconds));
    add("keepalives_interval", std::to_string(kKeepalivesIntervalSeconds));
    add("keepalives_count", std::to_string(kKeepalivesCount));
    add("tcp_user_timeout", std::to_string(kTcpUserTimeout.count()));
    return out;
}

std::string withDatabase(const std::string& conninfo, const std::string& database)
{
    std::string out;
    for (const auto& [keyword, value] : settingsOf(conninfo))
        if (keyword != "dbname")
            out += keyword + "=" + quotedValue(value) + " ";
    return out + "dbname=" + quotedValue(database);
}

std::string withRole(const std::string& conninfo, const std::string& role)
{
    std::string out;
    std::string serverOptions;
    for (const auto& [keyword, value] : settingsOf(conninfo)) {
        if (keyword == "options")
            serverOptions = value;
        else
            out += keyword + "=" + quotedValue(value) + " ";
    }
    if (serverOptions.empty())
        if (const char* env = std::getenv("PGOPTIONS"))
            serverOptions = env;
    // A role name is an identifier here: relctl's group roles need no quoting.
    serverOptions += (serverOptions.empty() ? "" : " ") + std::string("-c role=") + role;
    return out + "options=" + quotedValue(serverOptions);
}

std::chrono::milliseconds callTimeout()
{
    const char* text = std::getenv("RELCTL_CALL_TIMEOUT");
    if (text == nullptr || *text == '\0')
        return kCallTimeout;
    const auto bound = parseDuration(text);
    if (!bound || bound->count() <= 0)
        throwUsage("invalid RELCTL_CALL_TIMEOUT \"" + std::string(text) +
                   "\": expected a positive duration such as 35s");
    return *bound;
}

std::chrono::milliseconds reconnectWindow()
{
    const char* text = std::getenv("RELCTL_RECONNECT_TIMEOUT");
    if (text == nullptr || *text == '\0')
        return kReconnectWindow;
    const auto window = parseDuration(text);
    if (!window || window->count() < 0)
        throwUsage("invalid RELCTL_RECONNECT_TIMEOUT \"" + std::string(text) +
                   "\": expected a duration such as 15s (0 turns reconnecting off)");
    return *window;
}

CallWatchdog::~CallWatchdog()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
        if (m_socket >= 0)
            close(m_socket);
        m_socket = -1;
    }
    m_changed.notify_all();
    if (m_thread.joinable())
        m_thread.join();
}

void CallWatchdog::arm(int socket, std::chrono::milliseconds bound)
{
    std::lock_guard lock(m_mutex);
    if (m_socket >= 0)
        close(m_socket);
    // A connection without a socket fails at once by itself: nothing to bound.
    m_socket = socket >= 0 ? fcntl(socket, F_DUPFD_CLOEXEC, 0) : -1;
    m_deadline = std::chrono::steady_clock::now() + bound;
    m_fired = false;
    if (!m_thread.joinable())
        m_thread = std::thread(&CallWatchdog::loop, this);
    m_changed.notify_all();
}

bool CallWatchdog::disarm()
{
    std::lock_guard lock(m_mutex);
    if (m_socket >= 0)
        close(m_socket);
    m_socket = -1;
    return m_fired;
}

void CallWatchdog::loop()
{
    std::unique_lock lock(m_mutex);
    while (!m_stopping) {
        if (m_socket < 0) {
            m_changed.wait(lock);
        } else if (std::chrono::steady_clock::now() >= m_deadline) {
            shutdown(m_socket, SHUT_RDWR);
            close(m_socket);
            m_socket = -1;
            m_fired = true;
        } else {
            m_changed.wait_until(lock, m_deadline);
        }
    }
}

} // namespace relctl::session
