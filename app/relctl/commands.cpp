#include "commands.h"

#include "command.h"
#include "commandline.h"
#include "context.h"
#include "output.h"
#include "relctl/database.h"
#include "relctl/error.h"
#include "relctl/logging.h"

#include <cstdlib>
#include <iostream>

namespace relctl::cli {

namespace {

// The parsed command's handler (command.h). The grammar and the handlers are
// one table, so a command parsed but not handled is relctl's own bug.
int dispatch(CommandContext& context)
{
    const Command* command = findCommand(context.args().command());
    if (command == nullptr || command->run == nullptr)
        throw Error(ExitCode::Internal, "no handler for '" + context.args().command() + "'");
    return command->run(context);
}

// $RELCTL_DSN, or "": for masking its password where the command line was
// not understood.
std::string environmentDsn()
{
    const char* env = std::getenv("RELCTL_DSN");
    return env ? env : "";
}

} // namespace

int run(int argc, char** argv)
{
    // Core bounds every connection attempt and call (connect_timeout 5 s
    // unless PGCONNECT_TIMEOUT or the connection string says otherwise).
    setenv("PGAPPNAME", "relctl", 0);
    configureLogging();

    CommandLine commandLine;
    // A usage error is rendered as JSON when --json came before it.
    const auto early = [&] { return Output(commandLine.jsonRequested()); };
    try {
        Invocation invocation = commandLine.parse(std::vector<std::string>(argv + 1, argv + argc));
        if (invocation.help) {
            std::cout << *invocation.help;
            return 0;
        }
        CommandContext context(std::move(invocation));
        try {
            return dispatch(context);
        } catch (const Error& e) {
            return context.out().failure(e.code(), e.reason(), context.withoutPasswords(e.what()),
                                         e.detail());
        }
    } catch (const Error& e) {
        return early().failure(e.code(), e.reason(), redactPasswords(e.what(), environmentDsn()), e.detail());
    } catch (const std::exception& e) {
        return early().failure(ExitCode::Internal, "internal",
                               redactPasswords(std::string("internal error: ") + e.what(), environmentDsn()));
    }
}

} // namespace relctl::cli
