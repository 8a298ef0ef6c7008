#pragma once

#include "relctl/error.h"
#include "relctl/protocol.h"

#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

namespace relctl::cli {

using nlohmann::json;

// Writes replies: the JSON object itself with --json, a plain rendering
// otherwise; failures as one line on stderr (and an error object with --json).
class Output
{
public:
    explicit Output(bool json) : m_json(json) {}

    int success(const json& body, const std::string& plain) const
    {
        if (m_json)
            std::cout << body.dump() << '\n';
        else
            std::cout << plain;
        return 0;
    }

    int failure(ExitCode code, const std::string& error, const std::string& message,
                json extra = json::object()) const
    {
        std::cerr << "relctl: " << message << '\n';
        if (m_json) {
            json out{{"error", error}, {"message", message}};
            if (extra.is_object()) {
                extra.erase("status");
                extra.erase("message");
                for (auto& [key, value] : extra.items())
                    out[key] = value;
            }
            std::cout << out.dump() << '\n';
        }
        return static_cast<int>(code);
    }

    // A protocol outcome; the plain text is rendered only for an accepted one
    // (a refusal's reply lacks the fields it would name).
    int outcome(const Outcome& o, const std::function<std::string()>& plain) const
    {
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
