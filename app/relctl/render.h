#pragma once

#include <nlohmann/json.hpp>
#include <string>

// Plain-text renderings of the JSON replies, for people reading a CI log.
// --json output is the replies themselves.
namespace relctl::cli::render {

// A member as text: strings bare, numbers and booleans as JSON writes them,
// "-" when absent or null.
std::string text(const nlohmann::json& j, const char* key);

// The member, or null when absent (operator[] on a const json must not be
// given a missing key).
const nlohmann::json& field(const nlohmann::json& j, const char* key);

std::string environment(const nlohmann::json& env);
std::string environmentList(const nlohmann::json& reply);
std::string lease(const nlohmann::json& reply);
std::string manifest(const nlohmann::json& reply);
std::string manifestHistory(const nlohmann::json& reply);
std::string audit(const nlohmann::json& reply);
std::string trace(const nlohmann::json& reply);
std::string operation(const nlohmann::json& reply);
std::string approvals(const nlohmann::json& reply);

} // namespace relctl::cli::render
