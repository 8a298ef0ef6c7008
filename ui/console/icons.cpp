#include "icons.h"

// Outside any namespace, as Q_INIT_RESOURCE requires. The resources live in a
// static library: nothing references their initialiser, so the linker would
// drop it without this call.
static void initConsoleResources()
{
    Q_INIT_RESOURCE(release_console);
}

namespace relctl::ui {

QIcon consoleIcon(const QString& name)
{
    static const bool initialised = [] {
        initConsoleResources();
        return true;
    }();
    Q_UNUSED(initialised);
    return QIcon(QStringLiteral(":/icons/%1.svg").arg(name));
}

} // namespace relctl::ui
