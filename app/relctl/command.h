#pragma once

#include <span>
#include <string_view>

namespace CLI {
class App;
}

namespace relctl::cli {

class CommandContext;

// One command of relctl: its name, its help, what adds its options to the
// grammar, and its handler. A group (env, lease, ...) has no handler: its
// subcommands are a table of their own. These tables (groups/*.cpp, one per
// group of commands, composed in commandtable.cpp) are the one place a
// command is written: the grammar (CommandLine), dispatch, --help, relctl(1),
// the completion scripts and docs/reference/commands.md are all read from them.
struct Command
{
    std::string_view name;
    std::string_view help;
    void (*build)(CLI::App*) = nullptr;    // adds the command's options; none: it has none
    int (*run)(CommandContext&) = nullptr; // none: a group
    std::span<const Command> subcommands = {};

    bool group() const { return !subcommands.empty(); }
};

// relctl's commands, in --help's order.
std::span<const Command> commands();

// The command a parsed path names ("lease acquire"), or nullptr.
const Command* findCommand(std::string_view path);

} // namespace relctl::cli
