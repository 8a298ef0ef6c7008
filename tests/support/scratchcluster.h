#pragma once

// A PostgreSQL cluster of one test's own, for the faults that would break
// every other test on the shared one: restarts, crashes, a standby promoted
// in a failover. Unix socket only, in a temporary directory; initdb, pg_ctl
// and pg_basebackup run as the postgres user when the tests run as root
// (PostgreSQL refuses to run as root). Stopped (immediate) and removed when
// destroyed.

#include <string>
#include <vector>

class ScratchCluster final
{
public:
    // initdb and start, with extra server settings ("name=value"). fsync stays
    // on unless a setting turns it off: what was acknowledged must survive a crash.
    explicit ScratchCluster(const std::vector<std::string>& settings = {});
    ~ScratchCluster();
    ScratchCluster(const ScratchCluster&) = delete;
    ScratchCluster& operator=(const ScratchCluster&) = delete;

    // A streaming standby of `primary` (pg_basebackup -R), started, with the
    // application name `name` (for synchronous_standby_names).
    static ScratchCluster* standbyOf(const ScratchCluster& primary, const std::string& name,
                                     const std::vector<std::string>& settings = {});

    // host=<socket dir> port=<port> user=<superuser> dbname=<db>
    std::string dsn(const std::string& dbname = "postgres") const;
    const std::string& socketDir() const { return m_dir; }
    int port() const { return m_port; }
    const std::string& user() const { return m_user; }

    void start();
    // mode: fast, immediate or smart (pg_ctl -m).
    void stop(const std::string& mode);
    void restart(const std::string& mode);
    // Promotes a standby to primary and waits until it accepts writes.
    void promote();
    // Kills the postmaster and every backend at once (SIGKILL), as a crashed
    // machine would stop them: no shutdown checkpoint, no goodbye to standbys.
    void kill();
    bool running() const;

    // Runs one SQL statement as the superuser and returns the first value ("" for none).
    std::string query(const std::string& sql, const std::string& dbname = "postgres") const;

private:
    struct StandbyTag
    {
    };
    ScratchCluster(StandbyTag, const ScratchCluster& primary, const std::string& name,
                   const std::vector<std::string>& settings);

    void initialise(const std::vector<std::string>& settings);
    void writeSettings(const std::vector<std::string>& settings) const;
    int run(const std::vector<std::string>& argv, bool asPostgres = true) const;
    std::string bin(const std::string& tool) const;

    std::string m_dir;  // data in m_dir/data, the socket in m_dir, the log in m_dir/log
    std::string m_user; // the cluster's superuser
    std::string m_bin;
    int m_port = 0;
};
