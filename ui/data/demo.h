#pragma once

#include <QString>

namespace relctl {
class Database;
}

// Seeds a demo history through the protocol itself (no SQL): environments
// with different policies, releases racing, a stale write refused, an expired
// lease superseded, a revoke, a freeze, waiting candidates, a promotion path
// test → staging → prod (prod needing two approvals and a soak) with open,
// denied and refused promotions, and a rollback on staging. Idempotent: does
// nothing when the database already has environments. Takes a few seconds
// (it lets one lease expire); run it on the worker's thread.
namespace relctl::ui {

void seedDemoHistory(relctl::Database& db);

struct ConnectionTarget;

// Why the demo may not be seeded where `target` leads (empty: it may): only
// the embedded database takes it, so that a fabricated history never lands
// in a real, append-only audit trail. `named`: the target came from --dsn.
QString demoRefusal(const ConnectionTarget& target, bool named);

} // namespace relctl::ui
