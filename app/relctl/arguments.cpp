#include "options.h"

#include "relctl/error.h"
#include "relctl/parse.h"

#include <algorithm>

namespace relctl::cli {

Options::Options(std::string command, const std::vector<std::string>& words,
                 const std::vector<OptionSpec>& specs, std::size_t maxPositionals)
    : m_command(std::move(command))
{
    for (std::size_t i = 0; i < words.size(); ++i) {
        const std::string& word = words[i];
        if (word.rfind("--", 0) != 0 || word == "--") {
            if (m_positionals.size() == maxPositionals)
                throwUsage("unexpected argument \"" + word + "\" for '" + m_command + "'");
            m_positionals.push_back(word);
            continue;
        }
        std::string name = word.substr(2);
        std::optional<std::string> inlineValue;
        if (auto eq = name.find('='); eq != std::string::npos) {
            inlineValue = name.substr(eq + 1);
            name.erase(eq);
        }
        auto spec =
            std::find_if(specs.begin(), specs.end(), [&](const OptionSpec& s) { return s.name == name; });
        if (spec == specs.end())
            throwUsage("unknown option --" + name + " for '" + m_command + "'");
        if (m_values.count(name))
            throwUsage("option --" + name + " given twice");
        if (!spec->takesValue) {
            if (inlineValue)
                throwUsage("option --" + name + " takes no value");
            m_values[name] = "";
        } else if (inlineValue) {
            m_values[name] = *inlineValue;
        } else {
            if (i + 1 >= words.size())
                throwUsage("option --" + name + " needs a value");
            m_values[name] = words[++i];
        }
    }
}

std::optional<std::string> Options::get(const std::string& name) const
{
    auto it = m_values.find(name);
    if (it == m_values.end())
        return std::nullopt;
    return it->second;
}

std::string Options::required(const std::string& name) const
{
    auto value = get(name);
    if (!value)
        throwUsage("'" + m_command + "' needs --" + name);
    if (value->empty())
        throwUsage("--" + name + " may not be empty");
    return *value;
}

std::string Options::positional(std::size_t index, const std::string& what) const
{
    if (index >= m_positionals.size())
        throwUsage("'" + m_command + "' needs " + what);
    return m_positionals[index];
}

std::optional<std::chrono::milliseconds> Options::duration(const std::string& name, bool positive) const
{
    auto text = get(name);
    if (!text)
        return std::nullopt;
    auto d = parseDuration(*text);
    if (!d)
        throwUsage("invalid duration \"" + *text + "\" for --" + name +
                   ": expected an integer with ms, s, m or h (a bare integer means seconds)");
    if (positive && d->count() <= 0)
        throwUsage("--" + name + " must be positive, not \"" + *text + "\"");
    return d;
}

std::optional<std::int64_t> Options::positiveInt(const std::string& name) const
{
    auto text = get(name);
    if (!text)
        return std::nullopt;
    auto n = parsePositiveInt(*text);
    if (!n)
        throwUsage("invalid --" + name + " \"" + *text + "\": expected a positive 64-bit integer");
    return n;
}

std::optional<std::string> Options::environment(const std::string& name) const
{
    auto text = get(name);
    if (!text)
        return std::nullopt;
    return requireEnvironmentName(*text);
}

std::int64_t Options::requiredPositiveInt(const std::string& name) const
{
    if (!has(name))
        throwUsage("'" + m_command + "' needs --" + name);
    return *positiveInt(name);
}

std::string Options::opIdOrNew() const
{
    return has("op-id") ? required("op-id") : newOperationId();
}

AcquireRequest acquireRequest(const Options& o)
{
    AcquireRequest r;
    r.env = requireEnvironmentName(o.required("env"));
    r.job = o.required("job");
    r.release = o.required("release");
    r.generation = o.requiredPositiveInt("generation");
    r.ttl = o.duration("ttl", true);
    r.wait = o.duration("wait", false);
    r.opId = o.opIdOrNew();
    return r;
}

std::string requireEnvironmentName(const std::string& text)
{
    if (!isValidEnvironmentName(text))
        throwUsage("invalid environment name \"" + text + "\": expected ^[a-z0-9][a-z0-9._-]{0,62}$");
    return text;
}

} // namespace relctl::cli
