#include "scratchcluster.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QtGlobal>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <pqxx/pqxx>
#include <pwd.h>
#include <stdexcept>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace {

bool isRoot()
{
    return geteuid() == 0;
}

std::string pgBinDir()
{
    if (const char* dir = std::getenv("RELCTL_PG_BIN"); dir && *dir)
        return dir;
    QDir lib(QStringLiteral("/usr/lib/postgresql"));
    QStringList versions = lib.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
    std::sort(versions.begin(), versions.end(),
              [](const QString& a, const QString& b) { return a.toInt() > b.toInt(); });
    for (const QString& v : versions)
        if (QFile::exists(lib.filePath(v + QStringLiteral("/bin/initdb"))))
            return lib.filePath(v + QStringLiteral("/bin")).toStdString();
    qFatal("no PostgreSQL server binaries under /usr/lib/postgresql");
}

int nextPort()
{
    // Distinct per process and cluster, so a socket file name is never shared
    // with a cluster another test process runs (the directories differ too).
    static int next = 20000 + (getpid() % 2000) * 10;
    return next++;
}

} // namespace

ScratchCluster::ScratchCluster(const std::vector<std::string>& settings)
{
    initialise(settings);
    if (run({bin("initdb"), "-D", m_dir + "/data", "-U", m_user, "-A", "trust", "--no-sync", "-E", "UTF8",
             "--locale=C.UTF-8"}) != 0)
        qFatal("initdb failed in %s", m_dir.c_str());
    writeSettings(settings);
    start();
}

ScratchCluster::ScratchCluster(StandbyTag, const ScratchCluster& primary, const std::string& name,
                               const std::vector<std::string>& settings)
{
    initialise(settings);
    if (run({bin("pg_basebackup"), "-D", m_dir + "/data", "-h", primary.m_dir, "-p",
             std::to_string(primary.m_port), "-U", primary.m_user, "-X", "stream", "-R", "--no-sync", "-c",
             "fast", "-d",
             "host=" + primary.m_dir + " port=" + std::to_string(primary.m_port) + " user=" + primary.m_user +
                 " application_name=" + name}) != 0)
        qFatal("pg_basebackup failed into %s", m_dir.c_str());
    writeSettings(settings);
    start();
}

ScratchCluster* ScratchCluster::standbyOf(const ScratchCluster& primary, const std::string& name,
                                          const std::vector<std::string>& settings)
{
    return new ScratchCluster(StandbyTag{}, primary, name, settings);
}

void ScratchCluster::initialise(const std::vector<std::string>&)
{
    m_bin = pgBinDir();
    m_port = nextPort();
    char pattern[] = "/tmp/relctl-scratch.XXXXXX";
    if (mkdtemp(pattern) == nullptr)
        qFatal("mkdtemp failed");
    m_dir = pattern;
    chmod(m_dir.c_str(), 0755);
    if (isRoot()) {
        const passwd* pw = getpwnam("postgres");
        if (pw == nullptr)
            qFatal("running as root needs the postgres user (the postgresql package creates it)");
        if (chown(m_dir.c_str(), pw->pw_uid, pw->pw_gid) != 0)
            qFatal("chown %s failed", m_dir.c_str());
        m_user = "postgres";
    } else {
        m_user = getpwuid(geteuid())->pw_name;
    }
}

void ScratchCluster::writeSettings(const std::vector<std::string>& settings) const
{
    // Appended last: these win over initdb's defaults and over what
    // pg_basebackup copied from the primary.
    std::ofstream conf(m_dir + "/data/postgresql.conf", std::ios::app);
    conf << "\nlisten_addresses = ''\nunix_socket_directories = '" << m_dir << "'\nport = " << m_port
         << "\nmax_connections = 100\nmax_wal_senders = 10\nwal_level = replica\n";
    for (const std::string& s : settings)
        conf << s << "\n";
}

ScratchCluster::~ScratchCluster()
{
    stop("immediate");
    QDir(QString::fromStdString(m_dir)).removeRecursively();
}

std::string ScratchCluster::bin(const std::string& tool) const
{
    return m_bin + "/" + tool;
}

int ScratchCluster::run(const std::vector<std::string>& argv, bool asPostgres) const
{
    QStringList args;
    QString program;
    if (isRoot() && asPostgres) {
        program = QStringLiteral("runuser");
        args << QStringLiteral("-u") << QStringLiteral("postgres") << QStringLiteral("--");
        for (const std::string& a : argv)
            args << QString::fromStdString(a);
    } else {
        program = QString::fromStdString(argv.front());
        for (std::size_t i = 1; i < argv.size(); ++i)
            args << QString::fromStdString(argv[i]);
    }
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(program, args);
    if (!p.waitForFinished(120000)) {
        p.kill();
        p.waitForFinished();
        return -1;
    }
    const int code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    if (code != 0)
        qWarning("%s: %s", qPrintable(program + QLatin1Char(' ') + args.join(QLatin1Char(' '))),
                 p.readAll().constData());
    return code;
}

std::string ScratchCluster::dsn(const std::string& dbname) const
{
    return "host=" + m_dir + " port=" + std::to_string(m_port) + " user=" + m_user + " dbname=" + dbname;
}

void ScratchCluster::start()
{
    if (run({bin("pg_ctl"), "-D", m_dir + "/data", "-l", m_dir + "/log", "-w", "-t", "60", "start"}) != 0)
        qFatal("pg_ctl start failed in %s", m_dir.c_str());
}

void ScratchCluster::stop(const std::string& mode)
{
    if (!running())
        return;
    run({bin("pg_ctl"), "-D", m_dir + "/data", "-m", mode, "-w", "-t", "60", "stop"});
}

void ScratchCluster::restart(const std::string& mode)
{
    if (run({bin("pg_ctl"), "-D", m_dir + "/data", "-l", m_dir + "/log", "-m", mode, "-w", "-t", "60",
             "restart"}) != 0)
        qFatal("pg_ctl restart failed in %s", m_dir.c_str());
}

void ScratchCluster::promote()
{
    if (run({bin("pg_ctl"), "-D", m_dir + "/data", "-w", "-t", "60", "promote"}) != 0)
        qFatal("pg_ctl promote failed in %s", m_dir.c_str());
}

bool ScratchCluster::running() const
{
    return QFile::exists(QString::fromStdString(m_dir + "/data/postmaster.pid"));
}

void ScratchCluster::kill()
{
    std::ifstream pidFile(m_dir + "/data/postmaster.pid");
    pid_t postmaster = 0;
    if (!(pidFile >> postmaster) || postmaster <= 0)
        return;
    // Frozen first, so it cannot restart its children when they die; then its
    // backends, then itself.
    ::kill(postmaster, SIGSTOP);
    run({"pkill", "-KILL", "-P", std::to_string(postmaster)}, false);
    ::kill(postmaster, SIGKILL);
    for (int i = 0; i < 500 && ::kill(postmaster, 0) == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    QFile::remove(QString::fromStdString(m_dir + "/data/postmaster.pid"));
}

std::string ScratchCluster::query(const std::string& sql, const std::string& dbname) const
{
    pqxx::connection c(dsn(dbname));
    pqxx::nontransaction tx(c);
    const pqxx::result r = tx.exec(sql);
    return r.empty() || r[0].empty() || r[0][0].is_null() ? std::string() : r[0][0].c_str();
}
