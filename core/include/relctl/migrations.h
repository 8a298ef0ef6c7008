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

// A module of the schema's functions (migrations/functions/NAME.sql): not
// numbered and not run once, but re-applied, all modules together in one
// transaction, whenever one of them changed. Functions, trigger functions and
// their triggers, views and their grants live here, so each has one
// definition and its history reads as the diffs of one file.
struct SchemaModule
{
    std::string name; // "functions/lease"
    std::string sql;
};

// The migrations/ directory as compiled into this build, ordered by version.
const std::vector<Migration>& bundledMigrations();
// migrations/functions/ as compiled into this build, ordered by name.
const std::vector<SchemaModule>& bundledModules();

struct MigrationState
{
    std::string kind = "migration"; // "migration" (numbered, run once) or "functions" (a module)
    int version = 0;                // 0 for a module
    std::string name;
    std::string checksum;                 // SHA-256 of the file, hex
    std::optional<std::string> appliedAt; // empty while pending
    // "applied", "pending", "changed" (a migration applied, but the file
    // differs now: refused), "outdated" (a module that differs from the
    // applied one: migrate re-applies it) or "unknown" (applied by another
    // relctl build: not in this one)
    std::string state;
};

struct MigrationReport
{
    std::vector<std::string> applied; // names applied by this run, in order (modules as "functions/NAME")
    std::vector<MigrationState> states;
};

} // namespace relctl
