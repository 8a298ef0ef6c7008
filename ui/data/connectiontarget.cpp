#include "connectiontarget.h"

#include "relctl/embedded.h"

#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QMutex>
#include <QRegularExpression>
#include <QSettings>
#include <QUrl>
#include <cstdlib>
#include <functional>
#include <optional>

namespace relctl::ui {

namespace {

const QString modeKey = QStringLiteral("connection/mode");
const QString dsnKey = QStringLiteral("connection/dsn");
const QString mask = QStringLiteral("***");

// The password in each spelling of a libpq DSN: keyword/value, a URI's
// user:password@, and a URI's password= parameter.
const QRegularExpression& conninfoPassword()
{
    static const QRegularExpression re(
        QStringLiteral("(?:^|\\s)(password\\s*=\\s*)('(?:[^'\\\\]|\\\\.)*'|\\S+)"));
    return re;
}

const QRegularExpression& uriPassword()
{
    static const QRegularExpression re(QStringLiteral("(://[^:/@?]*:)([^@/?]*)@"));
    return re;
}

const QRegularExpression& uriParameterPassword()
{
    static const QRegularExpression re(QStringLiteral("([?&]password=)([^&]*)"));
    return re;
}

// Writes the settings out and makes the file its owner's only: it names
// servers and logins. QSettings rewrites it keeping these permissions.
void makePrivate(QSettings& settings)
{
    settings.sync();
    if (settings.format() != QSettings::NativeFormat && settings.format() != QSettings::IniFormat)
        return;
    if (const QFileInfo file(settings.fileName()); file.exists())
        QFile::setPermissions(file.filePath(), QFileDevice::ReadOwner | QFileDevice::WriteOwner);
}

bool isUri(const QString& dsn)
{
    return dsn.startsWith(QLatin1String("postgresql://")) || dsn.startsWith(QLatin1String("postgres://"));
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

// A keyword/value value as libpq reads it: quotes removed, \' and \\ undone.
QString unquoted(const QString& value)
{
    if (!value.startsWith(QLatin1Char('\'')))
        return value;
    QString out;
    for (qsizetype i = 1; i + 1 < value.size(); ++i) {
        if (value.at(i) == QLatin1Char('\\') && i + 2 < value.size())
            ++i;
        out += value.at(i);
    }
    return out;
}

// The passwords of this run, by the connection string (without password)
// they are for. resolve() reads them on worker threads.
struct SessionPasswords
{
    QMutex mutex;
    QHash<QString, QString> byDsn;
};

SessionPasswords& sessionPasswords()
{
    static SessionPasswords passwords;
    return passwords;
}

// Where a password is for: the connection string the target leads to, or
// nothing for the embedded and demo clusters (peer authentication).
std::optional<QString> passwordKey(const ConnectionTarget& target)
{
    const ConnectionTarget chosen = target.effective();
    if (chosen.kind != ConnectionTarget::Kind::Dsn)
        return std::nullopt;
    return chosen.dsn;
}

QString withPassword(const QString& dsn, const QString& password)
{
    if (isUri(dsn))
        return dsn + (dsn.contains(QLatin1Char('?')) ? QLatin1Char('&') : QLatin1Char('?')) +
               QStringLiteral("password=") + QString::fromLatin1(QUrl::toPercentEncoding(password));
    QString quoted = password;
    quoted.replace(QLatin1Char('\\'), QLatin1String("\\\\")).replace(QLatin1Char('\''), QLatin1String("\\'"));
    return (dsn.isEmpty() ? QString() : dsn + QLatin1Char(' ')) + QStringLiteral("password='%1'").arg(quoted);
}

} // namespace

QString ConnectionTarget::withoutPassword(const QString& dsn)
{
    QString out = dsn;
    if (isUri(out)) {
        static const QRegularExpression userinfo(QStringLiteral("(://[^:/@?]*):[^@/?]*@"));
        out.replace(userinfo, QStringLiteral("\\1@"));
        // ?password=x&a=b -> ?a=b; a=b&password=x -> a=b; ?password=x -> nothing
        out.replace(QRegularExpression(QStringLiteral("\\?password=[^&]*(&|$)")), QStringLiteral("?"));
        out.replace(QRegularExpression(QStringLiteral("&password=[^&]*")), QString());
        if (out.endsWith(QLatin1Char('?')))
            out.chop(1);
        return out;
    }
    out.replace(conninfoPassword(), QString());
    return out.simplified().isEmpty() ? QString() : out.trimmed();
}

QString ConnectionTarget::passwordIn(const QString& dsn)
{
    if (isUri(dsn)) {
        for (const QRegularExpression* re : {&uriParameterPassword(), &uriPassword()})
            if (const QRegularExpressionMatch m = re->match(dsn); m.hasMatch())
                return QUrl::fromPercentEncoding(m.captured(2).toUtf8());
        return {};
    }
    QString found;
    for (auto it = conninfoPassword().globalMatch(dsn); it.hasNext();)
        found = unquoted(it.next().captured(2)); // libpq: the last one wins
    return found;
}

ConnectionTarget ConnectionTarget::fromDsn(const QString& dsn)
{
    const QString trimmed = dsn.trimmed();
    if (trimmed.isEmpty())
        return {};
    ConnectionTarget target{Kind::Dsn, withoutPassword(trimmed)};
    if (const QString password = passwordIn(trimmed); !password.isEmpty())
        target.rememberPassword(password);
    return target;
}

void ConnectionTarget::rememberPassword(const QString& password) const
{
    const std::optional<QString> key = passwordKey(*this);
    if (!key)
        return;
    SessionPasswords& passwords = sessionPasswords();
    const QMutexLocker lock(&passwords.mutex);
    if (password.isEmpty())
        passwords.byDsn.remove(*key);
    else
        passwords.byDsn.insert(*key, password);
}

bool ConnectionTarget::hasRememberedPassword() const
{
    const std::optional<QString> key = passwordKey(*this);
    if (!key)
        return false;
    SessionPasswords& passwords = sessionPasswords();
    const QMutexLocker lock(&passwords.mutex);
    return passwords.byDsn.contains(*key);
}

bool ConnectionTarget::needsPassword(const QString& message)
{
    // libpq's words when it had none to send, and the server's when the one
    // sent was wrong (or none is set for the login).
    return message.contains(QLatin1String("no password supplied")) ||
           message.contains(QLatin1String("password authentication failed"));
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
    // Settings written before the mode existed hold only a DSN (empty:
    // default). A password an older version saved is taken into memory.
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
        settings.setValue(dsnKey, withoutPassword(dsn));
        break;
    case Kind::Demo:
        break; // for one run only: the next one opens what was saved before
    }
    // A DSN kept for switching back keeps no password an older version saved.
    removeSavedPassword(settings);
    makePrivate(settings);
}

void ConnectionTarget::removeSavedPassword(QSettings& settings)
{
    const QString kept = settings.value(dsnKey).toString();
    if (kept == withoutPassword(kept))
        return;
    fromDsn(kept); // remembers the password for this run
    settings.setValue(dsnKey, withoutPassword(kept));
    makePrivate(settings);
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
    QString shown = dsn;
    for (const QRegularExpression* re : {&conninfoPassword(), &uriPassword(), &uriParameterPassword()})
        shown = replacePassword(shown, *re, masked);
    return shown;
}

std::string ConnectionTarget::resolve() const
{
    const ConnectionTarget chosen = effective();
    if (chosen.kind == Kind::Embedded)
        return relctl::EmbeddedCluster::forCurrentUser().ensureRunning();
    if (chosen.kind == Kind::Demo)
        return relctl::EmbeddedCluster::demoForCurrentUser().ensureRunning();
    // Empty: libpq's PG* variables. Without a remembered password libpq
    // looks for one itself (~/.pgpass, PGPASSFILE, service files).
    QString conninfo = chosen.dsn;
    {
        SessionPasswords& passwords = sessionPasswords();
        const QMutexLocker lock(&passwords.mutex);
        if (const auto it = passwords.byDsn.constFind(chosen.dsn); it != passwords.byDsn.constEnd())
            conninfo = withPassword(conninfo, *it);
    }
    return conninfo.toStdString();
}

QString demoRefusal(const ConnectionTarget& target, bool named)
{
    if (!named)
        return {};
    return QStringLiteral("--demo opens only its own demo database and never a database named by --dsn "
                          "(%1); run it without --dsn")
        .arg(target.describe());
}

} // namespace relctl::ui
