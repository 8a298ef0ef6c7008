#include "connectionprobe.h"

#include "relctl/database.h"
#include "relctl/embedded.h"

#include <QElapsedTimer>
#include <QThread>
#include <memory>

namespace relctl::ui {

ConnectionProbe::ConnectionProbe(QObject* parent) : QObject(parent)
{
    qRegisterMetaType<ProbeResult>();
}

namespace {

QString notStartedText(ConnectionTarget::Kind kind, bool created)
{
    const QString which = kind == ConnectionTarget::Kind::Demo ? QObject::tr("The demo's database")
                                                               : QObject::tr("The embedded database");
    return created ? QObject::tr("%1 is not running: the console starts it when you connect.").arg(which)
                   : QObject::tr("%1 has not been created yet: the console creates and starts it when you "
                                 "connect.")
                         .arg(which);
}

} // namespace

bool ConnectionProbe::notStarted(const ProbeResult& result)
{
    if (result.ok)
        return false;
    for (const auto kind : {ConnectionTarget::Kind::Embedded, ConnectionTarget::Kind::Demo})
        for (const bool created : {false, true})
            if (result.message == notStartedText(kind, created))
                return true;
    return false;
}

ProbeResult ConnectionProbe::run(const ConnectionTarget& target)
{
    ProbeResult result;
    result.target = target.describe();
    try {
        // A test must not create or start the embedded cluster (resolve()
        // would): it connects only to one that runs, and otherwise says what
        // connecting will do.
        const ConnectionTarget chosen = target.effective();
        std::string conninfo;
        if (chosen.kind == ConnectionTarget::Kind::Embedded || chosen.kind == ConnectionTarget::Kind::Demo) {
            const relctl::EmbeddedCluster cluster = chosen.kind == ConnectionTarget::Kind::Demo
                                                        ? relctl::EmbeddedCluster::demoForCurrentUser()
                                                        : relctl::EmbeddedCluster::forCurrentUser();
            const nlohmann::json status = cluster.status();
            if (!status.value("initialized", false) || !status.value("running", false)) {
                result.message = notStartedText(chosen.kind, status.value("initialized", false));
                return result;
            }
            conninfo = cluster.conninfo();
        } else {
            conninfo = target.resolve();
        }
        relctl::Database db(conninfo);
        QElapsedTimer timer;
        timer.start();
        const relctl::ServerInfo info = db.serverInfo();
        result.rttMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
        result.serverVersion = QString::fromStdString(info.serverVersion);
        result.database = QString::fromStdString(info.database);
        result.schemaVersion = static_cast<int>(info.schemaVersion.value_or(0));
        result.login = QString::fromStdString(info.login);
        result.permissions = Permissions::of(info);
        result.tls = info.tls;
        result.ok = true;
    } catch (const std::exception& e) {
        result.message = QString::fromStdString(e.what()).trimmed();
    }
    return result;
}

quint64 ConnectionProbe::probe(const ConnectionTarget& target)
{
    const quint64 serial = ++m_latest;
    m_running = true;
    // The thread writes the result before it finishes; finished() is
    // delivered to this object's thread, so the read happens after the write.
    auto result = std::make_shared<ProbeResult>();
    QThread* thread = QThread::create([target, result] { *result = run(target); });
    thread->setObjectName(QStringLiteral("connection probe"));
    connect(thread, &QThread::finished, this, [this, serial, result] {
        if (serial != m_latest)
            return; // superseded by a newer probe, or cancelled
        m_running = false;
        emit finished(serial, *result);
    });
    connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    thread->start();
    emit started(serial);
    return serial;
}

void ConnectionProbe::cancel()
{
    ++m_latest;
    m_running = false;
}

} // namespace relctl::ui
