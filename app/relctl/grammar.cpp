#include "grammar.h"

#include "arguments.h"

#include <algorithm>

namespace relctl::cli {

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

CLI::Option* value(CLI::App* command, const std::string& name, const std::string& valueName,
                   const std::string& help)
{
    return command->add_option("--" + name, help)->type_name(valueName);
}

CLI::Option* text(CLI::App* command, const std::string& name, const std::string& valueName,
                  const std::string& help)
{
    return value(command, name, valueName, help)->check(rule(emptyProblem));
}

std::optional<std::string> groupNameProblem(const std::string& text)
{
    if (environmentNameProblem(text))
        return "invalid group name \"" + text + "\": expected ^[a-z0-9][a-z0-9._-]{0,62}$";
    return std::nullopt;
}

std::optional<std::string> patternProblem(const std::string& text)
{
    if (text.empty() || text.size() > 200)
        return "a name pattern has 1 to 200 characters";
    return std::nullopt;
}

void selection(CLI::App* command, const std::string& what)
{
    value(command, "group", "G",
          what + " of group G (an environment's group: set with env set --group, "
                 "else its name up to the first '.')")
        ->check(rule(groupNameProblem));
    value(command, "match", "PATTERN",
          what + " whose names match PATTERN, a shell-style glob: * any run of characters, ? any one "
                 "(quote it: '*.prod')")
        ->check(rule(patternProblem));
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

CLI::Option* positional(CLI::App* command, const std::string& name, const std::string& what)
{
    return command->add_option(name, what)->required();
}

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

} // namespace relctl::cli
