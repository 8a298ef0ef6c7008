#pragma once

#include "arguments.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace relctl::cli {

// The options that come before the command.
struct Globals
{
    std::optional<std::string> dsn;
    bool json = false;
    std::string jobUrl;
};

// One command line, parsed and checked; nothing has touched a database yet.
struct Invocation
{
    Globals globals;
    Arguments arguments; // the command's own, arguments.command() names it ("lease acquire")
    // The words after the first "--", untouched: the child's command line of
    // `run` (always set for run; for any other command a "--" is a usage error).
    std::optional<std::vector<std::string>> childCommand;
    // --help was asked for: print this on stdout and exit 0, nothing else.
    std::optional<std::string> help;
};

// The grammar as data: what the manual page, the completion scripts and the
// command reference are generated from (reference.h), so none of them can
// drift from what parse() accepts.
struct OptionReference
{
    std::string name;  // "--env"; a positional's value name ("NAME")
    std::string value; // the value's name ("ENV"); empty for a flag
    std::string help;
    bool required = false;
    bool positional = false;
};

struct CommandReference
{
    std::string path; // "lease acquire"; empty for relctl itself
    std::string help;
    std::vector<OptionReference> options;
    std::vector<CommandReference> subcommands;
};

// relctl's grammar (CLI11): every command, its options, their validation and
// the generated --help. Global options come before the command; a command's
// options after it.
class CommandLine
{
public:
    CommandLine();
    ~CommandLine();
    CommandLine(const CommandLine&) = delete;
    CommandLine& operator=(const CommandLine&) = delete;

    // words: argv without the program name. Bad usage throws Error(Usage)
    // with one line in relctl's wording. Once per CommandLine: it adds the
    // commands the words name to the grammar.
    Invocation parse(const std::vector<std::string>& words);

    // Every command, built whole (parse() builds only those its words name).
    // Once per CommandLine, instead of parse().
    CommandReference reference();

    // Whether --json was among the global options, also after parse() threw:
    // a usage error is then rendered as a JSON error object too.
    bool jsonRequested() const;

private:
    std::unique_ptr<CLI::App> m_app;
};

} // namespace relctl::cli
