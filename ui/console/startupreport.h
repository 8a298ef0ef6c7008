#pragma once

#include <QByteArray>
#include <QObject>
#include <QString>
#include <optional>

class QFile;
class QWidget;

namespace relctl::ui {

class AuditModel;
class ConsoleSession;
class MainWindow;

// How long the console took to become usable, for the console benchmark
// (bench/consolebench.cpp). Off by default: only with
// RELCTL_CONSOLE_REPORT=FILE in the environment does main() make one, and it
// then writes one JSON line to FILE (atomically) once the window is usable:
// the main window painted, and the environments table and the audit table
// each painted after their first answer arrived (rows, or none). The line
// holds CLOCK_MONOTONIC times in nanoseconds (comparable with another
// process's steady_clock on Linux) of each of those moments, of the
// connection, of the first audit page's request and answer, and the
// process's resident and peak resident memory (kB) at that moment. After it,
// one JSON line is appended per live update the session applied
// (ConsoleSession::liveUpdateApplied): {"live": kind, "envs": [...],
// "gui_ns": the GUI thread's time, "at_ns": CLOCK_MONOTONIC when applied}, so
// the benchmark can time one event and a burst's lag; updates applied before
// the window was usable follow the first line. It only watches: nothing the
// console does waits for it.
class StartupReport final : public QObject
{
    Q_OBJECT

public:
    // Null unless RELCTL_CONSOLE_REPORT names a file. Call before the
    // session starts, so its first answers are seen.
    static StartupReport* fromEnvironment(MainWindow* window, ConsoleSession* session);

private:
    StartupReport(QString file, MainWindow* window, ConsoleSession* session);
    bool eventFilter(QObject* watched, QEvent* event) override;
    void answered(std::optional<qint64>& answer, QWidget* viewport);
    void writeIfUsable();
    void liveUpdate(const QString& kind, const QStringList& envs, qint64 guiNanoseconds);

    QString m_file;
    QWidget* m_window;
    QWidget* m_environmentsViewport;
    QWidget* m_auditViewport;
    AuditModel* m_audit;
    qint64 m_created;
    std::optional<qint64> m_shown, m_connected, m_environmentsAnswered, m_environmentsPainted,
        m_auditRequested, m_auditAnswered, m_auditPainted;
    bool m_written = false;
    QByteArray m_pendingLive; // live lines applied before the first line was written
    QFile* m_live = nullptr;  // the file, opened for appending once the first line is in
};

} // namespace relctl::ui
