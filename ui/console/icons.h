#pragma once

#include <QIcon>
#include <QString>

namespace relctl::ui {

// The console's own icons, drawn as SVG under resources/icons and compiled in
// through resources/release-console.qrc: "app", "approve", "connection",
// "deny", "export", "follow-now", "freeze", "rehearsal", "reload", "revoke",
// "trace", "unfreeze". Flat mid-tone shapes with white glyphs, legible on
// light and dark palettes and sharp at any scale. They need the SVG icon
// engine plugin (Debian: libqt6svg6) at run time.
QIcon consoleIcon(const QString& name);

} // namespace relctl::ui
