#pragma once

// Private to core: how a reply type is read from and written to JSON from one
// list of its keys. Each replies_<domain>.cpp lists the keys of its types in
// `fields` functions and defines their to_json/from_json with
// RELCTL_JSON_FROM_FIELDS. The `Is` concept lives here, not in a public
// header: Qt 6.4's moc cannot parse <concepts>.

#include "relctl/protocol.h"

#include <concepts>
#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>

namespace relctl {

namespace {

using nlohmann::json;

// Each type's keys are listed once, in a `fields` function that names every
// key with its member and its kind:
//   required   always there;
//   nullable   always there, null when the server has no value (an empty optional);
//   omittable  only in some replies (an empty optional: the key is left out);
//   merged     another reply's keys, in the same object (listed first: the
//              type's own keys are written over them).
// Writer and Reader walk that list: to_json writes it, from_json reads it.

// `Self` is Type, or const Type when writing: one list serves both directions.
template <class Self, class Type>
concept Is = std::same_as<std::remove_const_t<Self>, Type>;

// A member as one JSON value: by its own to_json/from_json, except an Outcome,
// which is carried as the reply it was decoded from.
template <class T> json toValue(const T& value)
{
    return json(value);
}

// (inline, as is fromValue<Outcome>: most files that include this never call
// them, and an unused non-inline function here would be a warning there.)
inline json toValue(const Outcome& outcome)
{
    return outcome.body;
}

template <class T> T fromValue(const json& value)
{
    return value.get<T>();
}

template <> inline Outcome fromValue<Outcome>(const json& value)
{
    return Outcome::fromReply(value);
}

struct Writer
{
    json& j;

    template <class T> void required(const char* key, const T& value) { j[key] = toValue(value); }

    template <class T> void nullable(const char* key, const std::optional<T>& value)
    {
        j[key] = value ? toValue(*value) : json();
    }

    template <class T> void omittable(const char* key, const std::optional<T>& value)
    {
        if (value)
            j[key] = toValue(*value);
    }

    template <class T> void nullableSince(const char* key, const std::optional<T>& value)
    {
        nullable(key, value);
    }

    template <class T> void merged(const T& value) { j.update(json(value)); }

    // A JSON value kept as its compact text (Event::detail): written as the value.
    void jsonText(const char* key, const std::optional<std::string>& text)
    {
        j[key] = text ? json::parse(*text) : json();
    }
};

// Reading is strict: a key the type expects must be there (a missing one is
// json::out_of_range, which Database reports as an unreadable reply), so a
// change of the SQL's shape fails loudly instead of printing defaults.
struct Reader
{
    const json& j;

    template <class T> void required(const char* key, T& out) { out = fromValue<T>(j.at(key)); }

    template <class T> void nullable(const char* key, std::optional<T>& out)
    {
        const json& value = j.at(key);
        if (value.is_null())
            out.reset();
        else
            out = fromValue<T>(value);
    }

    template <class T> void omittable(const char* key, std::optional<T>& out)
    {
        const auto it = j.find(key);
        if (it == j.end())
            out.reset();
        else
            out = fromValue<T>(*it);
    }

    // A nullable key that a later migration added: a schema from before it
    // does not send the key at all, which reads as null (the console talks
    // to databases not yet migrated). Written back always, like nullable.
    template <class T> void nullableSince(const char* key, std::optional<T>& out)
    {
        if (j.contains(key))
            nullable(key, out);
        else
            out.reset();
    }

    template <class T> void merged(T& out) { j.get_to(out); }

    // Read as compact JSON text: nlohmann's dump, keys in byte order.
    void jsonText(const char* key, std::optional<std::string>& out)
    {
        const json& value = j.at(key);
        if (value.is_null())
            out.reset();
        else
            out = value.dump();
    }
};

// `fields` is declared in each replies_<domain>.cpp; the call finds it when
// instantiated (by argument-dependent lookup: Writer and Reader are in this
// namespace).
template <class T> void writeFields(json& j, const T& value)
{
    j = json::object();
    Writer writer{j};
    fields(writer, value);
}

template <class T> void readFields(const json& j, T& value)
{
    Reader reader{j};
    fields(reader, value);
}

} // namespace

} // namespace relctl

// to_json and from_json of a type whose keys its `fields` lists.
// NOLINTBEGIN(bugprone-macro-parentheses): the argument is a type name
#define RELCTL_JSON_FROM_FIELDS(Type)                                                                        \
    void to_json(json& j, const Type& value)                                                                 \
    {                                                                                                        \
        writeFields(j, value);                                                                               \
    }                                                                                                        \
    void from_json(const json& j, Type& value)                                                               \
    {                                                                                                        \
        readFields(j, value);                                                                                \
    }
// NOLINTEND(bugprone-macro-parentheses)
