#pragma once

#include "relctl/database.h"
#include "relctl/history.h"
#include "relctl/replies.h"

#include <nlohmann/json.hpp>
#include <string>

// Plain-text renderings of the replies, for people reading a CI log.
// --json output is the replies themselves (toJson).
namespace relctl::cli::render {

// A member of a protocol outcome's body as text: strings bare, numbers and
// booleans as JSON writes them, "-" when absent or null.
std::string text(const nlohmann::json& j, const char* key);

// The member, or null when absent (operator[] on a const json must not be
// given a missing key).
const nlohmann::json& field(const nlohmann::json& j, const char* key);

std::string environment(const Environment& env);
std::string environmentList(const EnvironmentList& reply);
// One line per environment, in the order given (EnvironmentBriefs' natural
// order): name, group, current release, lease, and what else stands out.
std::string environmentBriefs(const EnvironmentBriefs& envs);
// One line per environment that needs a person, its reasons joined by "; ".
std::string attention(const std::vector<EnvironmentAttention>& envs);
// What a bulk freeze or unfreeze changed: one line per environment.
std::string bulkFreeze(const BulkFreezeResult& result, bool frozen);
std::string promotionPaths(const PromotionPaths& reply);
std::string lease(const LeaseShow& reply);
std::string manifest(const ManifestShow& reply);
std::string manifestHistory(const ManifestHistory& reply);
std::string audit(const AuditTrail& reply);
std::string trace(const JobTrace& reply);
std::string operation(const OperationRecord& reply);
std::string status(const JobStatus& reply);
std::string supersessions(const Supersessions& reply);
std::string promotions(const Promotions& reply);
std::string rollback(const RollbackDone& reply);
std::string revocation(const Revocation& reply);
// One line per check, PASS or FAIL, each violation indented below its check.
std::string verdicts(const std::vector<history::Verdict>& verdicts);

} // namespace relctl::cli::render
