#include "command.h"
#include "groups/groups.h"

#include <vector>

namespace relctl::cli {

std::span<const Command> commands()
{
    static const std::vector<Command> all = [] {
        std::vector<Command> out;
        for (const std::span<const Command> group : {groups::setup(), groups::lease(), groups::decisions(),
                                                     groups::reading(), groups::watch(), groups::local()})
            out.insert(out.end(), group.begin(), group.end());
        return out;
    }();
    return all;
}

const Command* findCommand(std::string_view path)
{
    std::span<const Command> level = commands();
    const Command* found = nullptr;
    while (!path.empty()) {
        const std::size_t space = path.find(' ');
        const std::string_view word = path.substr(0, space);
        path = space == std::string_view::npos ? std::string_view() : path.substr(space + 1);
        found = nullptr;
        for (const Command& c : level)
            if (c.name == word)
                found = &c;
        if (found == nullptr)
            return nullptr;
        level = found->subcommands;
    }
    return found;
}

} // namespace relctl::cli
