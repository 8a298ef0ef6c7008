#pragma once

// What release-console says about itself at start: its version (for --version
// and Help > About) and a refusal to start (a bad option, --demo with --dsn),
// which goes to stderr and, where someone sees the screen, to a dialog too:
// a console started from a desktop menu has no terminal to read.

#include <QString>

class QMessageBox;

namespace relctl::ui {

// "relctl release console 0.1.0 (abc1234)": the project's version and the
// source it was built from, as relctl --version says them.
QString consoleVersion();

// Whether a dialog can be seen: a QApplication on a platform that shows
// windows (not offscreen or minimal, which render for tests and screenshots).
bool canShowDialogs();

// The dialog refuseToStart shows (not yet shown): for tests.
QMessageBox* startupRefusalBox(const QString& reason);

// Writes "release-console: REASON" to stderr and, when `interactive` and
// canShowDialogs(), shows it in a dialog until dismissed; returns `code`, the
// exit status release-console(1) documents (2: a bad option or a refused
// --demo).
int refuseToStart(const QString& reason, int code, bool interactive);

} // namespace relctl::ui
