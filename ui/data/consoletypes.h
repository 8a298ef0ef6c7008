#pragma once

// The values the console's backend and its session exchange besides core's
// own (see metatypes.h): what an operator asks for, a pending supersession
// request, the connection's state, what a connection test found. Plain
// values: they cross threads.

#include "permissions.h"
#include "relctl/replies.h"

#include <QMetaType>
#include <QString>
#include <QStringList>
#include <optional>
#include <string>
#include <vector>

namespace relctl::ui {

// The first schema version with promotions and rollback (migration 0006):
// an older database has neither, and the console does not ask it.
inline constexpr int kPromotionsSchemaVersion = 6;

// What an operator asks for; the worker turns it into one protocol call.
struct ConsoleAction
{
    // Approve/Deny decide a supersession request; ApprovePromotion and
    // DenyPromotion a promotion request; Rollback makes an earlier manifest
    // of env current again. FreezeMany and UnfreezeMany act on every
    // environment of envs in one transaction (all or none), with one reason.
    enum class Kind {
        Approve,
        Deny,
        Revoke,
        Freeze,
        Unfreeze,
        ApprovePromotion,
        DenyPromotion,
        Rollback,
        FreezeMany,
        UnfreezeMany
    };
    Kind kind = Kind::Approve;
    QString env;
    qint64 request = 0; // the supersession request, for Approve/Deny
    QString by;
    QString reason;
    qint64 promotion = 0;  // the promotion request, for ApprovePromotion/DenyPromotion
    qint64 manifest = 0;   // the manifest to restore, for Rollback (relctl rollback --to-manifest)
    QStringList envs = {}; // the environments, for FreezeMany/UnfreezeMany
};

} // namespace relctl::ui

Q_DECLARE_METATYPE(relctl::ui::ConsoleAction)

namespace relctl::ui {

// A pending supersession request, as the approvals list shows it.
struct SupersessionRow
{
    qint64 id = 0;
    QString env;
    QString winnerJob;
    QString winnerRelease;
    qint64 winnerGeneration = 0;
    QStringList skipped; // "job (generation N)"
};

} // namespace relctl::ui

Q_DECLARE_METATYPE(relctl::ui::SupersessionRow)
Q_DECLARE_METATYPE(QList<relctl::ui::SupersessionRow>)

namespace relctl::ui {

// What the Promotions view shows, read together so that the paths and the
// requests agree: every environment (its promotion path, current release,
// soak and approvals required) and the open promotion requests. core's own
// reply types: the view reads them as the CLI does.
//
// The console reads the environments that take part in a path, the open
// requests and the newest kDecidedPromotions decided ones. A live update
// reads part of it: `covers` names the environments it replaces (their
// paths and requests); the session merges it into the whole it holds, and
// the views only ever see a whole (covers empty).
struct PromotionsSnapshot
{
    std::vector<relctl::Environment> environments;
    std::vector<relctl::Promotion> promotions;
    std::optional<std::vector<std::string>> covers = std::nullopt;
};

// How many decided promotion requests the Promotions view shows (the newest).
inline constexpr int kDecidedPromotions = 100;

} // namespace relctl::ui

Q_DECLARE_METATYPE(relctl::ui::PromotionsSnapshot)
Q_DECLARE_METATYPE(relctl::ManifestHistory)

namespace relctl::ui {

struct ConnectionState
{
    bool connected = false;
    QString server;    // "PostgreSQL 15.x, database relctl"
    double rttMs = 0;  // the last round trip
    bool live = false; // listening for events
    int schemaVersion = 0;
    QString login; // the database login (session_user) the console acts as
    // What the login may do (its relctl roles); unknown until connected.
    Permissions permissions;
    bool tls = false; // the connection is encrypted
    QString message;  // why not connected
    QString target;   // where it connects, as ConnectionTarget::describe() says
};

} // namespace relctl::ui

Q_DECLARE_METATYPE(relctl::ui::ConnectionState)

namespace relctl::ui {

// What a reviewer asks "what became of ...?" about: a job (relctl.job_state,
// its newest operation) or one op id (relctl.op_state). The kind is never
// guessed from the text: a job looked up as an op id is "unknown", and
// "unknown" says a retry is safe.
struct StatusLookup
{
    enum class Kind { Job, Operation };
    Kind kind = Kind::Job;
    QString key; // the job's name or the op id, as typed (trimmed)

    friend bool operator==(const StatusLookup&, const StatusLookup&) = default;
};

} // namespace relctl::ui

Q_DECLARE_METATYPE(relctl::ui::StatusLookup)
Q_DECLARE_METATYPE(relctl::JobStatus)

namespace relctl::ui {

// What a connection test found: the server and schema behind a target, or why
// it could not be reached.
struct ProbeResult
{
    bool ok = false;
    QString target;        // ConnectionTarget::describe(): never a password
    QString serverVersion; // "15.x"
    QString database;
    int schemaVersion = 0;   // a database without the schema fails ("run relctl migrate")
    double rttMs = 0;        // one serverInfo() round trip on the open connection
    QString login;           // who the server says the connection is (session_user)
    Permissions permissions; // the login's relctl roles
    bool tls = false;        // the connection is encrypted
    QString message;         // why it failed
};

} // namespace relctl::ui

Q_DECLARE_METATYPE(relctl::ui::ProbeResult)
