#include "startupreport.h"

#include "auditmodel.h"
#include "auditview.h"
#include "consolesession.h"
#include "environmentsview.h"
#include "mainwindow.h"

#include <QCoreApplication>
#include <QEvent>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QTableView>
#include <QTreeView>
#include <chrono>

namespace relctl::ui {

namespace {

qint64 monotonicNs()
{
    // libstdc++'s steady_clock is CLOCK_MONOTONIC: the benchmark reads the
    // same clock in its own process.
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// VmRSS and VmHWM of this process in kB (0 where /proc has no such line).
QJsonObject memory()
{
    QJsonObject out{{QStringLiteral("rss_kb"), 0}, {QStringLiteral("hwm_kb"), 0}};
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly))
        return out;
    for (const QByteArray& line : status.readAll().split('\n')) {
        const auto field = [&line](const char* name) {
            return line.startsWith(name)
                       ? line.mid(qsizetype(qstrlen(name))).trimmed().split(' ').value(0).toLongLong()
                       : -1;
        };
        if (const qint64 rss = field("VmRSS:"); rss >= 0)
            out[QStringLiteral("rss_kb")] = rss;
        if (const qint64 hwm = field("VmHWM:"); hwm >= 0)
            out[QStringLiteral("hwm_kb")] = hwm;
    }
    return out;
}

} // namespace

StartupReport* StartupReport::fromEnvironment(MainWindow* window, ConsoleSession* session)
{
    const QString file = qEnvironmentVariable("RELCTL_CONSOLE_REPORT");
    if (file.isEmpty())
        return nullptr;
    return new StartupReport(file, window, session);
}

StartupReport::StartupReport(QString file, MainWindow* window, ConsoleSession* session)
    : QObject(window), m_file(std::move(file)), m_window(window),
      m_environmentsViewport(window->environmentsView()->table()->viewport()),
      m_auditViewport(window->auditView()->table()->viewport()), m_audit(session->audit()),
      m_created(monotonicNs())
{
    m_window->installEventFilter(this);
    m_environmentsViewport->installEventFilter(this);
    m_auditViewport->installEventFilter(this);
    connect(session, &ConsoleSession::connectionChanged, this, [this](const ConnectionState& state) {
        if (state.connected && !m_connected)
            m_connected = monotonicNs();
    });
    connect(session, &ConsoleSession::environmentsLoaded, this,
            [this] { answered(m_environmentsAnswered, m_environmentsViewport); });
    connect(m_audit, &AuditModel::fetchRequested, this, [this] {
        if (!m_auditRequested)
            m_auditRequested = monotonicNs();
    });
    // The first page holds rows, or says there are none.
    connect(m_audit, &QAbstractItemModel::rowsInserted, this,
            [this] { answered(m_auditAnswered, m_auditViewport); });
    connect(m_audit, &AuditModel::emptyResultChanged, this, [this](bool empty) {
        if (empty)
            answered(m_auditAnswered, m_auditViewport);
    });
    connect(session, &ConsoleSession::liveUpdateApplied, this, &StartupReport::liveUpdate);
}

void StartupReport::liveUpdate(const QString& kind, const QStringList& envs, qint64 guiNanoseconds)
{
    const QJsonObject line{
        {QStringLiteral("live"), kind},
        {QStringLiteral("envs"), QJsonArray::fromStringList(envs)},
        {QStringLiteral("gui_ns"), guiNanoseconds},
        {QStringLiteral("at_ns"), monotonicNs()},
    };
    const QByteArray text = QJsonDocument(line).toJson(QJsonDocument::Compact) + '\n';
    if (!m_live) {
        // Before the first line; after it, only when the file cannot be appended to.
        if (!m_written)
            m_pendingLive += text;
        return;
    }
    // Flushed at once: the benchmark reads the file while the console runs.
    m_live->write(text);
    m_live->flush();
}

void StartupReport::answered(std::optional<qint64>& answer, QWidget* viewport)
{
    if (answer)
        return;
    answer = monotonicNs();
    // The model's change schedules this paint already; asking again only
    // makes sure an answer that changed nothing (no rows) is painted too.
    viewport->update();
}

bool StartupReport::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() == QEvent::Paint && !m_written) {
        const qint64 now = monotonicNs();
        if (watched == m_window && !m_shown)
            m_shown = now;
        else if (watched == m_environmentsViewport && m_environmentsAnswered && !m_environmentsPainted)
            m_environmentsPainted = now;
        else if (watched == m_auditViewport && m_auditAnswered && !m_auditPainted)
            m_auditPainted = now;
        writeIfUsable();
    }
    return QObject::eventFilter(watched, event);
}

void StartupReport::writeIfUsable()
{
    if (m_written || !m_shown || !m_environmentsPainted || !m_auditPainted)
        return;
    m_written = true;
    const auto ns = [](const std::optional<qint64>& t) { return t ? QJsonValue(*t) : QJsonValue(); };
    QJsonObject report{
        {QStringLiteral("pid"), QCoreApplication::applicationPid()},
        {QStringLiteral("created_ns"), m_created},
        {QStringLiteral("shown_ns"), ns(m_shown)},
        {QStringLiteral("connected_ns"), ns(m_connected)},
        {QStringLiteral("environments_answered_ns"), ns(m_environmentsAnswered)},
        {QStringLiteral("environments_painted_ns"), ns(m_environmentsPainted)},
        {QStringLiteral("audit_requested_ns"), ns(m_auditRequested)},
        {QStringLiteral("audit_answered_ns"), ns(m_auditAnswered)},
        {QStringLiteral("audit_painted_ns"), ns(m_auditPainted)},
        {QStringLiteral("usable_ns"), monotonicNs()},
        {QStringLiteral("audit_rows"), m_audit->rowCount()},
    };
    const QJsonObject resident = memory();
    for (auto it = resident.constBegin(); it != resident.constEnd(); ++it)
        report[it.key()] = it.value();
    QSaveFile out(m_file);
    if (out.open(QIODevice::WriteOnly)) {
        out.write(QJsonDocument(report).toJson(QJsonDocument::Compact) + '\n');
        out.commit();
    }
    m_live = new QFile(m_file, this);
    if (!m_live->open(QIODevice::WriteOnly | QIODevice::Append)) {
        delete m_live;
        m_live = nullptr;
        return;
    }
    m_live->write(m_pendingLive);
    m_live->flush();
    m_pendingLive.clear();
}

} // namespace relctl::ui
