// Durations ("250ms", "30s", "5m", "1h", a bare integer of seconds): never a
// crash, never a negative value, and what formatDuration prints reads back
// as the same duration.

#include "fuzz.h"
#include "relctl/parse.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const auto parsed = relctl::parseDuration(fuzz::text(data, size));
    if (!parsed)
        return 0;
    fuzz::check(parsed->count() >= 0, "a duration is never negative");
    const std::string printed = relctl::formatDuration(*parsed);
    const auto again = relctl::parseDuration(printed);
    fuzz::check(again && *again == *parsed, "formatDuration reads back as the same duration");
    return 0;
}
