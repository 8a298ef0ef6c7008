#include "arguments.h"

#include "relctl/error.h"
#include "relctl/parse.h"

namespace relctl::cli {

std::optional<std::string> durationProblem(const std::string& text, bool positive)
{
    auto d = parseDuration(text);
    if (!d)
        return "invalid duration \"" + text +
               "\": expected an integer with ms, s, m or h (a bare integer means seconds)";
    if (positive && d->count() <= 0)
        return "must be positive, not \"" + text + "\"";
    return std::nullopt;
}

std::optional<std::string> positiveIntProblem(const std::string& text)
{
    if (!parsePositiveInt(text))
        return "invalid value \"" + text + "\": expected a positive 64-bit integer";
    return std::nullopt;
}

std::optional<std::string> environmentNameProblem(const std::string& text)
{
    if (!isValidEnvironmentName(text))
        return "invalid environment name \"" + text + "\": expected ^[a-z0-9][a-z0-9._-]{0,62}$";
    return std::nullopt;
}

std::optional<std::string> emptyProblem(const std::string& text)
{
    if (text.empty())
        return "may not be empty";
    return std::nullopt;
}

namespace {

// The same "--name: problem" line the parser's validators produce.
void check(const std::string& name, const std::optional<std::string>& problem)
{
    if (problem)
        throwUsage("--" + name + ": " + *problem);
}

} // namespace

std::optional<std::string> Arguments::get(const std::string& name) const
{
    auto it = m_values.find(name);
    if (it == m_values.end())
        return std::nullopt;
    return it->second;
}

std::string Arguments::required(const std::string& name) const
{
    auto value = get(name);
    if (!value)
        throwUsage("'" + m_command + "' needs --" + name);
    check(name, emptyProblem(*value));
    return *value;
}

std::string Arguments::positional(std::size_t index, const std::string& what) const
{
    if (index >= m_positionals.size())
        throwUsage("'" + m_command + "' needs " + what);
    return m_positionals[index];
}

std::optional<std::chrono::milliseconds> Arguments::duration(const std::string& name, bool positive) const
{
    auto text = get(name);
    if (!text)
        return std::nullopt;
    check(name, durationProblem(*text, positive));
    return parseDuration(*text);
}

std::optional<std::int64_t> Arguments::positiveInt(const std::string& name) const
{
    auto text = get(name);
    if (!text)
        return std::nullopt;
    check(name, positiveIntProblem(*text));
    return parsePositiveInt(*text);
}

std::optional<std::string> Arguments::environment(const std::string& name) const
{
    auto text = get(name);
    if (!text)
        return std::nullopt;
    return requireEnvironmentName(*text);
}

std::int64_t Arguments::requiredPositiveInt(const std::string& name) const
{
    if (!has(name))
        throwUsage("'" + m_command + "' needs --" + name);
    return *positiveInt(name);
}

std::string Arguments::opIdOrNew() const
{
    return has("op-id") ? required("op-id") : newOperationId();
}

AcquireRequest acquireRequest(const Arguments& o)
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
    if (auto problem = environmentNameProblem(text))
        throwUsage(*problem);
    return text;
}

} // namespace relctl::cli
