#include "commandline.h"

#include "relctl/catalogue.h"
#include "relctl/error.h"
#include "relctl/history.h"
#include "relctl/rehearsal.h"
#include "relctl/version.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <bitset>
#include <functional>
#include <set>

namespace relctl::cli {

namespace {

// --help's notes; the exit codes from the catalogue (relctl/catalogue.h).
std::string notes()
{
    std::string codes;
    for (const catalogue::ExitStatus& s : catalogue::kExitStatuses)
        codes += (codes.empty() ? "" : ", ") + std::to_string(static_cast<int>(s.code)) + " " +
                 std::string(s.name);
    std::string wrapped;
    std::size_t column = 0;
    for (std::size_t start = 0; start < codes.size();) {
        const std::size_t end = std::min(codes.find(", ", start), codes.size());
        const std::string item = codes.substr(start, end - start) + (end < codes.size() ? "," : ".");
        if (column > 0 && column + 1 + item.size() > 80) {
            wrapped += "\n";
            column = 0;
        } else if (column > 0) {
            wrapped += " ";
            ++column;
        }
        wrapped += item;
        column += item.size();
        start = end + 2;
    }
    return R"(--dsn defaults to $RELCTL_DSN, else libpq's PG* variables when PGHOST, PGSERVICE or
PGDATABASE is set, else the embedded database in $XDG_DATA_HOME/relctl (created
and started on first use). The lease handle of renew, release and publish comes
from --lease-file FILE or $RELCTL_LEASE (--lease H also works, but puts the
secret in the process list: a warning says so).
Every connection is bounded: connect_timeout 5 s, lock_timeout 10 s,
statement_timeout 30 s, TCP keepalives; each call waits at most 35 s
($RELCTL_CALL_TIMEOUT), then exits 9.
Durations: an integer with ms, s, m or h (a bare integer means seconds).
A manifest is a JSON object of at most 64 KiB and at most 64 levels of nesting.
Exit codes (man relctl, EXIT STATUS):
)" + wrapped +
           R"(
Each command has its own --help (relctl lease acquire --help).)";
}

constexpr const char* kRunUsage =
    "relctl run --env E --job J --release R --generation N [OPTIONS] -- CMD [ARGS...]";

using Problem = std::function<std::optional<std::string>(const std::string&)>;

// A CLI11 validator with relctl's wording; CLI11 prefixes the option's name.
CLI::Validator rule(Problem problem)
{
    return CLI::Validator(
        [problem = std::move(problem)](std::string& value) { return problem(value).value_or(""); },
        std::string());
}

CLI::Validator oneOf(std::vector<std::string> allowed)
{
    return rule([allowed = std::move(allowed)](const std::string& value) -> std::optional<std::string> {
        if (std::find(allowed.begin(), allowed.end(), value) != allowed.end())
            return std::nullopt;
        std::string list;
        for (const std::string& a : allowed)
            list += (list.empty() ? "" : " or ") + a;
        return "invalid value \"" + value + "\": expected " + list;
    });
}

// "--name VALUE" or "--name=VALUE".
CLI::Option* value(CLI::App* command, const std::string& name, const std::string& valueName,
                   const std::string& help)
{
    return command->add_option("--" + name, help)->type_name(valueName);
}

// A value that may not be empty (a job, a release, who and why).
CLI::Option* text(CLI::App* command, const std::string& name, const std::string& valueName,
                  const std::string& help)
{
    return value(command, name, valueName, help)->check(rule(emptyProblem));
}

CLI::Option* flag(CLI::App* command, const std::string& name, const std::string& help)
{
    return command->add_flag("--" + name, help);
}

CLI::Option* environment(CLI::App* command, const std::string& help)
{
    return value(command, "env", "E", help)->check(rule(environmentNameProblem));
}

CLI::Option* duration(CLI::App* command, const std::string& name, bool positive, const std::string& help)
{
    return value(command, name, "D", help)->check(rule([positive](const std::string& v) {
        return durationProblem(v, positive);
    }));
}

CLI::Option* positiveInt(CLI::App* command, const std::string& name, const std::string& valueName,
                         const std::string& help)
{
    return value(command, name, valueName, help)->check(rule(positiveIntProblem));
}

// A required positional; its description completes "'env add' needs ...".
CLI::Option* positional(CLI::App* command, const std::string& name, const std::string& what)
{
    return command->add_option(name, what)->required();
}

// What every candidate declares (lease acquire, run).
void candidate(CLI::App* command)
{
    environment(command, "the environment")->required();
    text(command, "job", "J", "the CI job")->required();
    text(command, "release", "R", "the release label")->required();
    positiveInt(command, "generation", "N", "the release order the pipeline knows (a positive integer)")
        ->required();
    duration(command, "ttl", true, "the lease's time to live (default: the environment's)");
    duration(command, "wait", false, "queue for up to D when the lease is busy");
    text(command, "op-id", "ID", "the operation id: a retry with the same id replays the outcome");
}

void leaseHandle(CLI::App* command)
{
    value(command, "lease-file", "FILE", "read the lease handle from FILE (default: $RELCTL_LEASE)");
    value(command, "lease", "H",
          "the lease handle itself (visible in the process list: prefer --lease-file)");
}

std::string rehearsalFooter()
{
    std::string text = "Scenarios:\n";
    for (const rehearsal::Scenario& s : rehearsal::scenarios())
        text +=
            "  " + s.name + std::string(12 - std::min<std::size_t>(s.name.size(), 11), ' ') + s.title + "\n";
    return text + "The global --dsn names the server the scratch database is created on (the login needs\n"
                  "CREATEDB and superuser); without one, the embedded default database's server.\n"
                  "Exit 0 when every invariant held, 10 when one broke, 2 for invalid input.";
}

// What --version prints: a line a bug report can quote.
std::string versionText()
{
    return "relctl " + relctl::describedVersion();
}

// The global options, before the command.
void buildGlobals(CLI::App& app)
{
    // Options given twice are reported by parse() (as before CLI11): keep them all.
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    app.require_subcommand(1);
    // Global options: a repeated one takes the last value, as it always did.
    value(&app, "dsn", "CONNINFO", "libpq conninfo or URI of the relctl database")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    flag(&app, "json", "print one JSON object on stdout");
    value(&app, "job-url", "URL", "recorded with the job's events")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.set_version_flag("--version", versionText(), "print relctl's version and source revision, then exit");
}

void buildMigrate(CLI::App* c)
{
    flag(c, "status", "list them with checksums and state instead");
}

void buildEnv(CLI::App* env)
{
    CLI::App* c = env->add_subcommand("add", "declare an environment");
    positional(c, "NAME", "an environment name")->check(rule(environmentNameProblem));
    duration(c, "default-ttl", true, "a lease's time to live when acquire gives none (default 60 s)");
    duration(c, "max-ttl", true, "the longest time to live (default 10 min)");
    c = env->add_subcommand("set", "the environment's queue policy, serialization and promotion gates");
    positional(c, "NAME", "an environment name")->check(rule(environmentNameProblem));
    value(c, "policy", "ordered|newest", "which waiting candidate goes next")
        ->check(oneOf({"ordered", "newest"}));
    value(c, "supersede", "auto|approval", "with newest: skip lower candidates at once or after approval")
        ->check(oneOf({"auto", "approval"}));
    value(c, "serialization", "enforced|off", "off allows a publish without a lease (staged rollout)")
        ->check(oneOf({"enforced", "off"}));
    value(c, "promote-from", "ENV", "take only what ENV accepted first (\"\" clears it)")
        ->check(
            rule([](const std::string& v) { return v.empty() ? std::nullopt : environmentNameProblem(v); }));
    duration(c, "soak", false, "with --promote-from: accepted there at least D ago");
    value(c, "approvals", "K", "distinct approvals a promotion needs here (0-10; 0: none)")
        ->check(rule([](const std::string& v) -> std::optional<std::string> {
            if (v.size() <= 2 && !v.empty() && std::all_of(v.begin(), v.end(), ::isdigit) &&
                std::stoi(v) <= 10)
                return std::nullopt;
            return "invalid value \"" + v + "\": expected an integer from 0 to 10";
        }));
    value(c, "approver-role", "ROLE",
          "only members of this PostgreSQL role may approve or deny here (\"\" clears it)")
        ->check(rule([](const std::string& v) -> std::optional<std::string> {
            if (v.size() <= 63)
                return std::nullopt;
            return "invalid role \"" + v + "\": a PostgreSQL role name has at most 63 characters";
        }));
    env->add_subcommand("list", "environments with current manifest and live lease");
    c = env->add_subcommand("show", "one environment with its current manifest and live lease");
    positional(c, "NAME", "an environment name")->check(rule(environmentNameProblem));
}

void buildLease(CLI::App* lease)
{
    CLI::App* c = lease->add_subcommand("acquire", "take the lease; prints the handle ENV:TOKEN:LEASE_ID");
    candidate(c);
    c = lease->add_subcommand("renew", "extend the lease from the server's now");
    leaseHandle(c);
    duration(c, "ttl", true, "the new time to live (default: the lease's)");
    c = lease->add_subcommand("release", "end the caller's own lease (idempotent)");
    leaseHandle(c);
    c = lease->add_subcommand("show", "the live lease, with remaining_ms");
    environment(c, "the environment")->required();
    c = lease->add_subcommand("revoke", "end the live lease at once");
    environment(c, "the environment")->required();
    text(c, "by", "NAME", "who revokes it")->required();
    text(c, "reason", "TEXT", "why")->required();
}

void buildPublish(CLI::App* c)
{
    c->footer("Without a lease: publish --env E --job J --release R --generation N [--manifest FILE|-]\n"
              "is accepted only while the environment's serialization is off.");
    leaseHandle(c);
    value(c, "manifest", "FILE|-", "the manifest, a JSON object (- reads stdin)");
    text(c, "op-id", "ID", "the operation id: a retry with the same id replays the outcome");
    environment(c, "publish without a lease on this environment");
    text(c, "job", "J", "with --env: the CI job");
    text(c, "release", "R", "with --env: the release label");
    positiveInt(c, "generation", "N", "with --env: the release order");
}

void buildRun(CLI::App* c)
{
    c->footer(std::string(kRunUsage) +
              "\nEverything after -- is the command's own, untouched (a --dsn there is the command's).");
    candidate(c);
    value(c, "manifest", "FILE", "publish this manifest when the command succeeds");
    duration(c, "grace", false, "time between SIGTERM and SIGKILL when the lease is lost (default 10 s)");
}

void buildFreeze(CLI::App* c)
{
    environment(c, "the environment")->required();
    text(c, "by", "NAME", "who freezes it")->required();
    text(c, "reason", "TEXT", "why")->required();
}

void buildUnfreeze(CLI::App* c)
{
    environment(c, "the environment")->required();
    text(c, "by", "NAME", "who unfreezes it")->required();
    text(c, "reason", "TEXT", "why (optional; kept in the audit trail)");
}

void buildQueue(CLI::App* queue)
{
    CLI::App* c =
        queue->add_subcommand("drop", "take a waiting candidate out of its queue (release managers)");
    positional(c, "CANDIDATE", "a candidate id (env show lists the queue)")->check(rule(positiveIntProblem));
    text(c, "by", "NAME", "who drops it")->required();
    text(c, "reason", "TEXT", "why (kept in the audit trail and told to its job)")->required();
}

void buildApprovals(CLI::App* approvals)
{
    CLI::App* c = approvals->add_subcommand("list", "the pending supersession requests");
    environment(c, "only this environment's");
    flag(c, "all", "decided ones too");
}

void buildApprove(CLI::App* c)
{
    positional(c, "ID", "a supersession request id")->check(rule(positiveIntProblem));
    text(c, "by", "NAME", "who approves it")->required();
    value(c, "reason", "TEXT", "why");
}

void buildDeny(CLI::App* c)
{
    positional(c, "ID", "a supersession request id")->check(rule(positiveIntProblem));
    text(c, "by", "NAME", "who denies it")->required();
    text(c, "reason", "TEXT", "why")->required();
}

void buildPromote(CLI::App* promote)
{
    CLI::App* c =
        promote->add_subcommand("request", "open the promotion request of a release before its job asks");
    environment(c, "the environment it is promoted to")->required();
    text(c, "release", "R", "the release label")->required();
    positiveInt(c, "generation", "N", "the release's generation")->required();
    text(c, "by", "NAME", "who asks (cannot approve it)")->required();
    value(c, "reason", "TEXT", "why");
    c = promote->add_subcommand("list", "the open promotion requests");
    environment(c, "only this environment's");
    flag(c, "all", "decided ones too");
    c = promote->add_subcommand("approve", "approve a promotion request");
    positional(c, "ID", "a promotion request id")->check(rule(positiveIntProblem));
    text(c, "by", "NAME", "who approves it (not its requester)")->required();
    value(c, "reason", "TEXT", "why");
    c = promote->add_subcommand("deny", "deny a promotion request (final for that release and generation)");
    positional(c, "ID", "a promotion request id")->check(rule(positiveIntProblem));
    text(c, "by", "NAME", "who denies it")->required();
    text(c, "reason", "TEXT", "why")->required();
}

void buildRollback(CLI::App* c)
{
    c->footer("Name one target. The freshness bar stays: the highest generation ever accepted still\n"
              "refuses older jobs (exit 4), and the next newer candidate adopts as usual. Allowed while\n"
              "frozen; busy (exit 3) while a job holds the lease, unless --wait.");
    environment(c, "the environment")->required();
    text(c, "to-release", "R", "the newest manifest of this release");
    positiveInt(c, "to-generation", "N", "the manifest of this generation");
    positiveInt(c, "to-manifest", "ID", "the manifest with this id (manifest show --history)");
    text(c, "by", "NAME", "who rolls back")->required();
    text(c, "reason", "TEXT", "why")->required();
    duration(c, "wait", false, "wait up to D while a job holds the lease");
    text(c, "op-id", "ID", "the operation id: a retry with the same id replays the outcome");
}

void buildDb(CLI::App* db)
{
    // --demo: release-console --demo's own cluster instead, which only the
    // console starts (it writes the demo's week first).
    const auto demoFlag = [](CLI::App* sub) {
        flag(sub, "demo", "the demo's cluster (release-console --demo) instead of the default");
    };
    demoFlag(db->add_subcommand("status", "where it is and whether it runs"));
    db->add_subcommand("start", "start it (created on first use)");
    demoFlag(db->add_subcommand("stop", "stop its server"));
    demoFlag(db->add_subcommand("path", "print its directory"));
}

void buildState(CLI::App* state)
{
    state->add_subcommand("show", "where they are, how many, and the retention");
    CLI::App* c = state->add_subcommand("prune", "remove the secrets no retry will need any more");
    duration(c, "older-than", true,
             "unused for longer than D (default: $RELCTL_STATE_RETENTION; at least 1h)");
    positiveInt(c, "max-files", "N",
                "then the least recently used beyond N (default: $RELCTL_STATE_MAX_FILES)");
    flag(c, "dry-run", "only say what would be removed");
    c->footer("Nothing used within the last hour is removed. Every use of an op id's secret refreshes it;\n"
              "relctl also prunes on use, at most once an hour.");
}

void buildManifest(CLI::App* manifest)
{
    CLI::App* c = manifest->add_subcommand("show", "the current manifest");
    environment(c, "the environment")->required();
    flag(c, "history", "every manifest and rollback, oldest first");
}

void buildAudit(CLI::App* c)
{
    environment(c, "only this environment's");
    value(c, "job", "J", "only this job's");
    value(c, "reason", "CODE", "only this refusal reason");
    value(c, "operation", "OP", "only this operation");
    value(c, "since", "TIME", "a time, or an age such as 2h");
    positiveInt(c, "limit", "N", "at most N events (default 1000)");
}

void buildTrace(CLI::App* c)
{
    text(c, "job", "J", "the CI job")->required();
}

void buildVerify(CLI::App* c)
{
    environment(c, "only this environment's history");
    value(c, "since", "TIME", "only what was recorded since TIME: a time, or an age such as 2h");
    std::string checks = "Checks (exit 0 when all pass, 10 when one fails):";
    for (const history::CheckInfo& check : history::checks())
        if (check.name != "expected-current-manifest") // rehearsals only: verify expects no release
            checks += "\n  " + check.name + ": " + check.meaning + ".";
    c->footer(checks);
}

void buildOp(CLI::App* op)
{
    CLI::App* c =
        op->add_subcommand("show", "the recorded outcome of an operation id, and what became of it since");
    positional(c, "ID", "an operation id");
}

void buildStatus(CLI::App* c)
{
    text(c, "job", "J", "the CI job")->required();
}

void buildRehearse(CLI::App* c)
{
    c->add_option("SCENARIO", "scenarios to play (default: all)")->expected(0, -1)->allow_extra_args();
    flag(c, "list", "name and explain the scenarios");
    value(c, "like", "ENV", "copy this environment's queue policy, supersede mode and serialization")
        ->check(rule(environmentNameProblem));
    flag(c, "keep", "keep the scratch database afterwards");
    value(c, "dsn", "CONNINFO", "rehearse in this existing, empty test database instead of a scratch one");
    duration(c, "ttl", true, "the scratch environments' lease TTL (default 1500ms)");
    value(c, "report", "FILE", "write a self-contained HTML report");
    value(c, "relctl", "PATH", "the relctl executable the jobs run (default: this one)");
    c->footer(rehearsalFooter());
}

void buildCompletion(CLI::App* c)
{
    positional(c, "SHELL", "bash or zsh")->check(oneOf({"bash", "zsh"}));
}

// A command of the top level: its name and help, whether it only groups
// subcommands, and what adds its options and subcommands. parse() builds only
// the commands its words name: the whole grammar (some 300 options) took a
// relctl process more than a millisecond to build, every CI step paying it.
struct TopLevel
{
    const char* name;
    const char* help;
    bool group;
    void (*build)(CLI::App*);
};

// In --help's order.
constexpr TopLevel kTopLevel[] = {
    {"migrate", "apply the bundled migrations and function modules (as a superuser)", false, buildMigrate},
    {"env", "environments", true, buildEnv},
    {"lease", "the environment's lease", true, buildLease},
    {"publish", "mark the lease's release current", false, buildPublish},
    {"run", "the whole lease life cycle around a command", false, buildRun},
    {"freeze", "refuse acquisitions and publishes on the environment", false, buildFreeze},
    {"unfreeze", "end a dispatch freeze", false, buildUnfreeze},
    {"queue", "the environments' waiting candidates", true, buildQueue},
    {"approvals", "supersession requests", true, buildApprovals},
    {"approve", "approve a supersession request", false, buildApprove},
    {"deny", "deny a supersession request", false, buildDeny},
    {"promote", "promotion requests (env set --promote-from, --approvals)", true, buildPromote},
    {"rollback", "make an earlier accepted manifest current again", false, buildRollback},
    {"db", "the embedded default database", true, buildDb},
    {"state", "the request secrets kept on this machine ($RELCTL_STATE_DIR)", true, buildState},
    {"manifest", "published manifests", true, buildManifest},
    {"audit", "the newest matching events, oldest first", false, buildAudit},
    {"trace", "every refusal of a job with its lease, the lease that beat it and the manifest then", false,
     buildTrace},
    {"verify", "check the recorded history against the protocol's invariants (read-only)", false,
     buildVerify},
    {"op", "operation ids", true, buildOp},
    {"status",
     "what became of a job: unknown, queued, rejected, accepted-running, completed or ended-unpublished, "
     "and what to do next",
     false, buildStatus},
    {"rehearse", "play failure scenarios on a scratch database and check the invariants", false,
     buildRehearse},
    {"completion", "print the shell completion script (bash or zsh), generated from this grammar", false,
     buildCompletion},
};

// The commands chosen so far: the root, then each parsed subcommand.
std::vector<const CLI::App*> chainOf(const CLI::App& root)
{
    std::vector<const CLI::App*> chain{&root};
    while (!chain.back()->get_subcommands().empty())
        chain.push_back(chain.back()->get_subcommands().front());
    return chain;
}

std::string pathOf(const std::vector<const CLI::App*>& chain, std::size_t length)
{
    std::string path;
    for (std::size_t i = 1; i < length; ++i)
        path += (path.empty() ? "" : " ") + chain[i]->get_name();
    return path;
}

std::vector<const CLI::App*> subcommandsOf(const CLI::App& app)
{
    return app.get_subcommands([](const CLI::App*) { return true; });
}

// The flags of the whole grammar, by their long names.
void collectFlags(const CLI::App& app, std::set<std::string>& flags)
{
    for (const CLI::Option* o : app.get_options())
        if (o->get_expected_max() == 0)
            for (const std::string& name : o->get_lnames())
                flags.insert("--" + name);
    for (const CLI::App* sub : subcommandsOf(app))
        collectFlags(*sub, flags);
}

std::string runNeedsSeparator()
{
    return std::string("'run' needs -- before the command: ") + kRunUsage;
}

// A CLI11 parse error in relctl's words. Where the error leaves a word over,
// the word and where it stood say what was wrong; otherwise the error's kind.
std::string usageMessage(const CLI::App& root, const CLI::ParseError& e)
{
    const std::vector<const CLI::App*> chain = chainOf(root);
    for (std::size_t i = 0; i < chain.size(); ++i) {
        const std::vector<std::string> extra = chain[i]->remaining();
        if (extra.empty())
            continue;
        const std::string& word = extra.front();
        const bool option = word.size() > 1 && word.front() == '-';
        const std::string name = option ? word.substr(0, word.find('=')) : word;
        const std::string path = pathOf(chain, i + 1);
        if (i == 0)
            return option ? "unknown global option " + name + " (global options come before the command)"
                          : "unknown command \"" + word + "\" (see relctl --help)";
        if (option)
            return "unknown option " + name + " for '" + path + "'";
        if (!subcommandsOf(*chain[i]).empty())
            return "unknown subcommand '" + path + " " + word + "'";
        if (path == "run")
            return runNeedsSeparator();
        return "unexpected argument \"" + word + "\" for '" + path + "'";
    }
    const CLI::App& last = *chain.back();
    const std::string path = pathOf(chain, chain.size());
    if (dynamic_cast<const CLI::RequiredError*>(&e)) {
        const std::vector<const CLI::App*> subcommands = subcommandsOf(last);
        if (chain.size() == 1)
            return "missing a command (see relctl --help)";
        if (!subcommands.empty()) {
            std::string names;
            for (const CLI::App* sub : subcommands)
                names += (names.empty() ? "" : ", ") + sub->get_name();
            return "missing a subcommand of '" + path + "' (" + names + ")";
        }
        for (const CLI::Option* o : last.get_options())
            if (o->get_required() && o->count() == 0)
                return "'" + path + "' needs " +
                       (o->get_positional() ? o->get_description() : "--" + o->get_lnames().front());
    }
    // CLI11 2.1.2 starts a missing value's message with the option's name.
    if (dynamic_cast<const CLI::ArgumentMismatch*>(&e)) {
        const std::string what = e.what();
        for (const CLI::App* app : chain)
            for (const CLI::Option* o : app->get_options())
                for (const std::string& lname : o->get_lnames())
                    if (what.rfind("--" + lname + ":", 0) == 0)
                        return "option --" + lname + " needs a value";
    }
    return e.what();
}

} // namespace

CommandLine::CommandLine()
    : m_app(std::make_unique<CLI::App>(
          "Release control: leases with fencing tokens and write-time freshness checks.", "relctl"))
{
    buildGlobals(*m_app);
}

CommandLine::~CommandLine() = default;

namespace {

CommandReference referenceOf(const CLI::App& app, const std::string& path)
{
    CommandReference r{path, app.get_description(), {}, {}};
    for (const CLI::Option* o : app.get_options()) {
        if (o == app.get_help_ptr())
            continue;
        OptionReference option;
        option.positional = o->get_positional();
        option.name = option.positional ? o->get_name() : "--" + o->get_lnames().front();
        option.value = o->get_expected_max() == 0 || option.positional ? std::string() : o->get_type_name();
        option.help = o->get_description();
        option.required = o->get_required();
        r.options.push_back(std::move(option));
    }
    for (const CLI::App* sub : subcommandsOf(app))
        r.subcommands.push_back(
            referenceOf(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name()));
    return r;
}

} // namespace

CommandReference CommandLine::reference()
{
    for (const TopLevel& top : kTopLevel) {
        CLI::App* command = m_app->add_subcommand(top.name, top.help);
        top.build(command);
    }
    return referenceOf(*m_app, "");
}

bool CommandLine::jsonRequested() const
{
    return m_app->get_option("--json")->count() > 0;
}

Invocation CommandLine::parse(const std::vector<std::string>& words)
{
    Invocation invocation;
    // Everything after the first "--" belongs to run's command, untouched:
    // relctl never looks at it, so a child's "--dsn" stays the child's.
    const auto separator = std::find(words.begin(), words.end(), "--");
    if (separator != words.end())
        invocation.childCommand.emplace(separator + 1, words.end());

    // CLI11 enters a command only at a word that names it, so the commands
    // these words name, built whole, are all of the grammar this parse can
    // meet. With none named, or help asked for, every command is listed (by
    // name: --help, "unknown command").
    std::bitset<std::size(kTopLevel)> named;
    bool listAll = false;
    for (auto word = words.begin(); word != separator; ++word) {
        listAll = listAll || *word == "--help" || *word == "-h";
        for (std::size_t i = 0; i < std::size(kTopLevel); ++i)
            if (*word == kTopLevel[i].name)
                named.set(i);
    }
    listAll = listAll || named.none();
    for (std::size_t i = 0; i < std::size(kTopLevel); ++i) {
        if (!named.test(i) && !listAll)
            continue;
        CLI::App* command = m_app->add_subcommand(kTopLevel[i].name, kTopLevel[i].help);
        if (kTopLevel[i].group)
            command->require_subcommand(1);
        if (named.test(i))
            kTopLevel[i].build(command);
    }
    // Last: a subcommand takes its parent's footer when it is added.
    m_app->footer(notes());

    std::set<std::string> flags;
    collectFlags(*m_app, flags);
    std::vector<std::string> own;
    std::optional<std::string> flagWithValue;
    for (auto word = words.begin(); word != separator; ++word) {
        const std::size_t eq = word->find('=');
        const bool optionWithValue = word->rfind("--", 0) == 0 && eq != std::string::npos;
        if (optionWithValue && flags.count(word->substr(0, eq))) {
            // CLI11 would read "--all=false" as a flag turned off; relctl's
            // flags never took a value. Left out and reported after parsing
            // the rest, so that a --json before it is known.
            if (!flagWithValue)
                flagWithValue = word->substr(0, eq);
        } else if (optionWithValue && eq + 1 == word->size()) {
            // "--name=" is an empty value, as "--name ''"; CLI11 would take the next word instead.
            own.push_back(word->substr(0, eq));
            own.emplace_back();
        } else {
            own.push_back(*word);
        }
    }
    std::reverse(own.begin(), own.end()); // CLI11 takes its words last first
    try {
        m_app->parse(std::move(own));
    } catch (const CLI::CallForVersion&) {
        invocation.help = versionText() + "\n"; // printed as --help is, exit 0
        return invocation;
    } catch (const CLI::CallForHelp&) {
        invocation.help = m_app->help(); // the help of the deepest command given
        return invocation;
    } catch (const CLI::ParseError& e) {
        throwUsage(usageMessage(*m_app, e));
    }
    if (flagWithValue)
        throwUsage("option " + *flagWithValue + " takes no value");

    const std::vector<const CLI::App*> chain = chainOf(*m_app);
    const CLI::App& command = *chain.back();
    const std::string path = pathOf(chain, chain.size());
    invocation.arguments = Arguments(path);
    for (const CLI::Option* o : command.get_options()) {
        if (o->count() == 0 || o == command.get_help_ptr())
            continue;
        if (o->get_positional()) {
            for (const std::string& v : o->results())
                invocation.arguments.addPositional(v);
            continue;
        }
        const std::string name = o->get_lnames().front();
        if (o->count() > 1)
            throwUsage("option --" + name + " given twice");
        invocation.arguments.set(name, o->get_expected_max() == 0 ? std::string() : o->results().front());
    }
    if (invocation.childCommand && path != "run")
        throwUsage("unexpected argument \"--\" for '" + path + "'");
    if (!invocation.childCommand && path == "run")
        throwUsage(runNeedsSeparator());

    Globals& globals = invocation.globals;
    if (const CLI::Option* dsn = m_app->get_option("--dsn"); dsn->count() > 0)
        globals.dsn = dsn->results().back();
    globals.json = jsonRequested();
    if (const CLI::Option* jobUrl = m_app->get_option("--job-url"); jobUrl->count() > 0)
        globals.jobUrl = jobUrl->results().back();
    return invocation;
}

} // namespace relctl::cli
