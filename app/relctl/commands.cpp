#include "commands.h"

#include "options.h"
#include "relctl/database.h"
#include "relctl/error.h"
#include "relctl/logging.h"
#include "relctl/parse.h"
#include "relctl/protocol.h"
#include "render.h"

#include <cstdlib>
#include <functional>
#include <iostream>

namespace relctl::cli {

namespace {

using nlohmann::json;

constexpr const char* kUsage = R"(usage: relctl [--dsn CONNINFO] [--json] [--job-url URL] COMMAND ...

Release control: leases with fencing tokens and write-time freshness checks.

commands:
  migrate [--status]
  env add NAME [--default-ttl D] [--max-ttl D]
  env list
  env show NAME
  lease acquire --env E --job J --release R --generation N [--ttl D] [--op-id ID]
  lease renew [--lease H] [--ttl D]
  lease release [--lease H]
  lease show --env E
  publish [--lease H] [--manifest FILE|-] [--op-id ID]
  manifest show --env E [--history]
  audit [--env E] [--job J] [--reason CODE] [--operation OP] [--since TIME] [--limit N]
  trace --job J
  op show ID

--dsn defaults to $RELCTL_DSN, else libpq's PG* variables; --lease to $RELCTL_LEASE.
Durations: an integer with ms, s, m or h (a bare integer means seconds).
Exit codes: 0 ok, 1 internal error, 2 invalid input, 3 busy, 4 stale generation,
5 lease lost, 6 dispatch frozen, 7 bad lease credentials, 8 op-id conflict,
9 database unavailable.
)";

struct Globals
{
    std::optional<std::string> dsn;
    bool json = false;
    std::string jobUrl;
};

// Writes replies: the JSON object itself with --json, a plain rendering
// otherwise; failures as one line on stderr (and an error object with --json).
class Output
{
public:
    explicit Output(bool json) : m_json(json) {}

    int success(const json& body, const std::string& plain) const
    {
        if (m_json)
            std::cout << body.dump() << '\n';
        else
            std::cout << plain;
        return 0;
    }

    int failure(ExitCode code, const std::string& error, const std::string& message,
                json extra = json::object()) const
    {
        std::cerr << "relctl: " << message << '\n';
        if (m_json) {
            json out{{"error", error}, {"message", message}};
            if (extra.is_object()) {
                extra.erase("status");
                extra.erase("message");
                for (auto& [key, value] : extra.items())
                    out[key] = value;
            }
            std::cout << out.dump() << '\n';
        }
        return static_cast<int>(code);
    }

    // A protocol outcome; the plain text is rendered only for an accepted one
    // (a refusal's reply lacks the fields it would name).
    int outcome(const Outcome& o, const std::function<std::string()>& plain) const
    {
        if (o.accepted()) {
            json body = o.body;
            body.erase("status"); // implied by the exit code
            return success(body, m_json ? std::string() : plain());
        }
        return failure(o.code, o.reason, o.message().empty() ? o.reason : o.message(), o.body);
    }

private:
    bool m_json;
};

class Cli
{
public:
    Cli(Globals globals, std::vector<std::string> words)
        : m_globals(std::move(globals)), m_words(std::move(words)), m_out(m_globals.json)
    {
    }

    int dispatch()
    {
        const std::string command = word(0, "a command");
        if (command == "migrate")
            return migrate();
        if (command == "env")
            return env();
        if (command == "lease")
            return lease();
        if (command == "publish")
            return publish(Options("publish", rest(1), {{"lease"}, {"manifest"}, {"op-id"}}));
        if (command == "manifest") {
            expectSubcommand("manifest", {"show"});
            Options o("manifest show", rest(2), {{"env"}, {"history", false}});
            const std::string env = requireEnvironmentName(o.required("env"));
            json reply = db().showManifest(env, o.has("history"));
            return m_out.success(reply,
                                 o.has("history") ? render::manifestHistory(reply) : render::manifest(reply));
        }
        if (command == "audit")
            return audit();
        if (command == "trace") {
            Options o("trace", rest(1), {{"job"}});
            json reply = db().trace(o.required("job"));
            return m_out.success(reply, render::trace(reply));
        }
        if (command == "op") {
            expectSubcommand("op", {"show"});
            Options o("op show", rest(2), {}, 1);
            json reply = db().showOperation(o.positional(0, "an operation id"));
            return m_out.success(reply, render::operation(reply));
        }
        throwUsage("unknown command \"" + command + "\" (see relctl --help)");
    }

    const Output& output() const { return m_out; }

private:
    std::string word(std::size_t i, const std::string& what) const
    {
        if (i >= m_words.size())
            throwUsage("missing " + what + " (see relctl --help)");
        return m_words[i];
    }

    std::vector<std::string> rest(std::size_t from) const
    {
        return from >= m_words.size() ? std::vector<std::string>{}
                                      : std::vector<std::string>(m_words.begin() + from, m_words.end());
    }

    void expectSubcommand(const std::string& command, std::initializer_list<const char*> allowed) const
    {
        const std::string sub = word(1, "a subcommand of '" + command + "'");
        for (const char* a : allowed)
            if (sub == a)
                return;
        throwUsage("unknown subcommand '" + command + " " + sub + "'");
    }

    // Connects on first use, after the arguments were checked: invalid input
    // is reported without touching the database.
    Database& db()
    {
        if (!m_db) {
            std::string dsn;
            if (m_globals.dsn)
                dsn = *m_globals.dsn;
            else if (const char* env = std::getenv("RELCTL_DSN"))
                dsn = env;
            m_db.emplace(dsn, ClientContext::current(m_globals.jobUrl));
        }
        return *m_db;
    }

    Handle handle(const Options& o) const
    {
        std::optional<std::string> text = o.get("lease");
        if (!text) {
            if (const char* env = std::getenv("RELCTL_LEASE"))
                text = env;
        }
        if (!text || text->empty())
            throwUsage("no lease given: pass --lease HANDLE or set RELCTL_LEASE");
        auto h = parseHandle(*text);
        if (!h)
            throwUsage("malformed lease handle \"" + *text +
                       "\": expected ENV:TOKEN:LEASE_ID (32 hex digits)");
        return *h;
    }

    int migrate()
    {
        Options o("migrate", rest(1), {{"status", false}});
        std::vector<MigrationState> states;
        std::string plain;
        json reply = json::object();
        if (o.has("status")) {
            states = db().migrationStatus();
        } else {
            MigrationReport report = db().migrate();
            states = report.states;
            reply["applied"] = report.applied;
            for (const std::string& name : report.applied)
                plain += "applied " + name + "\n";
            if (report.applied.empty())
                plain += "schema is up to date\n";
        }
        reply["migrations"] = json::array();
        for (const MigrationState& s : states) {
            reply["migrations"].push_back({{"version", s.version},
                                           {"name", s.name},
                                           {"checksum", s.checksum},
                                           {"applied_at", s.appliedAt ? json(*s.appliedAt) : json()},
                                           {"state", s.state}});
            if (o.has("status"))
                plain += s.name + " " + s.state + (s.appliedAt ? " " + *s.appliedAt : std::string()) + "\n";
        }
        return m_out.success(reply, plain);
    }

    int env()
    {
        const std::string sub = word(1, "a subcommand of 'env' (add, list, show)");
        if (sub == "add") {
            Options o("env add", rest(2), {{"default-ttl"}, {"max-ttl"}}, 1);
            EnvironmentSpec spec{requireEnvironmentName(o.positional(0, "an environment name")),
                                 o.duration("default-ttl", true), o.duration("max-ttl", true)};
            json reply = db().addEnvironment(spec);
            return m_out.success(
                reply, "environment " + spec.name +
                           (render::text(reply, "created") == "true" ? " created\n" : " already exists\n"));
        }
        if (sub == "list") {
            Options o("env list", rest(2), {});
            json reply = db().listEnvironments();
            return m_out.success(reply, render::environmentList(reply));
        }
        if (sub == "show") {
            Options o("env show", rest(2), {}, 1);
            json reply = db().showEnvironment(requireEnvironmentName(o.positional(0, "an environment name")));
            return m_out.success(reply, render::environment(reply));
        }
        throwUsage("unknown subcommand 'env " + sub + "'");
    }

    int lease()
    {
        const std::string sub = word(1, "a subcommand of 'lease' (acquire, renew, release, show)");
        if (sub == "acquire") {
            Options o("lease acquire", rest(2),
                      {{"env"}, {"job"}, {"release"}, {"generation"}, {"ttl"}, {"op-id"}});
            AcquireRequest r;
            r.env = requireEnvironmentName(o.required("env"));
            r.job = o.required("job");
            r.release = o.required("release");
            if (!o.has("generation"))
                throwUsage("'lease acquire' needs --generation");
            r.generation = *o.positiveInt("generation");
            r.ttl = o.duration("ttl", true);
            r.opId = o.has("op-id") ? o.required("op-id") : newOperationId();
            Outcome outcome = db().acquire(r);
            return m_out.outcome(outcome, [&] { return render::text(outcome.body, "handle") + "\n"; });
        }
        if (sub == "renew") {
            Options o("lease renew", rest(2), {{"lease"}, {"ttl"}});
            Handle h = handle(o);
            auto ttl = o.duration("ttl", true);
            Outcome outcome = db().renew(h, ttl);
            return m_out.outcome(outcome, [&] {
                return "renewed lease " + std::to_string(h.token) + " on " + h.env + " until " +
                       render::text(outcome.body, "expires_at") + "\n";
            });
        }
        if (sub == "release") {
            Options o("lease release", rest(2), {{"lease"}});
            Handle h = handle(o);
            Outcome outcome = db().release(h);
            return m_out.outcome(outcome, [&] {
                const std::string state = render::text(outcome.body, "state");
                const std::string lease = "lease " + std::to_string(h.token) + " on " + h.env;
                return state == "released" ? "released " + lease + "\n"
                                           : lease + " had already ended (" + state + ")\n";
            });
        }
        if (sub == "show") {
            Options o("lease show", rest(2), {{"env"}});
            json reply = db().showLease(requireEnvironmentName(o.required("env")));
            return m_out.success(reply, render::lease(reply));
        }
        throwUsage("unknown subcommand 'lease " + sub + "'");
    }

    int publish(const Options& o)
    {
        PublishRequest r;
        r.lease = handle(o);
        if (auto path = o.get("manifest"))
            r.manifest = readManifest(*path);
        r.opId = o.has("op-id") ? o.required("op-id") : newOperationId();
        Outcome outcome = db().publish(r);
        return m_out.outcome(outcome, [&] {
            const json& b = outcome.body;
            return "published " + render::text(b, "release") + " (generation " +
                   render::text(b, "generation") + ") on " + r.lease.env + " with token " +
                   std::to_string(r.lease.token) + (outcome.replayed() ? " (replayed)" : "") + "\n";
        });
    }

    int audit()
    {
        Options o("audit", rest(1), {{"env"}, {"job"}, {"reason"}, {"operation"}, {"since"}, {"limit"}});
        AuditQuery q;
        q.env = o.environment("env");
        q.job = o.get("job");
        q.reason = o.get("reason");
        q.operation = o.get("operation");
        if (auto since = o.get("since")) {
            // A duration is an age on the server's clock; anything else is a time.
            if (auto age = parseDuration(*since))
                q.sinceAgo = *age;
            else
                q.since = *since;
        }
        if (auto limit = o.positiveInt("limit")) {
            if (*limit > 1'000'000)
                throwUsage("--limit may not exceed 1000000");
            q.limit = static_cast<int>(*limit);
        }
        json reply = db().audit(q);
        return m_out.success(reply, render::audit(reply));
    }

    Globals m_globals;
    std::vector<std::string> m_words;
    Output m_out;
    std::optional<Database> m_db;
};

} // namespace

int run(int argc, char** argv)
{
    // Bound every connection attempt (libpq waits forever by default) unless
    // the caller chose otherwise; the connection string may still override it.
    setenv("PGCONNECT_TIMEOUT", "5", 0);
    setenv("PGAPPNAME", "relctl", 0);
    configureLogging();

    Globals globals;
    std::vector<std::string> words(argv + 1, argv + argc);
    std::size_t i = 0;
    bool json = false;
    for (const std::string& w : words)
        if (w == "--json")
            json = true; // so that even an early usage error is rendered as JSON
    Output early(json);
    try {
        for (; i < words.size() && words[i].rfind("--", 0) == 0; ++i) {
            const std::string& w = words[i];
            if (w == "--help" || w == "-h") {
                std::cout << kUsage;
                return 0;
            }
            if (w == "--json") {
                globals.json = true;
            } else if (w == "--dsn" || w == "--job-url") {
                if (i + 1 >= words.size())
                    throwUsage("option " + w + " needs a value");
                if (w == "--dsn")
                    globals.dsn = words[i + 1];
                else
                    globals.jobUrl = words[i + 1];
                ++i;
            } else {
                throwUsage("unknown global option " + w + " (global options come before the command)");
            }
        }
        if (i == words.size())
            throwUsage("missing a command (see relctl --help)");
        Cli cli(globals,
                std::vector<std::string>(words.begin() + static_cast<std::ptrdiff_t>(i), words.end()));
        try {
            return cli.dispatch();
        } catch (const Error& e) {
            return cli.output().failure(e.code(), e.reason(), e.what(), e.detail());
        }
    } catch (const Error& e) {
        return early.failure(e.code(), e.reason(), e.what(), e.detail());
    } catch (const std::exception& e) {
        return early.failure(ExitCode::Internal, "internal", std::string("internal error: ") + e.what());
    }
}

} // namespace relctl::cli
