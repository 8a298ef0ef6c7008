#pragma once

// The command tables, one per group of commands (command.h), in --help's order.

#include "command.h"

namespace relctl::cli::groups {

std::span<const Command> setup();     // migrate, env
std::span<const Command> lease();     // lease, publish, run
std::span<const Command> decisions(); // freeze, unfreeze, queue, approvals, approve, deny, promote, rollback
std::span<const Command> reading();   // manifest, audit, trace, verify, op, status
std::span<const Command> watch();     // watch --decisions
std::span<const Command> local();     // db, state, rehearse, completion: this machine

} // namespace relctl::cli::groups
