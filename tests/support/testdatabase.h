#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

// A SQL string literal of s (quotes doubled), for the tests' own statements.
std::string sqlLiteral(const std::string& s);

// The SQLSTATE a statement fails with on its own connection as the given
// login, or "" when it succeeds.
std::string sqlState(const std::string& dsn, const std::string& sql);

// A fresh database on the test cluster (RELCTL_TEST_DSN), created for one test
// and dropped afterwards, so tests never see each other's rows. The queries
// here are the tests' own window on the database, for asserting what was
// written; the code under test reaches it only through relctl.
class TestDatabase final
{
public:
    enum class Schema { Migrated, Empty };

    explicit TestDatabase(Schema schema = Schema::Migrated);
    // A database someone else made and drops (a demo cluster's): only the
    // tests' window on it.
    TestDatabase(std::string dsn, std::string adminDsn);
    ~TestDatabase();
    TestDatabase(const TestDatabase&) = delete;
    TestDatabase& operator=(const TestDatabase&) = delete;

    // What the code under test connects with. For a migrated database a login
    // that is no superuser and owns nothing, with the relctl_manager group
    // role (which includes relctl_job and relctl_reviewer): the protocol is
    // exercised through its functions' own privileges. For an empty database
    // the administrator, since migrating is administration.
    const std::string& dsn() const { return m_dsn; }
    // The cluster's superuser on this database: the tests' own window on
    // every table (exec, rows, ...), and migrations.
    const std::string& adminDsn() const { return m_adminDsn; }
    // Logins with one group role each: relctl_job, relctl_reviewer.
    std::string jobDsn() const { return m_adminDsn + " user=relctl_test_job"; }
    std::string reviewerDsn() const { return m_adminDsn + " user=relctl_test_reviewer"; }
    // A login of its own, a member of the given roles (created when missing;
    // logins are cluster-wide, so a name is one person across tests): for
    // approvals, which count once per login. "relctl_test_" is prefixed.
    std::string loginDsn(const std::string& person,
                         const std::vector<std::string>& roles = {"relctl_manager"}) const;
    const std::string& name() const;

    void exec(const std::string& sql) const;
    long long count(const std::string& sql) const; // the first column of the first row, as a number
    std::string scalar(const std::string& sql) const;
    std::vector<std::vector<std::string>> rows(const std::string& sql) const; // NULL as "<null>"
    nlohmann::json json(const std::string& sql) const;                        // one json value
    nlohmann::json write(const std::string& sql) const; // one json value from a statement that writes

    // Row counts of every table relctl writes, to prove that bad input wrote nothing.
    std::vector<long long> footprint() const;

    // The DSN of the cluster itself (RELCTL_TEST_DSN); fails the test when unset.
    static std::string clusterDsn();

    // Creates the test logins (done for a migrated database; a test that
    // migrates an empty one itself calls it afterwards).
    void createLogins() const;

private:
    // core's relctl::ScratchDatabase, held by pointer: tests declare a
    // function named relctl (relctlprocess.h), which hides the namespace in
    // a header included after it.
    struct Scratch;
    std::unique_ptr<Scratch> m_database; // none: adopted
    std::string m_dsn;
    std::string m_adminDsn;
};
