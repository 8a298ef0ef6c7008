#pragma once

// The values the console's backend and its session exchange besides core's
// own (see metatypes.h): what an operator asks for, a pending supersession
// request, the connection's state. Plain values: they cross threads.

#include <QMetaType>
#include <QString>
#include <QStringList>

namespace relctl::ui {

// What an operator asks for; the worker turns it into one protocol call.
struct ConsoleAction
{
    enum class Kind { Approve, Deny, Revoke, Freeze, Unfreeze };
    Kind kind = Kind::Approve;
    QString env;
    qint64 request = 0; // the supersession request, for Approve/Deny
    QString by;
    QString reason;
};

} // namespace relctl::ui

Q_DECLARE_METATYPE(relctl::ui::ConsoleAction)

namespace relctl::ui {

// A pending supersession request, as the approvals list shows it.
struct ApprovalRow
{
    qint64 id = 0;
    QString env;
    QString winnerJob;
    QString winnerRelease;
    qint64 winnerGeneration = 0;
    QStringList skipped; // "job (generation N)"
    QString openedAt;
};

} // namespace relctl::ui

Q_DECLARE_METATYPE(relctl::ui::ApprovalRow)
Q_DECLARE_METATYPE(QList<relctl::ui::ApprovalRow>)

namespace relctl::ui {

struct ConnectionState
{
    bool connected = false;
    QString server;    // "PostgreSQL 15.x, database relctl"
    double rttMs = 0;  // the last round trip
    bool live = false; // listening for events
    int schemaVersion = 0;
    QString message; // why not connected
    QString target;  // where it connects, as ConnectionTarget::describe() says
};

} // namespace relctl::ui

Q_DECLARE_METATYPE(relctl::ui::ConnectionState)
