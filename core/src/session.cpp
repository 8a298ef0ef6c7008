#include "session.h"

#include "relctl/database.h"
#include "relctl/error.h"
#include "relctl/parse.h"

#include <cctype>
#include <cstdlib>
#include <fcntl.h>
#include <libpq-fe.h>
#include <pqxx/nontransaction>
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
        // libpq quotes the piece it could not parse, which may be the
        // password (an invalid percent-encoding in it) or the whole URI.
        throwUsage("invalid connection string: " + redactPasswords(text, conninfo));
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

    // libpq reads PGOPTIONS only when the string has no options; the string
    // then carries it, so that boundsStatement sees what it sets.
    if (!given.count("options"))
        if (const char* env = std::getenv("PGOPTIONS"))
            userOptions = env;
    if (!userOptions.empty())
        out += "options=" + quotedValue(userOptions) + " ";

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

std::string boundsStatement(const std::string& conninfo)
{
    std::string options;
    bool given = false;
    for (const auto& [keyword, value] : settingsOf(conninfo))
        if (keyword == "options") {
            options = value;
            given = true;
        }
    if (!given)
        if (const char* env = std::getenv("PGOPTIONS"))
            options = env;

    // The settings the options name, split as the server splits them
    // (pg_split_opts: words between spaces, a backslash keeps the next
    // character) and read as it reads them: "-c name=value", "-cname=value"
    // or "--name=value", the name in any case, '-' standing for '_'.
    std::vector<std::string> words(1);
    for (std::size_t i = 0; i < options.size(); ++i) {
        const char c = options[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
            if (!words.back().empty())
                words.emplace_back();
        } else if (c == '\\' && i + 1 < options.size()) {
            words.back() += options[++i];
        } else {
            words.back() += c;
        }
    }
    std::set<std::string> named;
    for (std::size_t i = 0; i < words.size(); ++i) {
        std::string setting;
        if (words[i] == "-c" && i + 1 < words.size())
            setting = words[++i];
        else if (words[i].rfind("-c", 0) == 0 || words[i].rfind("--", 0) == 0)
            setting = words[i].substr(2); // "-cname=value", "--name=value"
        std::string name = setting.substr(0, setting.find('='));
        for (char& ch : name)
            ch = ch == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        named.insert(name);
    }

    std::string out;
    for (const auto& [name, value] :
         {std::pair{"lock_timeout", kLockTimeout}, std::pair{"statement_timeout", kStatementTimeout},
          std::pair{"idle_in_transaction_session_timeout", kIdleInTransactionTimeout}})
        if (!named.count(name))
            out += std::string(out.empty() ? "" : "; ") + "SET " + name + " = '" + seconds(value) + "'";
    return out;
}

void applyBounds(pqxx::connection_base& conn, const std::string& conninfo)
{
    if (const std::string bounds = boundsStatement(conninfo); !bounds.empty())
        pqxx::nontransaction(conn).exec(bounds);
}

Connection::Connection(const std::string& conninfo) : pqxx::connection(boundedConninfo(conninfo))
{
    applyBounds(*this, conninfo);
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
