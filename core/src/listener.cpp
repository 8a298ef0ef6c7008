#include "relctl/listener.h"

#include "relctl/error.h"
#include "session.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
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

using Clock = std::chrono::steady_clock;

// Bounds of one follow(): events read, and missing ids asked about again.
constexpr int kPage = 10000;
constexpr std::size_t kQuestions = 10000;

std::string arrayLiteral(const std::vector<long long>& ids)
{
    std::string text = "{";
    for (const long long id : ids) {
        if (text.size() > 1)
            text += ',';
        text += std::to_string(id);
    }
    return text + "}";
}

} // namespace

// How follow() stays exact. An event's id is taken when it is inserted and its
// transaction commits later, so ids below the newest one read (`last`) may
// still appear: the gaps. Each is asked about on every call until it appears
// (reported then) or is settled. A gap is settled when every transaction in
// progress some time (`settle`) after it was noticed has ended: the holder of
// its id then rolled back. The pause covers a transaction that has taken an id
// but not yet a transaction id. Gaps are noticed in id order (`last` only
// grows), so a reference snapshot settles every gap up to an id.
struct EventListener::Impl
{
    session::Connection conn;
    std::vector<std::string> pending;
    std::chrono::milliseconds settle;
    std::optional<long long> last; // the newest event id follow() has read
    // The gaps; true once a settled reference covered the gap while it was
    // not asked about: the next answer that does not find it drops it.
    std::map<long long, bool> gaps;
    // With more gaps than kQuestions, they are asked about in turns from here.
    long long turn = std::numeric_limits<long long>::min();
    struct Mark
    {
        Clock::time_point noticed;
        long long through; // the newest gap noticed then
    };
    std::deque<Mark> marks; // gaps noticed and not under a reference yet
    struct Reference
    {
        std::string snapshot; // taken at least `settle` after the gaps up to `through` were noticed
        long long through;
    };
    std::optional<Reference> reference;
    bool followable = true; // false once the server refused (a login without the reviewer role)
    Receiver receiver{conn, pending};

    Impl(const std::string& conninfo, std::chrono::milliseconds settleTime)
        : conn(conninfo), settle(settleTime)
    {
    }

    void notice(const nlohmann::json& missing)
    {
        long long newest = std::numeric_limits<long long>::min();
        for (const auto& id : missing)
            if (id.is_number_integer()) {
                gaps.emplace(id.get<long long>(), false);
                newest = std::max(newest, id.get<long long>());
            }
        if (newest != std::numeric_limits<long long>::min())
            marks.push_back({Clock::now(), newest});
    }

    // The gaps to ask about now, in id order.
    std::vector<long long> questions()
    {
        std::vector<long long> ids;
        ids.reserve(std::min(gaps.size(), kQuestions));
        if (gaps.size() <= kQuestions) {
            for (const auto& g : gaps)
                ids.push_back(g.first);
            return ids;
        }
        auto it = gaps.lower_bound(turn);
        while (ids.size() < kQuestions) {
            if (it == gaps.end())
                it = gaps.begin();
            ids.push_back(it->first);
            ++it;
        }
        turn = it == gaps.end() ? std::numeric_limits<long long>::min() : it->first;
        std::sort(ids.begin(), ids.end());
        return ids;
    }

    bool gapsThrough(long long id) const { return !gaps.empty() && gaps.begin()->first <= id; }
};

EventListener::EventListener(const std::string& conninfo, std::chrono::milliseconds settle)
{
    try {
        d = std::make_unique<Impl>(conninfo, settle);
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
    const auto add = [&](const std::string& env) {
        if (std::find(envs.begin(), envs.end(), env) == envs.end())
            envs.push_back(env);
    };
    try {
        const Clock::time_point started = Clock::now();
        if (!d->last) {
            nlohmann::json reply;
            {
                pqxx::read_transaction tx(d->conn);
                reply = nlohmann::json::parse(
                    tx.exec_params1("SELECT relctl.events_after(NULL, $1)", kPage)[0].c_str());
            }
            const nlohmann::json last = reply.value("last", nlohmann::json());
            d->last = last.is_number_integer() ? last.get<long long>() : 0; // 0: an empty trail
            d->notice(reply.value("missing", nlohmann::json::array()));
            return envs;
        }
        const std::vector<long long> asked = d->questions();
        std::optional<std::string> reference;
        if (d->reference)
            reference = d->reference->snapshot;
        nlohmann::json reply;
        {
            pqxx::read_transaction tx(d->conn);
            reply =
                nlohmann::json::parse(tx.exec_params1("SELECT relctl.events_after($1, $2, $3::bigint[], $4)",
                                                      *d->last, kPage, arrayLiteral(asked), reference)[0]
                                          .c_str());
        }
        if (reply.value("more", false) || !reply.value("complete", true))
            add("");
        for (const auto& env : reply.value("envs", nlohmann::json::array()))
            if (env.is_string())
                add(env.get<std::string>());
        for (const auto& id : reply.value("found", nlohmann::json::array()))
            if (id.is_number_integer())
                d->gaps.erase(id.get<long long>());
        const auto wasAsked = [&](long long id) {
            return std::binary_search(asked.begin(), asked.end(), id);
        };
        // The answer saw every gap asked about in the snapshot that judged
        // the reference: one not found there never appears.
        const nlohmann::json settled = reply.value("settled", nlohmann::json());
        if (d->reference && settled.is_boolean() && settled.get<bool>()) {
            for (auto it = d->gaps.begin(); it != d->gaps.end() && it->first <= d->reference->through;) {
                if (wasAsked(it->first)) {
                    it = d->gaps.erase(it);
                } else {
                    it->second = true;
                    ++it;
                }
            }
            d->reference.reset();
        }
        for (const long long id : asked)
            if (const auto it = d->gaps.find(id); it != d->gaps.end() && it->second)
                d->gaps.erase(it);
        if (reply.value("last", nlohmann::json()).is_number_integer())
            d->last = std::max(*d->last, reply["last"].get<long long>());
        d->notice(reply.value("missing", nlohmann::json::array()));
        if (d->reference && !d->gapsThrough(d->reference->through))
            d->reference.reset(); // every gap it covered appeared
        if (!d->reference) {
            // This answer's snapshot was taken after `started`: it can judge
            // the gaps noticed at least `settle` before that.
            std::optional<long long> through;
            while (!d->marks.empty() && d->marks.front().noticed + d->settle <= started) {
                through = d->marks.front().through;
                d->marks.pop_front();
            }
            if (through && d->gapsThrough(*through) && reply.value("snapshot", nlohmann::json()).is_string())
                d->reference = Impl::Reference{reply["snapshot"].get<std::string>(), *through};
        }
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

std::size_t EventListener::pendingIds() const
{
    return d->gaps.size();
}

} // namespace relctl
