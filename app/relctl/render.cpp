#include "render.h"

#include "output.h"

#include <sstream>

namespace relctl::cli::render {

namespace {

using nlohmann::json;

} // namespace

const json& field(const json& j, const char* key)
{
    static const json null;
    if (!j.is_object())
        return null;
    auto it = j.find(key);
    return it == j.end() ? null : *it;
}

std::string text(const json& j, const char* key)
{
    const json& v = field(j, key);
    if (v.is_null())
        return "-";
    // Values are escaped here, where they enter a rendering: the rendering's
    // own line breaks must survive the escaping at the output edge.
    return escapeControl(v.is_string() ? v.get<std::string>() : dumpJson(v));
}

namespace {

std::string manifestLine(const json& m)
{
    if (m.is_null() || text(m, "release") == "-")
        return "nothing published";
    return text(m, "release") + " (generation " + text(m, "generation") + ") published by job " +
           text(m, "job") + " with token " + text(m, "token") + " at " + text(m, "published_at");
}

std::string leaseLine(const json& l)
{
    if (l.is_null())
        return "no live lease";
    return "held by job " + text(l, "job") + " (release " + text(l, "release") + ", generation " +
           text(l, "generation") + ", token " + text(l, "token") + ") until " + text(l, "expires_at") + ", " +
           text(l, "remaining_ms") + " ms left";
}

} // namespace

std::string environment(const json& env)
{
    std::ostringstream out;
    out << text(env, "name") << ": default ttl " << text(env, "default_ttl_ms") << " ms, max ttl "
        << text(env, "max_ttl_ms") << " ms, last token " << text(env, "last_token") << ", policy "
        << text(env, "policy") << " (supersede " << text(env, "supersede") << "), serialization "
        << text(env, "serialization") << "\n"
        << "  current: " << manifestLine(field(env, "current")) << "\n"
        << "  lease:   " << leaseLine(field(env, "lease")) << "\n";
    const json& frozen = field(env, "frozen");
    if (!frozen.is_null())
        out << "  frozen:  since " << text(frozen, "at") << " by " << text(frozen, "by") << ": "
            << text(frozen, "reason") << "\n";
    for (const json& c : field(env, "queue"))
        out << "  queued:  job " << text(c, "job") << " (release " << text(c, "release") << ", generation "
            << text(c, "generation") << ") since " << text(c, "queued_at") << "\n";
    if (text(env, "pending_supersessions") != "0" && text(env, "pending_supersessions") != "-")
        out << "  " << text(env, "pending_supersessions") << " supersession request(s) await approval\n";
    return out.str();
}

std::string environmentList(const json& reply)
{
    std::string out;
    for (const json& env : field(reply, "environments"))
        out += environment(env);
    return out.empty() ? "no environments\n" : out;
}

std::string lease(const json& reply)
{
    return text(reply, "env") + ": " + leaseLine(field(reply, "lease")) + "\n";
}

std::string manifest(const json& reply)
{
    return text(reply, "env") + ": " + manifestLine(reply) + "\n";
}

std::string manifestHistory(const json& reply)
{
    std::string out;
    for (const json& m : field(reply, "history"))
        out += text(reply, "env") + ": " + manifestLine(m) + "\n";
    return out.empty() ? text(reply, "env") + ": nothing published\n" : out;
}

std::string audit(const json& reply)
{
    std::ostringstream out;
    for (const json& e : field(reply, "events")) {
        out << '#' << text(e, "id") << ' ' << text(e, "at") << ' ' << text(e, "env") << ' '
            << text(e, "operation") << ' ' << text(e, "outcome");
        if (!field(e, "reason").is_null())
            out << ' ' << text(e, "reason");
        out << " job=" << text(e, "job") << " release=" << text(e, "release")
            << " generation=" << text(e, "generation") << " token=" << text(e, "token")
            << " current=" << text(e, "current_release") << '/' << text(e, "current_generation") << '/'
            << text(e, "current_token") << " host=" << text(e, "host") << " pid=" << text(e, "pid");
        if (!field(e, "job_url").is_null())
            out << ' ' << text(e, "job_url");
        out << '\n';
    }
    return out.str();
}

std::string trace(const json& reply)
{
    std::ostringstream out;
    const json& refusals = field(reply, "refusals");
    if (refusals.empty())
        return "job " + text(reply, "job") + " has no refused operations\n";
    for (const json& r : refusals) {
        const json& e = field(r, "event");
        out << '#' << text(e, "id") << ' ' << text(e, "at") << ": " << text(e, "operation") << " on "
            << text(e, "env") << " refused " << text(e, "reason") << " (release " << text(e, "release")
            << ", generation " << text(e, "generation") << ", token " << text(e, "token") << ", host "
            << text(e, "host") << ", pid " << text(e, "pid") << ", op " << text(e, "op_id") << ")\n";
        if (!field(e, "job_url").is_null())
            out << "  job url:          " << text(e, "job_url") << '\n';
        const json& l = field(r, "lease");
        if (!l.is_null())
            out << "  its lease:        token " << text(l, "token") << ", acquired " << text(l, "acquired_at")
                << ", expires " << text(l, "expires_at") << ", ended " << text(l, "ended_at") << " ("
                << text(l, "end_reason") << ")\n";
        const json& b = field(r, "superseded_by");
        if (!b.is_null())
            out << "  newest lease:     token " << text(b, "token") << " held by job " << text(b, "job")
                << " (release " << text(b, "release") << ", generation " << text(b, "generation")
                << "), acquired " << text(b, "acquired_at") << '\n';
        const json& m = field(r, "current_manifest");
        out << "  current manifest: ";
        if (m.is_null())
            out << "nothing published\n";
        else
            out << manifestLine(m) << ", " << text(m, "published_before_ms") << " ms before the refusal\n";
    }
    return out.str();
}

std::string operation(const json& reply)
{
    if (text(reply, "status") == "not-found")
        return "operation " + text(reply, "op_id") +
               ": not found (the database never saw it; a retry is safe)\n";
    const json& outcome = field(reply, "outcome");
    std::string result = text(outcome, "status");
    if (!field(outcome, "reason").is_null())
        result += " " + text(outcome, "reason");
    return "operation " + text(reply, "op_id") + ": " + text(reply, "operation") + " " + result +
           ", recorded at " + text(reply, "recorded_at") + "\n";
}

std::string approvals(const json& reply)
{
    std::ostringstream out;
    const json& list = field(reply, "approvals");
    if (list.empty())
        return "no supersession requests\n";
    for (const json& a : list) {
        const json& w = field(a, "winner");
        out << "request " << text(a, "id") << " on " << text(a, "env") << " (" << text(a, "state")
            << "): job " << text(w, "job") << " (release " << text(w, "release") << ", generation "
            << text(w, "generation") << ") would skip";
        for (const json& c : field(a, "skipped"))
            out << " " << text(c, "job") << " (generation " << text(c, "generation") << ")";
        out << ", opened " << text(a, "opened_at");
        if (!field(a, "decided_by").is_null())
            out << ", decided by " << text(a, "decided_by") << " at " << text(a, "decided_at");
        if (!field(a, "reason").is_null())
            out << ": " << text(a, "reason");
        out << "\n";
    }
    return out.str();
}

} // namespace relctl::cli::render
