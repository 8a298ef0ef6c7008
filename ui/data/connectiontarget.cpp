#include "connectiontarget.h"

#include "relctl/embedded.h"

#include <QRegularExpression>
#include <QSettings>
#include <cstdlib>

namespace {

const QString modeKey = QStringLiteral("connection/mode");
const QString dsnKey = QStringLiteral("connection/dsn");

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
    }
}

QString ConnectionTarget::describe() const
{
    switch (kind) {
    case Kind::Default:
        return QObject::tr("relctl's default ($RELCTL_DSN, PG* variables, else the embedded database)");
    case Kind::Embedded:
        return QObject::tr("the embedded database");
    case Kind::Dsn:
        break;
    }
    // Passwords stay out of status bars and screenshots, in both spellings.
    QString shown = dsn;
    shown.replace(QRegularExpression(QStringLiteral("(password\\s*=\\s*)('[^']*'|\\S+)")),
                  QStringLiteral("\\1***"));
    shown.replace(QRegularExpression(QStringLiteral("(://[^:/@]*:)[^@]*@")), QStringLiteral("\\1***@"));
    return shown;
}

std::string ConnectionTarget::resolve() const
{
    switch (kind) {
    case Kind::Dsn:
        return dsn.toStdString();
    case Kind::Embedded:
        return relctl::EmbeddedCluster::forCurrentUser().ensureRunning();
    case Kind::Default:
        break;
    }
    if (const char* env = std::getenv("RELCTL_DSN"); env && *env)
        return env;
    if (relctl::embeddedIsDefault())
        return relctl::EmbeddedCluster::forCurrentUser().ensureRunning();
    return {}; // libpq's PG* variables
}
