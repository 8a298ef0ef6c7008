#include "commandline.h"

#include "command.h"
#include "grammar.h"
#include "relctl/catalogue.h"
#include "relctl/error.h"
#include "relctl/version.h"

#include <CLI/CLI.hpp>
#include <algorithm>
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

// Adds `command` under `parent`: with its options and subcommands when
// `whole`, else only its name and help (what --help and "unknown command"
// list).
CLI::App* addCommand(CLI::App* parent, const Command& command, bool whole)
{
    CLI::App* app = parent->add_subcommand(std::string(command.name), std::string(command.help));
    if (command.group())
        app->require_subcommand(1);
    if (!whole)
        return app;
    if (command.build)
        command.build(app);
    for (const Command& sub : command.subcommands)
        addCommand(app, sub, true);
    return app;
}

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
    for (const Command& command : commands())
        addCommand(m_app.get(), command, true);
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
    const std::span<const Command> all = commands();
    std::vector<bool> named(all.size());
    bool listAll = false;
    for (auto word = words.begin(); word != separator; ++word) {
        listAll = listAll || *word == "--help" || *word == "-h";
        for (std::size_t i = 0; i < all.size(); ++i)
            if (*word == all[i].name)
                named[i] = true;
    }
    listAll = listAll || std::find(named.begin(), named.end(), true) == named.end();
    for (std::size_t i = 0; i < all.size(); ++i)
        if (named[i] || listAll)
            addCommand(m_app.get(), all[i], named[i]);
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
