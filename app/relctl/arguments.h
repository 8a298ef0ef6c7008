#pragma once

#include "relctl/protocol.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace relctl::cli {

// Why a value is not acceptable, or nothing when it is. One wording for the
// command line's validators (commandline.cpp) and for the accessors below.
std::optional<std::string> durationProblem(const std::string& text, bool positive);
std::optional<std::string> positiveIntProblem(const std::string& text);
std::optional<std::string> environmentNameProblem(const std::string& text);
std::optional<std::string> emptyProblem(const std::string& text);

// One command's options and positionals, as the command line parsed them
// (commandline.h): by then unknown options, missing values, options given
// twice, missing required options and invalid values were rejected. What is
// left here is reading, converting, and the rules that span several options
// (publish with a lease or with --env).
class Arguments
{
public:
    explicit Arguments(std::string command = std::string()) : m_command(std::move(command)) {}

    // Filled by the parser: an option's value ("" for a flag), the positionals in order.
    void set(const std::string& name, std::string value) { m_values[name] = std::move(value); }
    void addPositional(std::string value) { m_positionals.push_back(std::move(value)); }

    // The command's words, e.g. "lease acquire".
    const std::string& command() const { return m_command; }

    bool has(const std::string& name) const { return m_values.count(name) > 0; }
    std::optional<std::string> get(const std::string& name) const;
    std::string required(const std::string& name) const;
    std::string positional(std::size_t index, const std::string& what) const;
    const std::vector<std::string>& positionals() const { return m_positionals; }

    // Typed accessors: each throws Error(Usage) naming the option and the value.
    std::optional<std::chrono::milliseconds> duration(const std::string& name, bool positive) const;
    std::optional<std::int64_t> positiveInt(const std::string& name) const;
    std::optional<std::string> environment(const std::string& name) const;
    std::int64_t requiredPositiveInt(const std::string& name) const;
    // --op-id, or a new random one when it is not given.
    std::string opIdOrNew() const;

private:
    std::string m_command;
    std::map<std::string, std::string> m_values;
    std::vector<std::string> m_positionals;
};

std::string requireEnvironmentName(const std::string& text);

// What every candidate declares: --env, --job, --release, --generation, and
// the optional --ttl, --wait and --op-id (lease acquire, run).
AcquireRequest acquireRequest(const Arguments& o);

} // namespace relctl::cli
