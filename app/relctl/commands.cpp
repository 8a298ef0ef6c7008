#include "commands.h"

#include "dbcommand.h"
#include "options.h"
#include "output.h"
#include "relctl/database.h"
#include "relctl/embedded.h"
#include "relctl/error.h"
#include "relctl/logging.h"
#include "relctl/parse.h"
#include "relctl/protocol.h"
#include "render.h"
#include "run.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
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
  env set NAME [--policy ordered|newest] [--supersede auto|approval]
               [--serialization enforced|off]
  env list
  env show NAME
  lease acquire --env E --job J --release R --generation N [--ttl D] [--wait D] [--op-id ID]
  lease renew [--lease-file FILE] [--ttl D]
  lease release [--lease-file FILE]
  lease show --env E
  lease revoke --env E --by NAME --reason TEXT
  publish [--lease-file FILE] [--manifest FILE|-] [--op-id ID]
  publish --env E --job J --release R --generation N [--manifest FILE|-] [--op-id ID]
          (without a lease: only while the environment's serialization is off)
  run --env E --job J --release R --generation N [--ttl D] [--wait D] [--manifest FILE]
      [--op-id ID] [--grace D] -- CMD [ARGS...]
  freeze --env E --by NAME --reason TEXT
  unfreeze --env E --by NAME
  approvals list [--env E] [--all]
  approve ID --by NAME [--reason TEXT]
  deny ID --by NAME --reason TEXT
  db status|start|stop|path
  manifest show --env E [--history]
  audit [--env E] [--job J] [--reason CODE] [--operation OP] [--since TIME] [--limit N]
  trace --job J
  op show ID

--dsn defaults to $RELCTL_DSN, else libpq's PG* variables when PGHOST, PGSERVICE or
PGDATABASE is set, else the embedded database in $XDG_DATA_HOME/relctl (created
and started on first use). The lease handle of renew, release and publish comes
from --lease-file FILE or $RELCTL_LEASE (--lease H also works, but puts the
secret in the process list: a warning says so).
Every connection is bounded: connect_timeout 5 s, lock_timeout 10 s,
statement_timeout 30 s, TCP keepalives; each call waits at most 35 s
($RELCTL_CALL_TIMEOUT), then exits 9.
Durations: an integer with ms, s, m or h (a bare integer means seconds).
A manifest is a JSON object of at most 64 KiB and at most 64 levels of nesting.
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
            return publish(
                Options("publish", rest(1),
                        {{"lease"},
                         {"lease-file"},
                         {"manifest"},
                         {"op-id"},
                         {"env"},
                         {"job"},
                         {"release"},
                         {"generation"}}));
        if (command == "manifest") {
            expectSubcommand("manifest", {"show"});
            Options o("manifest show", rest(2), {{"env"}, {"history", false}});
            const std::string env = requireEnvironmentName(o.required("env"));
            if (o.has("history")) {
                const ManifestHistory reply = database().manifestHistory(env);
                return m_out.success(toJson(reply), render::manifestHistory(reply));
            }
            const ManifestShow reply = database().showManifest(env);
            return m_out.success(toJson(reply), render::manifest(reply));
        }
        if (command == "audit")
            return audit();
        if (command == "freeze" || command == "unfreeze")
            return freeze(command == "freeze");
        if (command == "approvals" || command == "approve" || command == "deny")
            return approvals();
        if (command == "run")
            return runCommand(RunContext{rest(1), m_out, m_globals.jobUrl, [this] { return connect(); }});
        if (command == "db")
            return dbCommand(rest(1), m_out);
        if (command == "trace") {
            Options o("trace", rest(1), {{"job"}});
            const JobTrace reply = database().trace(o.required("job"));
            return m_out.success(toJson(reply), render::trace(reply));
        }
        if (command == "op") {
            expectSubcommand("op", {"show"});
            Options o("op show", rest(2), {}, 1);
            const OperationRecord reply = database().showOperation(o.positional(0, "an operation id"));
            return m_out.success(toJson(reply), render::operation(reply));
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
    Database& database()
    {
        if (!m_db)
            m_db.emplace(connect());
        return *m_db;
    }

    // --dsn, else $RELCTL_DSN, else libpq's PG* variables when they name a
    // server, else the embedded default database (started on first use).
    Database connect() const
    {
        std::string dsn;
        if (m_globals.dsn)
            dsn = *m_globals.dsn;
        else if (const char* env = std::getenv("RELCTL_DSN"); env && *env)
            dsn = env;
        else if (embeddedIsDefault())
            dsn = EmbeddedCluster::forCurrentUser().ensureRunning();
        return Database(dsn, ClientContext::current(m_globals.jobUrl));
    }

    static std::optional<std::string> oneOf(const Options& o, const std::string& name,
                                            std::initializer_list<const char*> allowed)
    {
        auto value = o.get(name);
        if (!value)
            return value;
        std::string list;
        for (const char* a : allowed) {
            if (*value == a)
                return value;
            list += list.empty() ? a : std::string(" or ") + a;
        }
        throwUsage("invalid --" + name + " \"" + *value + "\": expected " + list);
    }

    // The lease handle is a secret (whoever has it may publish): from
    // --lease-file or $RELCTL_LEASE it stays out of the process list, which
    // any user on the machine can read; --lease still works, with a warning.
    Handle handle(const Options& o) const
    {
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

    // The handle in a file, surrounding whitespace (a trailing newline) trimmed.
    static std::string readLeaseFile(const std::string& path)
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

    int migrate()
    {
        Options o("migrate", rest(1), {{"status", false}});
        std::vector<MigrationState> states;
        std::string plain;
        json reply = json::object();
        if (o.has("status")) {
            states = database().migrationStatus();
        } else {
            MigrationReport report = database().migrate();
            states = report.states;
            reply["applied"] = report.applied;
            for (const std::string& name : report.applied)
                plain += "applied " + escapeControl(name) + "\n";
            if (report.applied.empty())
                plain += "schema is up to date\n";
        }
        reply["migrations"] = json::array();
        for (const MigrationState& s : states) {
            reply["migrations"].push_back({{"kind", s.kind},
                                           {"version", s.version},
                                           {"name", s.name},
                                           {"checksum", s.checksum},
                                           {"applied_at", s.appliedAt ? json(*s.appliedAt) : json()},
                                           {"state", s.state}});
            if (o.has("status"))
                plain += escapeControl(s.name + " " + s.state + (s.appliedAt ? " " + *s.appliedAt : std::string())) +
                         "\n";
        }
        return m_out.success(reply, plain);
    }

    int env()
    {
        const std::string sub = word(1, "a subcommand of 'env' (add, set, list, show)");
        if (sub == "add") {
            Options o("env add", rest(2), {{"default-ttl"}, {"max-ttl"}}, 1);
            EnvironmentSpec spec{requireEnvironmentName(o.positional(0, "an environment name")),
                                 o.duration("default-ttl", true), o.duration("max-ttl", true)};
            const EnvironmentAdded reply = database().addEnvironment(spec);
            return m_out.success(toJson(reply), "environment " + spec.name +
                                                    (reply.created ? " created\n" : " already exists\n"));
        }
        if (sub == "set") {
            Options o("env set", rest(2), {{"policy"}, {"supersede"}, {"serialization"}}, 1);
            EnvironmentSettings settings{requireEnvironmentName(o.positional(0, "an environment name")),
                                         oneOf(o, "policy", {"ordered", "newest"}),
                                         oneOf(o, "supersede", {"auto", "approval"}),
                                         oneOf(o, "serialization", {"enforced", "off"})};
            if (!settings.policy && !settings.supersede && !settings.serialization)
                throwUsage("'env set' needs --policy, --supersede or --serialization");
            const EnvironmentSet reply = database().setEnvironment(settings);
            return m_out.success(toJson(reply), render::environment(reply.environment));
        }
        if (sub == "list") {
            Options o("env list", rest(2), {});
            const EnvironmentList reply = database().listEnvironments();
            return m_out.success(toJson(reply), render::environmentList(reply));
        }
        if (sub == "show") {
            Options o("env show", rest(2), {}, 1);
            const Environment reply =
                database().showEnvironment(requireEnvironmentName(o.positional(0, "an environment name")));
            return m_out.success(toJson(reply), render::environment(reply));
        }
        throwUsage("unknown subcommand 'env " + sub + "'");
    }

    int lease()
    {
        const std::string sub = word(1, "a subcommand of 'lease' (acquire, renew, release, show, revoke)");
        if (sub == "revoke") {
            Options o("lease revoke", rest(2), {{"env"}, {"by"}, {"reason"}});
            const std::string env = requireEnvironmentName(o.required("env"));
            const Revocation reply = database().revoke(env, o.required("by"), o.required("reason"));
            return m_out.success(toJson(reply), render::revocation(reply));
        }
        if (sub == "acquire") {
            Options o("lease acquire", rest(2),
                      {{"env"}, {"job"}, {"release"}, {"generation"}, {"ttl"}, {"op-id"}, {"wait"}});
            Outcome outcome = database().acquire(acquireRequest(o));
            return m_out.outcome(outcome, [&] { return render::text(outcome.body, "handle") + "\n"; });
        }
        if (sub == "renew") {
            Options o("lease renew", rest(2), {{"lease"}, {"lease-file"}, {"ttl"}});
            Handle h = handle(o);
            auto ttl = o.duration("ttl", true);
            Outcome outcome = database().renew(h, ttl);
            return m_out.outcome(outcome, [&] {
                return "renewed lease " + std::to_string(h.token) + " on " + h.env + " until " +
                       render::text(outcome.body, "expires_at") + "\n";
            });
        }
        if (sub == "release") {
            Options o("lease release", rest(2), {{"lease"}, {"lease-file"}});
            Handle h = handle(o);
            Outcome outcome = database().release(h);
            return m_out.outcome(outcome, [&] {
                const std::string state = render::text(outcome.body, "state");
                const std::string lease = "lease " + std::to_string(h.token) + " on " + h.env;
                return state == "released" ? "released " + lease + "\n"
                                           : lease + " had already ended (" + state + ")\n";
            });
        }
        if (sub == "show") {
            Options o("lease show", rest(2), {{"env"}});
            const LeaseShow reply = database().showLease(requireEnvironmentName(o.required("env")));
            return m_out.success(toJson(reply), render::lease(reply));
        }
        throwUsage("unknown subcommand 'lease " + sub + "'");
    }

    int publish(const Options& o)
    {
        if (o.has("env"))
            return publishUnserialized(o);
        for (const char* name : {"job", "release", "generation"})
            if (o.has(name))
                throwUsage(std::string("--") + name + " goes with --env (a publish without a lease)");
        PublishRequest r;
        r.lease = handle(o);
        if (auto path = o.get("manifest"))
            r.manifest = readManifest(*path);
        r.opId = o.opIdOrNew();
        Outcome outcome = database().publish(r);
        return m_out.outcome(outcome, [&] {
            const json& b = outcome.body;
            return "published " + render::text(b, "release") + " (generation " +
                   render::text(b, "generation") + ") on " + r.lease.env + " with token " +
                   std::to_string(r.lease.token) + (outcome.replayed() ? " (replayed)" : "") + "\n";
        });
    }

    // While an environment's serialization is off (staged rollout), a job may
    // publish without a lease; freshness is still checked by the server.
    int publishUnserialized(const Options& o)
    {
        if (o.has("lease") || o.has("lease-file"))
            throwUsage("give either a lease or --env (a publish without a lease), not both");
        UnserializedPublishRequest r;
        r.env = requireEnvironmentName(o.required("env"));
        r.job = o.required("job");
        r.release = o.required("release");
        r.generation = o.requiredPositiveInt("generation");
        if (auto path = o.get("manifest"))
            r.manifest = readManifest(*path);
        r.opId = o.opIdOrNew();
        Outcome outcome = database().publishUnserialized(r);
        return m_out.outcome(outcome, [&] {
            return "published " + escapeControl(r.release) + " (generation " + std::to_string(r.generation) + ") on " +
                   r.env + " without a lease (serialization off)" +
                   (outcome.replayed() ? " (replayed)" : "") + "\n";
        });
    }

    int freeze(bool frozen)
    {
        const std::string command = frozen ? "freeze" : "unfreeze";
        Options o(command, rest(1),
                  frozen ? std::vector<OptionSpec>{{"env"}, {"by"}, {"reason"}}
                         : std::vector<OptionSpec>{{"env"}, {"by"}});
        const std::string env = requireEnvironmentName(o.required("env"));
        const FreezeChange reply = frozen ? database().freeze(env, o.required("by"), o.required("reason"))
                                          : database().unfreeze(env, o.required("by"));
        return m_out.success(toJson(reply), render::environment(reply.environment));
    }

    int approvals()
    {
        const std::string command = word(0, "a command");
        if (command == "approvals") {
            expectSubcommand("approvals", {"list"});
            Options o("approvals list", rest(2), {{"env"}, {"all", false}});
            const Approvals reply = database().approvals(o.environment("env"), o.has("all"));
            return m_out.success(toJson(reply), render::approvals(reply));
        }
        const bool approve = command == "approve";
        Options o(command, rest(1), {{"by"}, {"reason"}}, 1);
        const std::string idText = o.positional(0, "a supersession request id");
        auto id = parsePositiveInt(idText);
        if (!id)
            throwUsage("invalid request id \"" + idText + "\": expected a positive integer");
        std::optional<std::string> reason = approve ? o.get("reason") : std::optional(o.required("reason"));
        const Decision reply = database().decide(*id, approve, o.required("by"), reason);
        return m_out.success(toJson(reply), render::approvals(Approvals{{reply.supersession}}));
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
        const AuditTrail reply = database().audit(q);
        return m_out.success(toJson(reply), render::audit(reply));
    }

    Globals m_globals;
    std::vector<std::string> m_words;
    Output m_out;
    std::optional<Database> m_db;
};

} // namespace

int run(int argc, char** argv)
{
    // Core bounds every connection attempt and call (connect_timeout 5 s
    // unless PGCONNECT_TIMEOUT or the connection string says otherwise).
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
