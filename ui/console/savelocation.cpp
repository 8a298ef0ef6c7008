// saveFolder and datedFileName: one proposal for every file the console saves.
#include "savelocation.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

namespace relctl::ui {

QString saveFolder(const QString& remembered)
{
    if (!remembered.isEmpty() && QFileInfo(remembered).isDir())
        return remembered;
    QString documents = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    if (!documents.isEmpty() && QFileInfo(documents).isDir())
        return documents;
    return QDir::homePath();
}

QString datedFileName(const QString& what, const QString& suffix, qint64 nowMs)
{
    return QStringLiteral("relctl-%1-%2.%3")
        .arg(what, QDateTime::fromMSecsSinceEpoch(nowMs, Qt::UTC).toString(QStringLiteral("yyyy-MM-dd-HHmm")),
             suffix);
}

} // namespace relctl::ui
