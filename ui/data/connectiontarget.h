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
    QString dsn; // for Kind::Dsn: a libpq connection string or URI

    static ConnectionTarget fromDsn(const QString& dsn);
    static ConnectionTarget embedded() { return {Kind::Embedded, {}}; }
    static ConnectionTarget demo() { return {Kind::Demo, {}}; }

    // Stored under connection/mode (default | embedded | dsn) and connection/dsn.
    static ConnectionTarget load(const QSettings& settings);
    void save(QSettings& settings) const;

    // One line for the status bar and dialogs; never shows a password.
    QString describe() const;

    // A DSN typed over describe()'s masked form: where the mask ("***") still
    // stands for a password, the password of `saved` is put back, so a saved
    // password is never shown again yet survives editing the rest of the DSN.
    static ConnectionTarget fromEditedDsn(const QString& edited, const ConnectionTarget& saved);

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

// Why --demo may not run with `target` (empty: it may): the demo opens only
// its own database, and a run that names another (by --dsn, the saved
// connection, $RELCTL_DSN or PG* variables) is refused rather than leave the
// user unsure which one they look at. `named`: the target came from --dsn.
QString demoRefusal(const ConnectionTarget& target, bool named);

} // namespace relctl::ui

Q_DECLARE_METATYPE(relctl::ui::ConnectionTarget)
