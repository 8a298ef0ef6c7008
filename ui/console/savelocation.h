#pragma once

// Where the console proposes to save what a person keeps (an audit export, a
// rehearsal report): the folder they last saved that kind of file to, else
// their documents folder, else home, never the process's working directory (a
// console started from a menu has "/" or its install directory there); and a
// name that says what and when, in UTC like every time the console shows, to
// the minute so one day's files do not overwrite each other.

#include <QString>
#include <QtGlobal>

namespace relctl::ui {

// `remembered`: the folder last saved to (empty, or gone: not used).
QString saveFolder(const QString& remembered);
// "relctl-<what>-2026-12-06-1430.<suffix>".
QString datedFileName(const QString& what, const QString& suffix, qint64 nowMs);

} // namespace relctl::ui
