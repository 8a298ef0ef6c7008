#include "consolestart.h"

#include "relctl/version.h"

#include <QApplication>
#include <QMessageBox>
#include <cstdio>
#include <memory>

namespace relctl::ui {

QString consoleVersion()
{
    return QObject::tr("relctl release console %1").arg(QString::fromStdString(relctl::describedVersion()));
}

bool canShowDialogs()
{
    if (qobject_cast<QApplication*>(QCoreApplication::instance()) == nullptr)
        return false;
    const QString platform = QGuiApplication::platformName();
    return platform != QLatin1String("offscreen") && platform != QLatin1String("minimal");
}

QMessageBox* startupRefusalBox(const QString& reason)
{
    auto* box = new QMessageBox(QMessageBox::Critical, QObject::tr("release console"),
                                QObject::tr("The release console cannot start."), QMessageBox::Close);
    box->setObjectName(QStringLiteral("startupRefusal"));
    box->setInformativeText(reason);
    return box;
}

int refuseToStart(const QString& reason, int code, bool interactive)
{
    std::fprintf(stderr, "release-console: %s\n", qPrintable(reason));
    if (interactive && canShowDialogs()) {
        const std::unique_ptr<QMessageBox> box(startupRefusalBox(reason));
        box->exec();
    }
    return code;
}

} // namespace relctl::ui
