#pragma once

// The demo's week, seeded by the console's own seedDemoWeek into a demo
// cluster of the test's own: a directory named relctl-demo in a temporary
// directory the postgres user can reach (as root the server runs as
// postgres). Stopped and removed afterwards. Header-only: only the console's
// tests, which link its data layer, use it.

#include "relctl/demo.h"
#include "relctl/embedded.h"
#include "testdatabase.h"

#include <QFile>
#include <QTemporaryDir>
#include <chrono>
#include <memory>

class DemoDatabase final
{
public:
    DemoDatabase()
        : m_dir(QStringLiteral("/tmp/relctl-demotest-XXXXXX")),
          m_cluster(m_dir.filePath(QStringLiteral("relctl-demo")).toStdString())
    {
        QFile::setPermissions(m_dir.path(), QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                                QFileDevice::ExeOwner | QFileDevice::ExeGroup |
                                                QFileDevice::ExeOther);
        const auto started = std::chrono::steady_clock::now();
        end = std::chrono::system_clock::now() - std::chrono::minutes(2);
        relctl::seedDemoWeek(m_cluster, end);
        seedMs =
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started)
                .count();
        m_db =
            std::make_unique<TestDatabase>(m_cluster.conninfo(), m_cluster.administratorConninfo("relctl"));
    }
    ~DemoDatabase() { m_cluster.stop(); }
    DemoDatabase(const DemoDatabase&) = delete;
    DemoDatabase& operator=(const DemoDatabase&) = delete;

    TestDatabase& db() { return *m_db; }
    // The demo's CI jobs' login (peer-mapped to the OS user like the others).
    std::string jobDsn() const { return m_db->dsn() + " user=" + relctl::demoJobLogin(); }
    relctl::EmbeddedCluster& cluster() { return m_cluster; }

    std::chrono::system_clock::time_point end; // where the story was told to end
    long long seedMs = 0;                      // initdb, migrate, seed, and the restarts

private:
    QTemporaryDir m_dir;
    relctl::EmbeddedCluster m_cluster;
    std::unique_ptr<TestDatabase> m_db;
};
