#pragma once

#include "relctl/protocol.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace relctl::cli {

// The options one command accepts: "--name VALUE" (or "--name=VALUE") when it
// takes a value, "--name" alone when it is a flag.
struct OptionSpec
{
    std::string name;
    bool takesValue = true;
};

// A command's parsed words. Anything not in the spec is a usage error (exit 2),
// so a typo never silently changes what a CI job asked for.
class Options
{
public:
    Options(std::string command, const std::vector<std::string>& words, const std::vector<OptionSpec>& specs,
            std::size_t maxPositionals = 0);

    bool has(const std::string& name) const { return m_values.count(name) > 0; }
    std::optional<std::string> get(const std::string& name) const;
    std::string required(const std::string& name) const;
    const std::vector<std::string>& positionals() const { return m_positionals; }
    std::string positional(std::size_t index, const std::string& what) const;

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
AcquireRequest acquireRequest(const Options& o);

} // namespace relctl::cli
