#pragma once

// The pieces every command's grammar is made of (CLI11, private to
// relctl_cli): options with relctl's validation and wording.

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace relctl::cli {

// A problem with a value in relctl's words, or none.
using Problem = std::function<std::optional<std::string>(const std::string&)>;

// A CLI11 validator with relctl's wording; CLI11 prefixes the option's name.
CLI::Validator rule(Problem problem);
CLI::Validator oneOf(std::vector<std::string> allowed);

// "--name VALUE" or "--name=VALUE".
CLI::Option* value(CLI::App* command, const std::string& name, const std::string& valueName,
                   const std::string& help);
// A value that may not be empty (a job, a release, who and why).
CLI::Option* text(CLI::App* command, const std::string& name, const std::string& valueName,
                  const std::string& help);
CLI::Option* flag(CLI::App* command, const std::string& name, const std::string& help);
CLI::Option* environment(CLI::App* command, const std::string& help);
CLI::Option* duration(CLI::App* command, const std::string& name, bool positive, const std::string& help);
CLI::Option* positiveInt(CLI::App* command, const std::string& name, const std::string& valueName,
                         const std::string& help);
// --group G and --match PATTERN: which environments a listing or a bulk
// change takes (both given: those in G whose names match). `what` completes
// the help ("only the environments of group G").
void selection(CLI::App* command, const std::string& what);
std::optional<std::string> groupNameProblem(const std::string& text);
std::optional<std::string> patternProblem(const std::string& text);

// A required positional; its description completes "'env add' needs ...".
CLI::Option* positional(CLI::App* command, const std::string& name, const std::string& what);

// What every candidate declares (lease acquire, run).
void candidate(CLI::App* command);
// --lease-file FILE or --lease H (renew, release, publish).
void leaseHandle(CLI::App* command);

// run's synopsis, for its help and its usage errors.
inline constexpr const char* kRunUsage =
    "relctl run --env E --job J --release R --generation N [OPTIONS] -- CMD [ARGS...]";

} // namespace relctl::cli
