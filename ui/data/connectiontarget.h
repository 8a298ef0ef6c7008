#pragma once

#include <QMetaType>
#include <QString>
#include <string>

class QSettings;

namespace relctl::ui {

// Where the console connects. "Default" is relctl's own rule, the same as the
// CLI's: $RELCTL_DSN, else libpq's PG* variables when they name a database,
// else the embedded database. "Embedded" and "Dsn" name one place whatever
// the environment says. "Demo" is the demo's own cluster (release-console
// --demo), never saved and never anyone's default.
struct ConnectionTarget
{
    enum class Kind { Default, Embedded, Dsn, Demo };
    Kind kind = Kind::Default;
    // For Kind::Dsn: a libpq connection string or URI, never with a password
    // in it (fromDsn moves one to the session's memory, see rememberPassword).
    QString dsn;

    // A password in `dsn` (password=..., a URI's user:password@ or
    // ?password=) is taken out of the target and remembered for this run
    // only, so no copy of a target (settings, status bar, dialogs) holds it.
    static ConnectionTarget fromDsn(const QString& dsn);
    static ConnectionTarget embedded() { return {Kind::Embedded, {}}; }
    static ConnectionTarget demo() { return {Kind::Demo, {}}; }

    // Stored under connection/mode (default | embedded | dsn) and
    // connection/dsn. save() never writes a password (and removes one an
    // older version wrote), and makes the settings file readable by its
    // owner only.
    static ConnectionTarget load(const QSettings& settings);
    void save(QSettings& settings) const;
    // A password an older version saved: kept in memory for this run and
    // removed from the settings (which become their owner's only). For the
    // start of a run, before anything connects.
    static void removeSavedPassword(QSettings& settings);

    // One line for the status bar and dialogs; never shows a password.
    QString describe() const;

    // The password for where this target leads (effective()), for this run
    // only: kept in memory, never saved, and added by resolve(). Empty
    // forgets it. Without one, libpq finds its own (~/.pgpass, PGPASSFILE,
    // a service file, PGPASSWORD), or the server says it wants one
    // (needsPassword), and the console asks.
    void rememberPassword(const QString& password) const;
    bool hasRememberedPassword() const;
    // Whether a connection failed because the server wants a password (none
    // was given, or the given one was refused).
    static bool needsPassword(const QString& message);

    // A connection string without its passwords, and the password it holds
    // (empty: none).
    static QString withoutPassword(const QString& dsn);
    static QString passwordIn(const QString& dsn);

    // The libpq connection string to open. Starts the embedded cluster when
    // the target is (or defaults to) it, so it may take seconds: call it off
    // the GUI thread. Throws relctl::Error as the CLI's resolution does.
    std::string resolve() const;

    // Where the default leads here and now, without side effects: Embedded,
    // or a Dsn (empty: libpq's PG* variables). Rehearsals need to know which,
    // since on the embedded database they create scratch databases as its
    // administrator.
    ConnectionTarget effective() const;

    friend bool operator==(const ConnectionTarget&, const ConnectionTarget&) = default;
};

// Why --demo may not run with `target` (empty: it may). The demo opens only
// its own database, whatever the saved connection, $RELCTL_DSN or PG*
// variables say (they are left as they are for the next run); only a
// database named on the same command line (--dsn, `named`) contradicts it.
QString demoRefusal(const ConnectionTarget& target, bool named);

} // namespace relctl::ui

Q_DECLARE_METATYPE(relctl::ui::ConnectionTarget)
