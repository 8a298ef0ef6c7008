#include "connectionprobe.h"

#include "relctl/database.h"

#include <QElapsedTimer>
#include <QThread>
#include <memory>

namespace relctl::ui {

ConnectionProbe::ConnectionProbe(QObject* parent) : QObject(parent)
{
    qRegisterMetaType<ProbeResult>();
}

ProbeResult ConnectionProbe::run(const ConnectionTarget& target)
{
    ProbeResult result;
    result.target = target.describe();
    try {
        relctl::Database db(target.resolve());
        QElapsedTimer timer;
        timer.start();
        const relctl::ServerInfo info = db.serverInfo();
        result.rttMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
        result.serverVersion = QString::fromStdString(info.serverVersion);
        result.database = QString::fromStdString(info.database);
        result.schemaVersion = static_cast<int>(info.schemaVersion.value_or(0));
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
