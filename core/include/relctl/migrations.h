#pragma once

#include <optional>
#include <string>
#include <vector>

namespace relctl {

struct Migration
{
    int version = 0;
    std::string name; // file name without the .sql suffix, e.g. "0001_lease_protocol"
    std::string sql;
};

// The migrations/ directory as compiled into this build, ordered by version.
const std::vector<Migration>& bundledMigrations();

struct MigrationState
{
    int version = 0;
    std::string name;
    std::string checksum;                 // SHA-256 of the file, hex
    std::optional<std::string> appliedAt; // empty while pending
    // "applied", "pending", "changed" (applied, but the file differs now) or
    // "unknown" (applied by a newer relctl: not in this build)
    std::string state;
};

struct MigrationReport
{
    std::vector<std::string> applied; // names applied by this run, in order
    std::vector<MigrationState> states;
};

} // namespace relctl
