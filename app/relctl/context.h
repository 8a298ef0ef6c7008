#pragma once

#include "arguments.h"
#include "commandline.h"
#include "output.h"
#include "relctl/database.h"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace relctl::cli {

// What a command's handler (command.h) works with: its parsed arguments, the
// output in the asked-for form, and the database, connected on first use
// (after the arguments were checked, so invalid input is reported without
// touching it).
class CommandContext final
{
public:
    explicit CommandContext(Invocation invocation);

    const Arguments& args() const { return m_args; }
    const Output& out() const { return m_out; }
    const Globals& globals() const { return m_globals; }
    // The words after "--" (run's command).
    const std::optional<std::vector<std::string>>& childCommand() const { return m_childCommand; }

    // The i-th word of the command, e.g. "acquire" of "lease acquire" ("" past the end).
    std::string word(std::size_t i) const;

    // Connects on first use. `wait`: the command's --wait, within which a
    // connection the server is slow to answer is tried again.
    Database& database(std::optional<std::chrono::milliseconds> wait = std::nullopt);

    // --dsn, else $RELCTL_DSN, else libpq's PG* variables when they name a
    // server, else the embedded default database (started on first use).
    Database connect() const;

    // --dsn, else $RELCTL_DSN, else "" when libpq's PG* variables name a
    // server; nothing when the embedded default database is meant.
    std::optional<std::string> namedDsn() const;

    // The lease handle is a secret (whoever has it may publish): from
    // --lease-file or $RELCTL_LEASE it stays out of the process list, which
    // any user on the machine can read; --lease still works, with a warning.
    Handle handle() const;

    // A message with the passwords of the connection string masked (core
    // masks where it quotes one; this is the last line of defence).
    std::string withoutPasswords(const std::string& message) const;

private:
    Globals m_globals;
    Arguments m_args;
    std::optional<std::vector<std::string>> m_childCommand;
    Output m_out;
    std::optional<Database> m_db;
};

} // namespace relctl::cli
