#include "testdatabase.h"

#include "relctl/database.h"
#include "relctl/scratch.h"

#include <cstdlib>
#include <pqxx/pqxx>
#include <stdexcept>
#include <utility>

std::string sqlState(const std::string& dsn, const std::string& sql)
{
    pqxx::connection c(dsn);
    try {
        pqxx::nontransaction(c).exec(sql);
        return "";
    } catch (const pqxx::insufficient_privilege&) {
        return "42501"; // libpqxx 6.4 throws this class without its SQLSTATE
    } catch (const pqxx::sql_error& e) {
        return e.sqlstate();
    }
}

std::string sqlLiteral(const std::string& s)
{
    std::string out = "'";
    for (const char c : s)
        out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
}

std::string TestDatabase::clusterDsn()
{
    const char* dsn = std::getenv("RELCTL_TEST_DSN");
    if (dsn == nullptr || *dsn == '\0')
        throw std::runtime_error("RELCTL_TEST_DSN is not set: run the tests through scripts/test.sh, "
                                 "which starts the PostgreSQL they need");
    return dsn;
}

struct TestDatabase::Scratch
{
    explicit Scratch(const std::string& server) : database(server, "relctl_test_") {}
    relctl::ScratchDatabase database;
};

TestDatabase::TestDatabase(Schema schema) : m_database(std::make_unique<Scratch>(clusterDsn()))
{
    m_adminDsn = m_database->database.conninfo();
    m_dsn = m_adminDsn;
    if (schema == Schema::Migrated) {
        relctl::Database(m_adminDsn).migrate();
        createLogins();
        m_dsn = m_adminDsn + " user=relctl_test_manager";
    }
}

TestDatabase::TestDatabase(std::string dsn, std::string adminDsn)
    : m_dsn(std::move(dsn)), m_adminDsn(std::move(adminDsn))
{
}

void TestDatabase::createLogins() const
{
    // Logins are cluster-wide and tests run in parallel: create each once,
    // tolerating a concurrent test that creates it at the same moment. The
    // test cluster trusts local connections, so they need no password.
    exec("DO $$ DECLARE r text[]; BEGIN "
         "FOREACH r SLICE 1 IN ARRAY ARRAY[['relctl_test_manager', 'relctl_manager'], "
         "['relctl_test_job', 'relctl_job'], ['relctl_test_reviewer', 'relctl_reviewer']] LOOP "
         "IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r[1]) THEN "
         "BEGIN EXECUTE format('CREATE ROLE %I LOGIN IN ROLE %I', r[1], r[2]); "
         "EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END; END IF; "
         "END LOOP; END $$");
}

std::string TestDatabase::loginDsn(const std::string& person, const std::vector<std::string>& roles) const
{
    const std::string login = "relctl_test_" + person;
    std::string grants;
    for (const std::string& role : roles)
        grants += "BEGIN EXECUTE format('GRANT %I TO %I', " + sqlLiteral(role) + ", " + sqlLiteral(login) +
                  "); EXCEPTION WHEN unique_violation THEN NULL; END; ";
    // Tolerates a concurrent test creating the same login (see createLogins).
    exec("DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = " + sqlLiteral(login) +
         ") THEN BEGIN EXECUTE format('CREATE ROLE %I LOGIN', " + sqlLiteral(login) +
         "); EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END; END IF; " + grants +
         "END $$");
    return m_adminDsn + " user=" + login;
}

// Dropped by m_database (WITH (FORCE)); the cluster is thrown away after the run anyway.
TestDatabase::~TestDatabase() = default;

const std::string& TestDatabase::name() const
{
    static const std::string adopted;
    return m_database ? m_database->database.name() : adopted;
}

void TestDatabase::exec(const std::string& sql) const
{
    pqxx::connection c(m_adminDsn);
    pqxx::work tx(c);
    tx.exec(sql);
    tx.commit();
}

std::vector<std::vector<std::string>> TestDatabase::rows(const std::string& sql) const
{
    pqxx::connection c(m_adminDsn);
    pqxx::read_transaction tx(c);
    std::vector<std::vector<std::string>> out;
    for (const pqxx::row& row : tx.exec(sql)) {
        std::vector<std::string> values;
        for (const pqxx::field& f : row)
            values.push_back(f.is_null() ? std::string("<null>") : std::string(f.c_str()));
        out.push_back(std::move(values));
    }
    return out;
}

std::string TestDatabase::scalar(const std::string& sql) const
{
    auto r = rows(sql);
    if (r.empty() || r.front().empty())
        throw std::runtime_error("no value from: " + sql);
    return r.front().front();
}

long long TestDatabase::count(const std::string& sql) const
{
    return std::stoll(scalar(sql));
}

nlohmann::json TestDatabase::write(const std::string& sql) const
{
    pqxx::connection c(m_adminDsn);
    pqxx::work tx(c);
    const pqxx::row row = tx.exec1(sql);
    tx.commit();
    return nlohmann::json::parse(row[0].c_str());
}

nlohmann::json TestDatabase::json(const std::string& sql) const
{
    return nlohmann::json::parse(scalar(sql));
}

std::vector<long long> TestDatabase::footprint() const
{
    // One statement on one connection: the input tests take two footprints per
    // case, and a connection per figure made them the slowest suite.
    std::vector<std::string> figures;
    for (const char* table : {"environments", "leases", "manifests", "events", "operations"})
        figures.emplace_back(std::string("(SELECT count(*) FROM relctl.") + table + ")");
    // Tables and settings of migration 0002, when it is applied.
    if (count("SELECT count(*) FROM pg_tables WHERE schemaname = 'relctl' AND tablename = 'candidates'") ==
        1) {
        figures.emplace_back("(SELECT count(*) FROM relctl.candidates)");
        figures.emplace_back("(SELECT count(*) FROM relctl.supersessions)");
        figures.emplace_back(
            "(SELECT ('x' || substr(md5(coalesce(string_agg(concat_ws('/', name, policy, supersede, "
            "serialization, frozen_by, frozen_reason), ',' ORDER BY name), '')), 1, 15))"
            "::bit(60)::bigint FROM relctl.environments)");
    }
    // Tables and settings of migration 0006, when it is applied.
    if (count("SELECT count(*) FROM pg_tables WHERE schemaname = 'relctl' AND tablename = 'rollbacks'") ==
        1) {
        for (const char* table : {"rollbacks", "promotions", "promotion_decisions"})
            figures.emplace_back(std::string("(SELECT count(*) FROM relctl.") + table + ")");
        figures.emplace_back(
            "(SELECT ('x' || substr(md5(coalesce(string_agg(concat_ws('/', name, promote_from, soak_ms, "
            "approvals_required, high_water_generation, current_manifest_id), ',' ORDER BY name), '')), 1, "
            "15))"
            "::bit(60)::bigint FROM relctl.environments)");
        figures.emplace_back("(SELECT ('x' || substr(md5(coalesce(string_agg(concat_ws('/', id, state), ',' "
                             "ORDER BY id), '')), 1, 15))::bit(60)::bigint FROM relctl.promotions)");
    }
    figures.emplace_back("(SELECT coalesce(sum(last_token), 0) FROM relctl.environments)");
    figures.emplace_back("(SELECT coalesce(sum(extract(epoch FROM expires_at) * 1000)::bigint, 0) "
                         "FROM relctl.leases)");
    std::string sql = "SELECT ";
    for (std::size_t i = 0; i < figures.size(); ++i)
        sql += (i ? ", " : "") + figures[i] + "::bigint";
    const auto result = rows(sql);
    std::vector<long long> counts;
    for (const std::string& value : result.at(0))
        counts.push_back(std::stoll(value));
    return counts;
}
