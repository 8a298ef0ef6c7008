#pragma once

namespace relctl::ui {

class ConsoleSession;
class MainWindow;

// The demo (release-console --demo) opens on its last day, a week being too
// much to read at once (Shift+F shows it whole): when the first timeline
// slice arrives, the view stops following and shows the 23 hours before the
// server's now and the hour after it (live leases' expiry); once the slice
// of that day is in, the newest refused stale write on it is selected and
// traced, as the story's point. Call before session->start().
void openOnLastDay(ConsoleSession* session, MainWindow* window);

} // namespace relctl::ui
