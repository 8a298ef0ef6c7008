#include "reference.h"

#include "relctl/catalogue.h"
#include "relctl/error.h"
#include "relctl/version.h"

#include <functional>
#include <map>
#include <set>

namespace relctl::cli {

namespace {

void forEachCommand(const CommandReference& command,
                    const std::function<void(const CommandReference&)>& visit)
{
    visit(command);
    for (const CommandReference& sub : command.subcommands)
        forEachCommand(sub, visit);
}

// Body text for roff: a backslash is the escape character, and a line that
// starts with a dot or a quote would be read as a request.
std::string roff(std::string_view text)
{
    std::string out;
    for (char c : text)
        out += c == '\\' ? std::string("\\e") : std::string(1, c);
    if (!out.empty() && (out.front() == '.' || out.front() == '\''))
        out.insert(0, "\\&");
    return out;
}

// An option's name in roff: its hyphens are minus signs, so that a search
// for "--env" finds it and a copy pastes it.
std::string roffName(std::string_view name)
{
    std::string out;
    for (char c : name)
        out += c == '-' ? std::string("\\-") : std::string(1, c);
    return out;
}

void roffOptions(std::string& out, const std::vector<OptionReference>& options)
{
    for (const OptionReference& o : options) {
        out += ".TP\n";
        out += o.positional ? "\\fI" + roff(o.name) + "\\fR" : "\\fB" + roffName(o.name) + "\\fR";
        if (!o.value.empty())
            out += " \\fI" + roff(o.value) + "\\fR";
        out += "\n" + roff(o.help) + (o.required && !o.positional ? " (required)" : "") + "\n";
    }
}

std::string usageLine(const CommandReference& command)
{
    std::string line = "relctl " + command.path;
    for (const OptionReference& o : command.options)
        if (o.positional)
            line += " " + (o.required ? o.name : "[" + o.name + "...]");
    for (const OptionReference& o : command.options)
        if (!o.positional && o.required)
            line += " " + o.name + " " + o.value;
    if (!command.subcommands.empty())
        line += " SUBCOMMAND";
    bool optional = false;
    for (const OptionReference& o : command.options)
        optional = optional || (!o.positional && !o.required);
    return line + (optional ? " [OPTIONS]" : "");
}

std::string bashCompletion(const CommandReference& root)
{
    std::string out = "# bash completion for relctl, generated from its grammar (relctl completion bash).\n"
                      "_relctl() {\n"
                      "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} path= i w\n"
                      "    # The command so far: the words that name commands, in order. After\n"
                      "    # `run ... --` the words are the command run's own.\n"
                      "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
                      "        w=${COMP_WORDS[i]}\n"
                      "        [[ $w == -- ]] && { COMPREPLY=($(compgen -c -- \"$cur\")); return 0; }\n"
                      "        case \"$path/$w\" in\n";
    std::string commands;
    forEachCommand(root, [&](const CommandReference& c) {
        for (const CommandReference& sub : c.subcommands) {
            const std::string name = sub.path.substr(sub.path.rfind(' ') + 1);
            commands += (commands.empty() ? "" : "|") + std::string("'") + c.path + "/" + name + "'";
        }
    });
    out += "        " + commands +
           ") path=${path:+$path }$w ;;\n"
           "        esac\n"
           "    done\n"
           "    # An option's value: files where it names one, else nothing to offer.\n"
           "    case \"$path/$prev\" in\n";
    std::map<std::string, std::vector<std::string>> byKind; // "file", "none" -> patterns
    forEachCommand(root, [&](const CommandReference& c) {
        for (const OptionReference& o : c.options)
            if (!o.positional && !o.value.empty()) {
                const bool file = o.value == "FILE" || o.value == "PATH" || o.value == "DIR";
                byKind[file ? "file" : "none"].push_back("'" + c.path + "/" + o.name + "'");
            }
    });
    for (const auto& [kind, patterns] : byKind) {
        std::string joined;
        for (const std::string& p : patterns)
            joined += (joined.empty() ? "" : "|") + p;
        out += "        " + joined +
               (kind == "file" ? ") COMPREPLY=($(compgen -f -- \"$cur\")); return 0 ;;\n"
                               : ") COMPREPLY=(); return 0 ;;\n");
    }
    out += "    esac\n"
           "    local words\n"
           "    case $path in\n";
    forEachCommand(root, [&](const CommandReference& c) {
        std::string words;
        for (const CommandReference& sub : c.subcommands)
            words += (words.empty() ? "" : " ") + sub.path.substr(sub.path.rfind(' ') + 1);
        for (const OptionReference& o : c.options)
            if (!o.positional)
                words += (words.empty() ? "" : " ") + o.name;
        words += (words.empty() ? "" : " ") + std::string("--help");
        out += "        '" + c.path + "') words='" + words + "' ;;\n";
    });
    out += "    esac\n"
           "    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
           "}\n"
           "complete -F _relctl relctl\n";
    return out;
}

std::string markdownCell(std::string_view text)
{
    std::string out;
    for (char c : text)
        out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
}

} // namespace

std::string manPage(const CommandReference& root)
{
    std::string out =
        ".\\\" Generated from relctl's grammar and catalogue by relctl-docgen: do not edit.\n"
        ".TH RELCTL 1 \"\" \"relctl " +
        std::string(version()) +
        "\" \"User Commands\"\n"
        // Reason codes and option names are not to be hyphenated.
        ".nh\n"
        ".SH NAME\n"
        "relctl \\- release control: leases with fencing tokens and write-time freshness checks\n"
        ".SH SYNOPSIS\n"
        ".B relctl\n"
        "[\\fIGLOBAL OPTIONS\\fR] \\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n"
        ".br\n"
        ".B relctl run\n"
        "\\fB\\-\\-env\\fR \\fIE\\fR \\fB\\-\\-job\\fR \\fIJ\\fR \\fB\\-\\-release\\fR \\fIR\\fR "
        "\\fB\\-\\-generation\\fR \\fIN\\fR [\\fIOPTIONS\\fR] \\fB\\-\\-\\fR \\fICMD\\fR "
        "[\\fIARGS\\fR...]\n"
        ".SH DESCRIPTION\n"
        "relctl keeps two CI release jobs from overwriting the same environment. Every environment "
        "has a bounded, renewable lease held in PostgreSQL with a fencing token that strictly "
        "increases, and a state update is accepted only from the current holder and only when its "
        "generation is newer than what is current, decided in the database transaction that makes "
        "the write. Every accepted and refused operation is recorded in an append-only audit "
        "trail.\n"
        ".PP\n"
        "Global options come before the command, a command's options after it. Each command has its "
        "own \\fB\\-\\-help\\fR.\n"
        ".SH GLOBAL OPTIONS\n";
    roffOptions(out, root.options);
    out += ".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nprint the help of relctl or of the command given, then "
           "exit\n";
    out += ".SH COMMANDS\n";
    forEachCommand(root, [&](const CommandReference& c) {
        if (c.path.empty())
            return;
        out += ".SS \"" + roff(usageLine(c)) + "\"\n" + roff(c.help) + "\n";
        if (!c.subcommands.empty()) {
            std::string names;
            for (const CommandReference& sub : c.subcommands)
                names += (names.empty() ? "" : ", ") + sub.path.substr(sub.path.rfind(' ') + 1);
            out += ".PP\nSubcommands: " + roff(names) + ".\n";
        }
        roffOptions(out, c.options);
    });
    out += ".SH EXIT STATUS\n";
    for (const catalogue::ExitStatus& s : catalogue::kExitStatuses) {
        out += ".TP\n.B " + std::to_string(static_cast<int>(s.code)) + "\n" + roff(s.name) + ": " +
               roff(s.meaning) + ".";
        if (const std::string reasons = catalogue::reasonsFor(s.code); !reasons.empty())
            out += " Refusal reasons: " + roff(reasons) + ".";
        out += "\n";
    }
    out += ".SH ENVIRONMENT\n";
    for (const catalogue::Variable& v : catalogue::kVariables)
        if (!v.setForCommand)
            out += ".TP\n.B " + std::string(v.name) + "\n" + roff(v.meaning) + "\n";
    out +=
        ".PP\nWithout \\fB\\-\\-dsn\\fR and \\fBRELCTL_DSN\\fR, libpq's \\fBPG*\\fR variables name the "
        "database when PGHOST, PGSERVICE or PGDATABASE is set; otherwise relctl uses its embedded database "
        "in $XDG_DATA_HOME/relctl, created and started on first use.\n"
        ".SS \"Set by relctl run for the command it runs\"\n";
    for (const catalogue::Variable& v : catalogue::kVariables)
        if (v.setForCommand)
            out += ".TP\n.B " + std::string(v.name) + "\n" + roff(v.meaning) + "\n";
    out += ".SH SEE ALSO\n"
           ".BR release-console (1),\n"
           ".BR psql (1)\n";
    return out;
}

std::string completionScript(const CommandReference& root, std::string_view shell)
{
    if (shell == "bash")
        return bashCompletion(root);
    if (shell == "zsh")
        // zsh's own bash-completion support runs the same function, so both
        // shells complete from one generated table.
        return "#compdef relctl\n"
               "# zsh completion for relctl, generated from its grammar (relctl completion zsh).\n"
               "autoload -U +X bashcompinit && bashcompinit\n" +
               bashCompletion(root);
    throwUsage("completion: unknown shell \"" + std::string(shell) + "\": expected bash or zsh");
}

std::string markdownReference(const CommandReference& root)
{
    std::string out =
        "# relctl command reference\n\n"
        "For CI authors and operators looking up a command, an exit status or a variable. Generated from\n"
        "relctl's grammar and catalogue (`relctl-docgen markdown`): a test fails when this file differs\n"
        "from what the code accepts, so edit `app/relctl/commandline.cpp` or "
        "`core/include/relctl/catalogue.h`\n"
        "and regenerate (HACKING: the reference). The same text is `man relctl`.\n\n";
    const auto table = [&](const std::vector<OptionReference>& options) {
        if (options.empty())
            return;
        out += "| option | value | |\n| --- | --- | --- |\n";
        for (const OptionReference& o : options)
            out += "| `" + o.name + "` | " + (o.value.empty() ? "" : "`" + o.value + "`") + " | " +
                   markdownCell(o.help) + (o.required && !o.positional ? " (required)" : "") + " |\n";
        out += "\n";
    };
    out += "## Global options\n\n";
    table(root.options);
    forEachCommand(root, [&](const CommandReference& c) {
        if (c.path.empty())
            return;
        out += "## relctl " + c.path + "\n\n" + markdownCell(c.help) + ".\n\n`" + usageLine(c) + "`\n\n";
        table(c.options);
    });
    out += "## Exit status\n\n| code | name | meaning | refusal reasons |\n| --- | --- | --- | --- |\n";
    for (const catalogue::ExitStatus& s : catalogue::kExitStatuses)
        out += "| " + std::to_string(static_cast<int>(s.code)) + " | `" + std::string(s.name) + "` | " +
               markdownCell(s.meaning) + " | " + catalogue::reasonsFor(s.code) + " |\n";
    out += "\n## Environment\n\n| variable | |\n| --- | --- |\n";
    for (const catalogue::Variable& v : catalogue::kVariables)
        if (!v.setForCommand)
            out += "| `" + std::string(v.name) + "` | " + markdownCell(v.meaning) + " |\n";
    out += "\nSet by `relctl run` for the command it runs:\n\n| variable | |\n| --- | --- |\n";
    for (const catalogue::Variable& v : catalogue::kVariables)
        if (v.setForCommand)
            out += "| `" + std::string(v.name) + "` | " + markdownCell(v.meaning) + " |\n";
    return out;
}

} // namespace relctl::cli
