#include "commands.h"

#include "arguments.h"
#include "commandline.h"
#include "dbcommand.h"
#include "output.h"
#include "reference.h"
#include "rehearse.h"
#include "relctl/database.h"
#include "relctl/embedded.h"
#include "relctl/error.h"
#include "relctl/history.h"
#include "relctl/logging.h"
#include "relctl/parse.h"
#include "relctl/protocol.h"
#include "render.h"
#include "run.h"
#include "run_support.h"
#include "statecommand.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

namespace relctl::cli {

namespace {

using nlohmann::json;

class Cli
{
public:
    explicit Cli(Invocation invocation)
        : m_globals(std::move(invocation.globals)), m_args(std::move(invocation.arguments)),
          m_childCommand(std::move(invocation.childCommand)), m_out(m_globals.json)
    {
    }

    // The command line was parsed and checked (commandline.h); each handler
    // reads its own arguments from m_args.
    int dispatch()
    {
        const std::string command = word(0);
        if (command == "migrate")
            return migrate();
        if (command == "env")
            return env();
        if (command == "lease")
            return lease();
        if (command == "publish")
            return publish(m_args);
        if (command == "manifest") {
            const Arguments& o = m_args;
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
        if (command == "verify")
            return verify();
        if (command == "freeze" || command == "unfreeze")
            return freeze(command == "freeze");
        if (command == "approvals" || command == "approve" || command == "deny")
            return approvals();
        if (command == "queue")
            return queue();
        if (command == "promote")
            return promote();
        if (command == "rollback")
            return rollback();
        if (command == "run")
            return runCommand(RunContext{m_args, m_childCommand.value(), m_out, m_globals.jobUrl,
                                         [this] { return connect(); }});
        if (command == "db")
            return dbCommand(word(1), m_args.has("demo"), m_out);
        if (command == "state")
            return stateCommand(word(1), m_args, m_out);
        if (command == "completion") {
            CommandLine grammar;
            std::cout << completionScript(grammar.reference(), m_args.positional(0, "SHELL"));
            return 0;
        }
        if (command == "rehearse")
            return rehearseCommand(RehearseContext{m_args, m_out, namedDsn()});
        if (command == "trace") {
            const Arguments& o = m_args;
            const JobTrace reply = database().trace(o.required("job"));
            return m_out.success(toJson(reply), render::trace(reply));
        }
        if (command == "status") {
            const JobStatus reply = database().jobStatus(m_args.required("job"));
            return m_out.success(toJson(reply), render::status(reply));
        }
        if (command == "op") {
            const Arguments& o = m_args;
            const OperationRecord reply = database().showOperation(o.positional(0, "an operation id"));
            return m_out.success(toJson(reply), render::operation(reply));
        }
        throw noHandler();
    }

    const Output& output() const { return m_out; }

    // A message with the passwords of the connection string masked (core
    // masks where it quotes one; this is the last line of defence).
    std::string withoutPasswords(const std::string& message) const
    {
        return redactPasswords(message, namedDsn().value_or(std::string()));
    }

private:
    // The i-th word of the command, e.g. "acquire" of "lease acquire" ("" past the end).
    std::string word(std::size_t i) const
    {
        std::istringstream words(m_args.command());
        std::string w;
        for (std::size_t n = 0; n <= i; ++n)
            if (!(words >> w))
                return std::string();
        return w;
    }

    // The grammar and the handlers name the same commands; a command parsed
    // but not handled is relctl's own bug.
    Error noHandler() const { return Error(ExitCode::Internal, "no handler for '" + m_args.command() + "'"); }

    // Connects on first use, after the arguments were checked: invalid input
    // is reported without touching the database. `wait`: the command's --wait,
    // within which a connection the server is slow to answer is tried again.
    Database& database(std::optional<std::chrono::milliseconds> wait = std::nullopt)
    {
        if (!m_db)
            m_db.emplace(connectWithin([this] { return connect(); }, wait));
        return *m_db;
    }

    // --dsn, else $RELCTL_DSN, else libpq's PG* variables when they name a
    // server, else the embedded default database (started on first use).
    Database connect() const
    {
        std::string dsn;
        if (auto named = namedDsn())
            dsn = *named;
        else if (embeddedIsDefault())
            dsn = EmbeddedCluster::forCurrentUser().ensureRunning();
        return Database(dsn, ClientContext::current(m_globals.jobUrl));
    }

    // --dsn, else $RELCTL_DSN, else "" when libpq's PG* variables name a
    // server; nothing when the embedded default database is meant.
    std::optional<std::string> namedDsn() const
    {
        if (m_globals.dsn)
            return m_globals.dsn;
        if (const char* env = std::getenv("RELCTL_DSN"); env && *env)
            return std::string(env);
        if (!embeddedIsDefault())
            return std::string();
        return std::nullopt;
    }

    // The lease handle is a secret (whoever has it may publish): from
    // --lease-file or $RELCTL_LEASE it stays out of the process list, which
    // any user on the machine can read; --lease still works, with a warning.
    Handle handle(const Arguments& o) const
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
        const Arguments& o = m_args;
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
                plain += escapeControl(s.name + " " + s.state +
                                       (s.appliedAt ? " " + *s.appliedAt : std::string())) +
                         "\n";
        }
        return m_out.success(reply, plain);
    }

    int env()
    {
        const std::string sub = word(1);
        const Arguments& o = m_args;
        if (sub == "add") {
            EnvironmentSpec spec{requireEnvironmentName(o.positional(0, "an environment name")),
                                 o.duration("default-ttl", true), o.duration("max-ttl", true)};
            const EnvironmentAdded reply = database().addEnvironment(spec);
            return m_out.success(toJson(reply), "environment " + spec.name +
                                                    (reply.created ? " created\n" : " already exists\n"));
        }
        if (sub == "set") {
            EnvironmentSettings settings{
                requireEnvironmentName(o.positional(0, "an environment name")),
                o.get("policy"),
                o.get("supersede"),
                o.get("serialization"),
                o.get("promote-from"),
                o.duration("soak", false),
                o.has("approvals") ? std::optional(std::stoi(o.required("approvals"))) : std::nullopt,
                o.get("approver-role")};
            if (!settings.policy && !settings.supersede && !settings.serialization && !settings.promoteFrom &&
                !settings.soak && !settings.approvals && !settings.approverRole)
                throwUsage("'env set' needs --policy, --supersede, --serialization, --promote-from, --soak, "
                           "--approvals or --approver-role");
            const EnvironmentSet reply = database().setEnvironment(settings);
            return m_out.success(toJson(reply), render::environment(reply.environment));
        }
        if (sub == "list") {
            const EnvironmentList reply = database().listEnvironments();
            return m_out.success(toJson(reply), render::environmentList(reply));
        }
        if (sub == "show") {
            const Environment reply =
                database().showEnvironment(requireEnvironmentName(o.positional(0, "an environment name")));
            return m_out.success(toJson(reply), render::environment(reply));
        }
        throw noHandler();
    }

    int lease()
    {
        const std::string sub = word(1);
        const Arguments& o = m_args;
        if (sub == "revoke") {
            const std::string env = requireEnvironmentName(o.required("env"));
            const Revocation reply = database().revoke(env, o.required("by"), o.required("reason"));
            return m_out.success(toJson(reply), render::revocation(reply));
        }
        if (sub == "acquire") {
            const AcquireRequest request = acquireRequest(o);
            Outcome outcome = database(request.wait).acquire(request);
            return m_out.outcome(outcome, [&] { return render::text(outcome.body, "handle") + "\n"; });
        }
        if (sub == "renew") {
            Handle h = handle(o);
            auto ttl = o.duration("ttl", true);
            Outcome outcome = database().renew(h, ttl);
            return m_out.outcome(outcome, [&] {
                return "renewed lease " + std::to_string(h.token) + " on " + h.env + " until " +
                       render::text(outcome.body, "expires_at") + "\n";
            });
        }
        if (sub == "release") {
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
            const LeaseShow reply = database().showLease(requireEnvironmentName(o.required("env")));
            return m_out.success(toJson(reply), render::lease(reply));
        }
        throw noHandler();
    }

    int publish(const Arguments& o)
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
    int publishUnserialized(const Arguments& o)
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
            return "published " + escapeControl(r.release) + " (generation " + std::to_string(r.generation) +
                   ") on " + r.env + " without a lease (serialization off)" +
                   (outcome.replayed() ? " (replayed)" : "") + "\n";
        });
    }

    int freeze(bool frozen)
    {
        const Arguments& o = m_args;
        const std::string env = requireEnvironmentName(o.required("env"));
        const FreezeChange reply = frozen ? database().freeze(env, o.required("by"), o.required("reason"))
                                          : database().unfreeze(env, o.required("by"), o.get("reason"));
        return m_out.success(toJson(reply), render::environment(reply.environment));
    }

    int queue()
    {
        const Arguments& o = m_args;
        const std::string idText = o.positional(0, "a candidate id");
        const auto id = parsePositiveInt(idText);
        if (!id)
            throwUsage("invalid candidate id \"" + idText + "\": expected a positive integer");
        const Outcome outcome = database().dropCandidate(*id, o.required("by"), o.required("reason"));
        return m_out.outcome(outcome, [&] {
            return "dropped candidate " + idText + " (job " + render::text(outcome.body, "job") +
                   ", generation " + render::text(outcome.body, "generation") + ") from the queue of " +
                   render::text(outcome.body, "env") + "\n";
        });
    }

    int approvals()
    {
        const std::string command = word(0);
        const Arguments& o = m_args;
        if (command == "approvals") {
            const Approvals reply = database().approvals(o.environment("env"), o.has("all"));
            return m_out.success(toJson(reply), render::approvals(reply));
        }
        const bool approve = command == "approve";
        const std::string idText = o.positional(0, "a supersession request id");
        auto id = parsePositiveInt(idText);
        if (!id)
            throwUsage("invalid request id \"" + idText + "\": expected a positive integer");
        std::optional<std::string> reason = approve ? o.get("reason") : std::optional(o.required("reason"));
        const Decision reply = database().decide(*id, approve, o.required("by"), reason);
        return m_out.success(toJson(reply), render::approvals(Approvals{{reply.supersession}}));
    }

    int promote()
    {
        const std::string sub = word(1);
        const Arguments& o = m_args;
        if (sub == "list") {
            const Promotions reply = database().promotions(o.environment("env"), o.has("all"));
            return m_out.success(toJson(reply), render::promotions(reply));
        }
        Outcome outcome;
        if (sub == "request") {
            PromotionRequest r{requireEnvironmentName(o.required("env")), o.required("release"),
                               o.requiredPositiveInt("generation"), o.required("by"), o.get("reason")};
            outcome = database().requestPromotion(r);
        } else {
            const bool approve = sub == "approve";
            const std::string idText = o.positional(0, "a promotion request id");
            auto id = parsePositiveInt(idText);
            if (!id)
                throwUsage("invalid promotion request id \"" + idText + "\": expected a positive integer");
            outcome =
                database().decidePromotion(*id, approve, o.required("by"),
                                           approve ? o.get("reason") : std::optional(o.required("reason")));
        }
        return m_out.outcome(outcome, [&] {
            std::string out;
            if (outcome.body.contains("message"))
                out = render::text(outcome.body, "message") + "\n";
            return out + render::promotions(Promotions{{outcome.body.get<Promotion>()}});
        });
    }

    int rollback()
    {
        const Arguments& o = m_args;
        RollbackRequest r;
        r.env = requireEnvironmentName(o.required("env"));
        r.toRelease = o.get("to-release");
        r.toGeneration = o.positiveInt("to-generation");
        r.toManifest = o.positiveInt("to-manifest");
        if ((r.toRelease ? 1 : 0) + (r.toGeneration ? 1 : 0) + (r.toManifest ? 1 : 0) != 1)
            throwUsage("'rollback' needs exactly one of --to-release, --to-generation and --to-manifest");
        r.by = o.required("by");
        r.reason = o.required("reason");
        r.wait = o.duration("wait", false);
        r.opId = o.opIdOrNew();
        Outcome outcome = database(r.wait).rollback(r);
        return m_out.outcome(outcome, [&] { return render::rollback(outcome.body); });
    }

    int audit()
    {
        const Arguments& o = m_args;
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

    // Read-only: relctl.history() needs relctl_reviewer only.
    int verify()
    {
        const Arguments& o = m_args;
        const std::optional<std::string> env = o.environment("env");
        const history::History h = history::load(database(), env, o.get("since"));
        const std::vector<history::Verdict> verdicts = history::check(h);
        json checks = json::array();
        for (const history::Verdict& v : verdicts)
            checks.push_back(
                {{"name", v.name}, {"passed", v.passed}, {"detail", v.detail}, {"violations", v.violations}});
        const bool passed = history::allPassed(verdicts);
        const json body{{"passed", passed},
                        {"env", env ? json(*env) : json()},
                        {"since", h.since ? json(*h.since) : json()},
                        {"checks", std::move(checks)}};
        m_out.success(body, render::verdicts(verdicts));
        return static_cast<int>(passed ? ExitCode::Ok : ExitCode::Violations);
    }

    Globals m_globals;
    Arguments m_args;
    std::optional<std::vector<std::string>> m_childCommand;
    Output m_out;
    std::optional<Database> m_db;
};

// $RELCTL_DSN, or "": for masking its password where the command line was
// not understood.
std::string environmentDsn()
{
    const char* env = std::getenv("RELCTL_DSN");
    return env ? env : "";
}

} // namespace

int run(int argc, char** argv)
{
    // Core bounds every connection attempt and call (connect_timeout 5 s
    // unless PGCONNECT_TIMEOUT or the connection string says otherwise).
    setenv("PGAPPNAME", "relctl", 0);
    configureLogging();

    CommandLine commandLine;
    // A usage error is rendered as JSON when --json came before it.
    const auto early = [&] { return Output(commandLine.jsonRequested()); };
    try {
        Invocation invocation = commandLine.parse(std::vector<std::string>(argv + 1, argv + argc));
        if (invocation.help) {
            std::cout << *invocation.help;
            return 0;
        }
        Cli cli(std::move(invocation));
        try {
            return cli.dispatch();
        } catch (const Error& e) {
            return cli.output().failure(e.code(), e.reason(), cli.withoutPasswords(e.what()), e.detail());
        }
    } catch (const Error& e) {
        return early().failure(e.code(), e.reason(), redactPasswords(e.what(), environmentDsn()), e.detail());
    } catch (const std::exception& e) {
        return early().failure(ExitCode::Internal, "internal",
                               redactPasswords(std::string("internal error: ") + e.what(), environmentDsn()));
    }
}

} // namespace relctl::cli
