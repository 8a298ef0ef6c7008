#include "connectiontarget.h"

#include "relctl/embedded.h"

#include <QRegularExpression>
#include <QSettings>
#include <cstdlib>
#include <functional>

namespace relctl::ui {

namespace {

const QString modeKey = QStringLiteral("connection/mode");
const QString dsnKey = QStringLiteral("connection/dsn");
const QString mask = QStringLiteral("***");

// The password in both spellings of a libpq DSN: keyword/value and URI.
const QRegularExpression& conninfoPassword()
{
    static const QRegularExpression re(QStringLiteral("(password\\s*=\\s*)('[^']*'|\\S+)"));
    return re;
}

const QRegularExpression& uriPassword()
{
    static const QRegularExpression re(QStringLiteral("(://[^:/@]*:)([^@]*)@"));
    return re;
}

// Replaces the second capture of every match with what `value` returns.
QString replacePassword(const QString& text, const QRegularExpression& re,
                        const std::function<QString(const QString&)>& value)
{
    QString out;
    qsizetype from = 0;
    for (auto it = re.globalMatch(text); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        out += text.mid(from, m.capturedStart(2) - from);
        out += value(m.captured(2));
        from = m.capturedEnd(2);
    }
    return out + text.mid(from);
}

QString savedPassword(const QString& dsn, const QRegularExpression& re)
{
    const QRegularExpressionMatch m = re.match(dsn);
    return m.hasMatch() ? m.captured(2) : QString();
}

} // namespace

ConnectionTarget ConnectionTarget::fromDsn(const QString& dsn)
{
    const QString trimmed = dsn.trimmed();
    if (trimmed.isEmpty())
        return {};
    return {Kind::Dsn, trimmed};
}

ConnectionTarget ConnectionTarget::load(const QSettings& settings)
{
    const QString mode = settings.value(modeKey).toString();
    const QString dsn = settings.value(dsnKey).toString();
    if (mode == QLatin1String("embedded"))
        return embedded();
    // A DSN kept from an earlier choice does not override a later "default".
    if (mode == QLatin1String("default"))
        return {};
    // Settings written before the mode existed hold only a DSN (empty: default).
    return fromDsn(dsn);
}

void ConnectionTarget::save(QSettings& settings) const
{
    switch (kind) {
    case Kind::Default:
        settings.setValue(modeKey, QStringLiteral("default"));
        break;
    case Kind::Embedded:
        settings.setValue(modeKey, QStringLiteral("embedded"));
        break;
    case Kind::Dsn:
        settings.setValue(modeKey, QStringLiteral("dsn"));
        settings.setValue(dsnKey, dsn);
        break;
    case Kind::Demo:
        break; // for one run only: the next one opens what was saved before
    }
}

// The CLI's rule for the default, without side effects: $RELCTL_DSN, else
// the embedded database unless libpq's PG* variables name one (an empty DSN).
ConnectionTarget ConnectionTarget::effective() const
{
    if (kind != Kind::Default)
        return *this;
    if (const char* env = std::getenv("RELCTL_DSN"); env && *env)
        return fromDsn(QString::fromLocal8Bit(env));
    if (relctl::embeddedIsDefault())
        return embedded();
    return {Kind::Dsn, QString()};
}

QString ConnectionTarget::describe() const
{
    switch (kind) {
    case Kind::Default: {
        // Where the default leads here and now, as resolve() decides.
        const ConnectionTarget chosen = effective();
        if (chosen.kind == Kind::Dsn && chosen.dsn.isEmpty())
            return QObject::tr("relctl's default: libpq's PG* variables");
        return QObject::tr("relctl's default: %1").arg(chosen.describe());
    }
    case Kind::Embedded:
        return QObject::tr("the embedded database");
    case Kind::Demo:
        return QObject::tr("the demo's own database");
    case Kind::Dsn:
        break;
    }
    // Passwords stay out of status bars and screenshots, in both spellings.
    auto masked = [](const QString&) { return mask; };
    return replacePassword(replacePassword(dsn, conninfoPassword(), masked), uriPassword(), masked);
}

ConnectionTarget ConnectionTarget::fromEditedDsn(const QString& edited, const ConnectionTarget& saved)
{
    ConnectionTarget target = fromDsn(edited);
    if (target.kind != Kind::Dsn || saved.kind != Kind::Dsn)
        return target;
    for (const QRegularExpression* re : {&conninfoPassword(), &uriPassword()}) {
        const QString password = savedPassword(saved.dsn, *re);
        target.dsn = replacePassword(
            target.dsn, *re, [&password](const QString& shown) { return shown == mask ? password : shown; });
    }
    return target;
}

std::string ConnectionTarget::resolve() const
{
    const ConnectionTarget chosen = effective();
    if (chosen.kind == Kind::Embedded)
        return relctl::EmbeddedCluster::forCurrentUser().ensureRunning();
    if (chosen.kind == Kind::Demo)
        return relctl::EmbeddedCluster::demoForCurrentUser().ensureRunning();
    return chosen.dsn.toStdString(); // empty: libpq's PG* variables
}

QString demoRefusal(const ConnectionTarget& target, bool named)
{
    if (named)
        return QStringLiteral("--demo opens only its own demo database and never a database named by --dsn "
                              "(%1); run it without --dsn")
            .arg(target.describe());
    const ConnectionTarget where = target.effective();
    if (where.kind == ConnectionTarget::Kind::Embedded || where.kind == ConnectionTarget::Kind::Demo)
        return {};
    return QStringLiteral("--demo opens only its own demo database, but the console is set to connect to %1 "
                          "(the saved connection, $RELCTL_DSN or PG* variables); choose \"Embedded\" in "
                          "File > Connection or unset them, then run --demo again")
        .arg(where.describe());
}

} // namespace relctl::ui
