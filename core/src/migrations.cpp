#include "relctl/migrations.h"

#include "database_impl.h"
#include "relctl/database.h"

#include <map>

namespace relctl {

namespace {

// One lock for every relctl migration run on a database, held for the whole
// run: a second concurrent run waits here, then finds everything applied.
constexpr const char* kLockSql = "SELECT pg_advisory_lock(hashtextextended('relctl.migrate', 0))";
constexpr const char* kUnlockSql = "SELECT pg_advisory_unlock(hashtextextended('relctl.migrate', 0))";

std::vector<MigrationState> readStates(pqxx::connection& conn, const std::vector<Migration>& migrations)
{
    pqxx::read_transaction tx(conn);
    std::map<int, MigrationState> byVersion;
    for (const Migration& m : migrations) {
        MigrationState s;
        s.version = m.version;
        s.name = m.name;
        s.checksum =
            tx.exec_params1("SELECT encode(sha256(convert_to($1, 'UTF8')), 'hex')", m.sql)[0].c_str();
        s.state = "pending";
        byVersion[m.version] = s;
    }
    pqxx::result applied;
    // Before the first migration there is no table: everything is pending.
    if (tx.exec1("SELECT to_regclass('relctl.schema_migrations') IS NOT NULL")[0].as<bool>())
        applied = tx.exec("SELECT version, name, checksum, "
                          "to_char(applied_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') "
                          "FROM relctl.schema_migrations ORDER BY version");
    for (const pqxx::row& row : applied) {
        const int version = row[0].as<int>();
        MigrationState& s = byVersion[version];
        s.appliedAt = row[3].c_str();
        if (s.name.empty()) {
            s.version = version;
            s.name = row[1].c_str();
            s.checksum = row[2].c_str();
            s.state = "unknown";
        } else {
            s.state = s.checksum == row[2].c_str() ? "applied" : "changed";
        }
    }
    std::vector<MigrationState> states;
    for (auto& [version, s] : byVersion)
        states.push_back(std::move(s));
    return states;
}

} // namespace

std::vector<MigrationState> Database::migrationStatus(const std::vector<Migration>& migrations)
{
    try {
        return readStates(d->conn, migrations);
    } catch (...) {
        Impl::translateCurrentException();
    }
}

MigrationReport Database::migrate(const std::vector<Migration>& migrations)
{
    MigrationReport report;
    try {
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
            tx.commit();
        }

        // Refuse before applying anything: a changed migration means this build
        // and the database disagree about what the schema is.
        for (const MigrationState& s : readStates(d->conn, migrations))
            if (s.state == "changed")
                throw Error(ExitCode::Internal, "migration " + s.name +
                                                    " was changed after it was applied (its checksum differs "
                                                    "from the one recorded); restore it and put the change "
                                                    "in a new migration");

        for (const Migration& m : migrations) {
            pqxx::work tx(d->conn);
            if (!tx.exec_params("SELECT 1 FROM relctl.schema_migrations WHERE version = $1", m.version)
                     .empty())
                continue;
            tx.exec(m.sql);
            tx.exec_params("INSERT INTO relctl.schema_migrations (version, name, checksum) "
                           "VALUES ($1, $2, encode(sha256(convert_to($3, 'UTF8')), 'hex'))",
                           m.version, m.name, m.sql);
            tx.commit();
            report.applied.push_back(m.name);
        }
        report.states = readStates(d->conn, migrations);
    } catch (...) {
        Impl::translateCurrentException();
    }
    return report;
}

} // namespace relctl
