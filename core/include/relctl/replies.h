#pragma once

// The replies of relctl's SQL functions (migrations/functions/*.sql) as value
// types: what Database returns for every operation, and for the protocol's
// writes (whose answer is an Outcome, a refusal being an answer too) what an
// accepted Outcome carries: outcome.reply<Grant>(). Each type is named after
// the SQL that builds it, each member after its key (camelCase). JSON is made from these types
// only at the edges (the CLI's --json output): to_json writes exactly the keys
// the server sent, so that output keeps its shape. A member the server sends
// as null is an empty optional and written back as null; a key the server
// sends only in some replies is an empty optional there and left out.
//
// This is the header to include. The types live with the SQL function family
// that sends them, one header each:
//   replies_audit.h        the audit trail, traces, status lookups
//   replies_lease.h        leases, the queue, supersession requests, and
//                          the answers of acquire, renew, release, queue drop
//   replies_manifest.h     published manifests, rollbacks, manifest history,
//                          and the answers of publish and rollback
//   replies_environment.h  environments and the calls that change them
//   replies_promotion.h    promotion requests, opened and decided
// and replyjson.h says how each is made JSON.

#include "relctl/replies_audit.h"
#include "relctl/replies_environment.h"
#include "relctl/replies_lease.h"
#include "relctl/replies_manifest.h"
#include "relctl/replies_promotion.h"
#include "relctl/replyjson.h"

#include <optional>
#include <string>

namespace relctl {

// How the person behind a decision is shown everywhere (CLI, console): the
// name they gave, and the database login that made the call when the two
// differ — "alice", or "alice (login ci-bot)". The login is what the server
// authenticated; the name is only what was typed.
std::string actorWithLogin(const std::string& by, const std::optional<std::string>& login);

} // namespace relctl
