#include "relctl/migrations.h"

#include "database_impl.h"
#include "relctl/database.h"

#include <map>
#include <set>

namespace relctl {

namespace {

// One lock for every relctl migration run on a database, held for the whole
// run: a second concurrent run waits here, then finds everything applied.
constexpr const char* kLockSql = "SELECT pg_advisory_lock(hashtextextended('relctl.migrate', 0))";
constexpr const char* kUnlockSql = "SELECT pg_advisory_unlock(hashtextextended('relctl.migrate', 0))";

// The checksums 0001–0004 had while they still held the functions that now
// live in migrations/functions/. A database migrated by those texts has every
// table and index of today's 0001–0004: the migrations count as applied, and
// the function modules replace the old functions.
const std::map<int, std::set<std::string>>& formerChecksums()
{
    static const std::map<int, std::set<std::string>> checksums{
        {1, {"9b4e1ba030e772be1f6d3d89e8bb6e371ae037ca1e3c28f2e04a99aa37b1754f"}},
        {2, {"818bee3d2592a3bc45925a6009fa2a6d9c1b3819eba4a8e052ad12025e490ab6"}},
        {3, {"5f72dce6e80561736c4702c86d011704bc16248b81ec6c1d9042fa43523d3e06"}},
        {4, {"a7f797a5c7edc10e2274335fc82529e43f771116c2eb320a592a1c4afef8944a"}},
    };
    return checksums;
}

bool isFormerChecksum(int version, const std::string& checksum)
{
    const auto it = formerChecksums().find(version);
    return it != formerChecksums().end() && it->second.count(checksum) > 0;
}

std::string checksumOf(pqxx::transaction_base& tx, const std::string& sql)
{
    return tx.exec_params1("SELECT encode(sha256(convert_to($1, 'UTF8')), 'hex')", sql)[0].c_str();
}

constexpr const char* kAppliedAt =
    "to_char(applied_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')";

std::vector<MigrationState> readStates(pqxx::connection& conn, const std::vector<Migration>& migrations,
                                       const std::vector<SchemaModule>& modules)
{
    pqxx::read_transaction tx(conn);
    std::map<int, MigrationState> byVersion;
    for (const Migration& m : migrations) {
        MigrationState s;
        s.version = m.version;
        s.name = m.name;
        s.checksum = checksumOf(tx, m.sql);
        s.state = "pending";
        byVersion[m.version] = s;
    }
    pqxx::result applied;
    // Before the first migration there is no table: everything is pending.
    if (tx.exec1("SELECT to_regclass('relctl.schema_migrations') IS NOT NULL")[0].as<bool>())
        applied = tx.exec(std::string("SELECT version, name, checksum, ") + kAppliedAt +
                          " FROM relctl.schema_migrations ORDER BY version");
    for (const pqxx::row& row : applied) {
        const int version = row[0].as<int>();
        MigrationState& s = byVersion[version];
        s.appliedAt = row[3].c_str();
        const std::string recorded = row[2].c_str();
        if (s.name.empty()) {
            s.version = version;
            s.name = row[1].c_str();
            s.checksum = recorded;
            s.state = "unknown";
        } else {
            s.state = s.checksum == recorded || isFormerChecksum(version, recorded) ? "applied" : "changed";
        }
    }
    std::vector<MigrationState> states;
    states.reserve(byVersion.size());
    for (auto& [version, s] : byVersion)
        states.push_back(std::move(s));

    std::map<std::string, MigrationState> byName;
    for (const SchemaModule& m : modules) {
        MigrationState s;
        s.kind = "functions";
        s.name = m.name;
        s.checksum = checksumOf(tx, m.sql);
        s.state = "pending";
        byName[m.name] = s;
    }
    pqxx::result recorded;
    if (tx.exec1("SELECT to_regclass('relctl.schema_functions') IS NOT NULL")[0].as<bool>())
        recorded = tx.exec(std::string("SELECT name, checksum, ") + kAppliedAt +
                           " FROM relctl.schema_functions ORDER BY name");
    for (const pqxx::row& row : recorded) {
        MigrationState& s = byName[row[0].c_str()];
        s.appliedAt = row[2].c_str();
        if (s.name.empty()) {
            s.kind = "functions";
            s.name = row[0].c_str();
            s.checksum = row[1].c_str();
            s.state = "unknown";
        } else {
            s.state = s.checksum == row[1].c_str() ? "applied" : "outdated";
        }
    }
    for (auto& [name, s] : byName)
        states.push_back(std::move(s));
    return states;
}

// Re-applies every function module in one transaction: the schema's functions
// are then exactly what the modules define, nothing left over from an earlier
// version, and no session ever sees half of them.
void applyModules(pqxx::connection& conn, const std::vector<SchemaModule>& modules)
{
    pqxx::work tx(conn);
    // Module order must not matter (functions call each other across modules):
    // bodies are checked once all exist, below.
    tx.exec("SET LOCAL check_function_bodies = off");
    // CASCADE takes the append-only triggers with their function; the audit
    // module creates them again in this transaction.
    tx.exec(
        "DO $$ DECLARE f regprocedure; BEGIN "
        "FOR f IN SELECT p.oid FROM pg_catalog.pg_proc p WHERE p.pronamespace = 'relctl'::regnamespace LOOP "
        "EXECUTE format('DROP FUNCTION %s CASCADE', f); END LOOP; END $$");
    // Everything in the schema belongs to the NOLOGIN owner, whose identity
    // the SECURITY DEFINER functions take; tables made by a migration as the
    // migrating superuser are handed over here (their serial sequences and
    // indexes follow them).
    tx.exec("DO $$ DECLARE r record; BEGIN "
            "FOR r IN SELECT c.oid::regclass AS name, c.relkind FROM pg_catalog.pg_class c "
            "WHERE c.relnamespace = 'relctl'::regnamespace AND c.relkind IN ('r', 'v', 'p') "
            "AND pg_catalog.pg_get_userbyid(c.relowner) <> 'relctl_owner' LOOP "
            "EXECUTE format('ALTER %s %s OWNER TO relctl_owner', "
            "CASE r.relkind WHEN 'v' THEN 'VIEW' ELSE 'TABLE' END, r.name); "
            "END LOOP; END $$");
    tx.exec("SET LOCAL ROLE relctl_owner");
    for (const SchemaModule& m : modules)
        tx.exec(m.sql);
    tx.exec("RESET ROLE");
    tx.exec("SET LOCAL check_function_bodies = on");
    tx.exec("SELECT CASE l.lanname WHEN 'sql' THEN fmgr_sql_validator(p.oid) "
            "ELSE plpgsql_validator(p.oid) END "
            "FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_language l ON l.oid = p.prolang "
            "WHERE p.pronamespace = 'relctl'::regnamespace AND l.lanname IN ('sql', 'plpgsql')");
    // Functions are executable by PUBLIC when created; only the grants the
    // modules make must remain.
    tx.exec("REVOKE ALL ON ALL FUNCTIONS IN SCHEMA relctl FROM PUBLIC");
    tx.exec("REVOKE ALL ON ALL TABLES IN SCHEMA relctl FROM PUBLIC");
    tx.exec("REVOKE ALL ON ALL SEQUENCES IN SCHEMA relctl FROM PUBLIC");
    tx.exec("GRANT SELECT ON relctl.schema_migrations, relctl.schema_functions "
            "TO relctl_job, relctl_reviewer, relctl_manager");
    tx.exec("DELETE FROM relctl.schema_functions");
    for (const SchemaModule& m : modules)
        tx.exec_params("INSERT INTO relctl.schema_functions (name, checksum) "
                       "VALUES ($1, encode(sha256(convert_to($2, 'UTF8')), 'hex'))",
                       m.name, m.sql);
    tx.commit();
}

} // namespace

std::vector<MigrationState> Database::migrationStatus(const std::vector<Migration>& migrations,
                                                      const std::vector<SchemaModule>& modules)
{
    try {
        return readStates(d->conn, migrations, modules);
    } catch (...) {
        Impl::translateCurrentException();
    }
}

MigrationReport Database::migrate(const std::vector<Migration>& migrations,
                                  const std::vector<SchemaModule>& modules)
{
    MigrationReport report;
    try {
        // A migration may wait for protocol calls in flight and may take long:
        // the bounds every relctl session gets (session.h) are for jobs, not for
        // this administrator's run. They are restored with the lock.
        pqxx::nontransaction(d->conn).exec("SET lock_timeout = 0; SET statement_timeout = 0");
        pqxx::nontransaction(d->conn).exec(kLockSql);
        // The session lock is released on every exit path; a broken connection
        // releases it on the server by itself.
        struct Unlock
        {
            pqxx::connection& conn;
            ~Unlock()
            {
                try {
                    pqxx::nontransaction(conn).exec(kUnlockSql);
                    pqxx::nontransaction(conn).exec("RESET lock_timeout; RESET statement_timeout");
                } catch (...) {
                }
            }
        } unlock{d->conn};

        {
            pqxx::work tx(d->conn);
            tx.exec("CREATE SCHEMA IF NOT EXISTS relctl");
            tx.exec("CREATE TABLE IF NOT EXISTS relctl.schema_migrations ("
                    " version integer PRIMARY KEY,"
                    " name text NOT NULL,"
                    " checksum text NOT NULL,"
                    " applied_at timestamptz NOT NULL DEFAULT clock_timestamp())");
            tx.exec("CREATE TABLE IF NOT EXISTS relctl.schema_functions ("
                    " name text PRIMARY KEY,"
                    " checksum text NOT NULL,"
                    " applied_at timestamptz NOT NULL DEFAULT clock_timestamp())");
            tx.commit();
        }

        // Refuse before applying anything: a changed migration means this build
        // and the database disagree about what the schema is.
        const std::vector<MigrationState> before = readStates(d->conn, migrations, modules);
        for (const MigrationState& s : before)
            if (s.state == "changed")
                throw Error(ExitCode::Internal, "migration " + s.name +
                                                    " was changed after it was applied (its checksum differs "
                                                    "from the one recorded); restore it and put the change "
                                                    "in a new migration");

        for (const Migration& m : migrations) {
            pqxx::work tx(d->conn);
            const pqxx::result row =
                tx.exec_params("SELECT checksum FROM relctl.schema_migrations WHERE version = $1", m.version);
            if (!row.empty()) {
                // Applied from its former text: record today's, so status and
                // later runs compare against the file this build carries.
                if (isFormerChecksum(m.version, row[0][0].c_str())) {
                    tx.exec_params("UPDATE relctl.schema_migrations "
                                   "SET checksum = encode(sha256(convert_to($2, 'UTF8')), 'hex') "
                                   "WHERE version = $1",
                                   m.version, m.sql);
                    tx.commit();
                }
                continue;
            }
            tx.exec(m.sql);
            tx.exec_params("INSERT INTO relctl.schema_migrations (version, name, checksum) "
                           "VALUES ($1, $2, encode(sha256(convert_to($3, 'UTF8')), 'hex'))",
                           m.version, m.name, m.sql);
            tx.commit();
            report.applied.push_back(m.name);
        }

        bool modulesCurrent = report.applied.empty();
        std::size_t recordedModules = 0;
        for (const MigrationState& s : before) {
            if (s.kind != "functions")
                continue;
            modulesCurrent = modulesCurrent && s.state == "applied";
            recordedModules += s.appliedAt ? 1U : 0U;
        }
        if (!modules.empty() && (!modulesCurrent || recordedModules != modules.size())) {
            applyModules(d->conn, modules);
            for (const SchemaModule& m : modules)
                report.applied.push_back(m.name);
        }
        report.states = readStates(d->conn, migrations, modules);
    } catch (...) {
        Impl::translateCurrentException();
    }
    return report;
}

} // namespace relctl
