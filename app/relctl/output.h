#pragma once

#include "relctl/error.h"
#include "relctl/protocol.h"

#include <algorithm>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace relctl::cli {

using nlohmann::json;

// Control characters in text that echoes input or database values, made
// visible: \n, \r and \t as those two characters, the others as \xHH. What a job
// or a server passes through relctl then cannot start a line of its own in a
// CI log or drive the terminal. keepNewlines: a rendering's own line breaks.
inline bool isEscaped(unsigned char c, bool keepNewlines)
{
    return (c < 0x20 && !(c == '\n' && keepNewlines)) || c == 0x7f;
}

// Whether text holds anything escapeControl would change.
inline bool needsEscaping(std::string_view text, bool keepNewlines = false)
{
    return std::any_of(text.begin(), text.end(), [keepNewlines](char ch) {
        return isEscaped(static_cast<unsigned char>(ch), keepNewlines);
    });
}

// Appends text to out, escaped (see isEscaped).
inline void appendEscaped(std::string& out, std::string_view text, bool keepNewlines = false)
{
    static constexpr char kHex[] = "0123456789abcdef";
    for (char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        if (!isEscaped(c, keepNewlines))
            out += ch;
        else if (c == '\n')
            out += "\\n";
        else if (c == '\r')
            out += "\\r";
        else if (c == '\t')
            out += "\\t";
        else
            out += std::string("\\x") + kHex[c >> 4] + kHex[c & 0xf];
    }
}

inline std::string escapeControl(const std::string& text, bool keepNewlines = false)
{
    std::string out;
    out.reserve(text.size());
    appendEscaped(out, text, keepNewlines);
    return out;
}

// JSON output: invalid UTF-8 echoed from input is replaced rather than
// making the dump throw.
inline std::string dumpJson(const json& j)
{
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Writes replies: the JSON object itself with --json, a plain rendering
// otherwise; failures as one line on stderr (and an error object with --json).
// Plain text and stderr lines are escaped here, at the edge (escapeControl).
class Output
{
public:
    explicit Output(bool asJson) : m_json(asJson) {}

    bool asJson() const { return m_json; }

    // The reply is flushed as soon as it is written, before the connection is
    // closed and the process exits: a job reading the stream has its lease
    // (or its refusal) at once, and a teardown that hangs or dies cannot
    // hold back or lose a reply the server already acknowledged.
    int success(const json& body, const std::string& plain) const
    {
        if (m_json)
            std::cout << dumpJson(body) << '\n';
        else if (needsEscaping(plain, true))
            std::cout << escapeControl(plain, true);
        else
            // The common case, and at 10,000 environments a copy of 700 kB
            // spared.
            std::cout << plain;
        std::cout.flush();
        return 0;
    }

    int failure(ExitCode code, const std::string& error, const std::string& message,
                json extra = json::object()) const
    {
        std::cerr << "relctl: " << escapeControl(message) << '\n';
        if (m_json) {
            json out{{"error", error}, {"message", message}};
            if (extra.is_object()) {
                extra.erase("status");
                extra.erase("message");
                for (auto& [key, value] : extra.items())
                    out[key] = value;
            }
            std::cout << dumpJson(out) << '\n';
            std::cout.flush();
        }
        return static_cast<int>(code);
    }

    // A protocol outcome; the plain text is rendered only for an accepted one
    // (a refusal's reply lacks the fields it would name).
    int outcome(const Outcome& o, const std::function<std::string()>& plain) const
    {
        // A reply recovered after a lost connection says so first, on stderr
        // (and as "reply_lost" in the JSON).
        if (const auto lost = o.body.find("reply_lost"); lost != o.body.end() && lost->is_object())
            std::cerr << "relctl: " << escapeControl(lost->value("note", std::string())) << '\n';
        if (o.accepted()) {
            json body = o.body;
            body.erase("status"); // implied by the exit code
            return success(body, m_json ? std::string() : plain());
        }
        return failure(o.code, o.reason, o.message().empty() ? o.reason : o.message(), o.body);
    }

private:
    bool m_json;
};

} // namespace relctl::cli
