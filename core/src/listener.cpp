#include "relctl/listener.h"

#include "relctl/error.h"
#include "session.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <pqxx/pqxx>
#include <spdlog/spdlog.h>

namespace relctl {

namespace {

class Receiver final : public pqxx::notification_receiver
{
public:
    Receiver(pqxx::connection_base& conn, std::vector<std::string>& sink)
        : pqxx::notification_receiver(conn, "relctl"), m_sink(sink)
    {
    }

    void operator()(const std::string& payload, int) override
    {
        auto event = nlohmann::json::parse(payload, nullptr, false);
        std::string env;
        if (event.is_object() && event.contains("env") && event["env"].is_string())
            env = event["env"].get<std::string>();
        if (std::find(m_sink.begin(), m_sink.end(), env) == m_sink.end())
            m_sink.push_back(env);
    }

private:
    std::vector<std::string>& m_sink;
};

} // namespace

struct EventListener::Impl
{
    session::Connection conn;
    std::vector<std::string> pending;
    std::optional<long long> last; // the newest event id follow() has seen
    bool followable = true;        // false once the server refused (a login without the reviewer role)
    Receiver receiver{conn, pending};

    explicit Impl(const std::string& conninfo) : conn(conninfo) {}
};

EventListener::EventListener(const std::string& conninfo)
{
    try {
        d = std::make_unique<Impl>(conninfo);
    } catch (const pqxx::broken_connection& e) {
        throw Error(ExitCode::Unavailable, std::string("database unavailable: ") + e.what());
    } catch (const pqxx::failure& e) {
        throw Error(ExitCode::Unavailable, std::string("cannot listen for events: ") + e.what());
    }
}

EventListener::~EventListener() = default;

int EventListener::socket() const
{
    return d->conn.sock();
}

std::vector<std::string> EventListener::take()
{
    try {
        d->conn.get_notifs();
        if (!d->conn.is_open())
            throw Error(ExitCode::Unavailable, "the event connection was closed");
    } catch (const pqxx::broken_connection& e) {
        throw Error(ExitCode::Unavailable, std::string("the event connection was lost: ") + e.what());
    }
    std::vector<std::string> envs;
    envs.swap(d->pending);
    return envs;
}

std::vector<std::string> EventListener::follow()
{
    std::vector<std::string> envs;
    if (!d->followable)
        return envs;
    try {
        nlohmann::json reply;
        {
            pqxx::read_transaction tx(d->conn);
            reply =
                nlohmann::json::parse(tx.exec_params1("SELECT relctl.events_after($1)", d->last)[0].c_str());
        }
        const bool first = !d->last.has_value();
        if (reply.value("last", nlohmann::json()).is_number_integer())
            d->last = reply["last"].get<long long>();
        else
            d->last = 0; // an empty trail
        if (first)
            return envs;
        if (reply.value("more", false))
            envs.emplace_back();
        for (const auto& env : reply.value("envs", nlohmann::json::array()))
            if (env.is_string() && std::find(envs.begin(), envs.end(), env.get<std::string>()) == envs.end())
                envs.push_back(env.get<std::string>());
    } catch (const pqxx::broken_connection& e) {
        throw Error(ExitCode::Unavailable, std::string("the event connection was lost: ") + e.what());
    } catch (const pqxx::sql_error& e) {
        // Refused, not lost: the announced events still arrive through take().
        spdlog::warn("cannot follow the audit trail ({}); showing announced events only", e.what());
        d->followable = false;
    } catch (const pqxx::failure& e) {
        throw Error(ExitCode::Unavailable, std::string("cannot follow the events: ") + e.what());
    }
    return envs;
}

} // namespace relctl
