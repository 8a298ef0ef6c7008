// Lease handles (ENV:TOKEN:LEASE_ID): a parsed handle has a valid environment
// name, a positive token and 32 lowercase hex digits, and prints back as the
// text it was read from (less any leading zeros of the token).

#include "fuzz.h"
#include "relctl/parse.h"

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view input = fuzz::text(data, size);
    const auto handle = relctl::parseHandle(input);
    if (!handle)
        return 0;
    fuzz::check(relctl::isValidEnvironmentName(handle->env), "a handle names a valid environment");
    fuzz::check(handle->token > 0, "a handle's token is positive");
    fuzz::check(handle->leaseId.size() == 32 &&
                    handle->leaseId.find_first_not_of("0123456789abcdef") == std::string::npos,
                "a handle's lease id is 32 lowercase hex digits");
    // The token may have been given with leading zeros; otherwise the text is the handle's.
    const std::string printed = handle->toString();
    const std::string canonical = [&] {
        std::string t(input);
        const auto first = t.find(':') + 1;
        while (t[first] == '0' && t[first + 1] != ':')
            t.erase(first, 1);
        return t;
    }();
    fuzz::check(printed == canonical, "a handle prints back as its text");
    fuzz::check(relctl::parseHandle(handle->toString()) == handle, "a printed handle reads back");
    return 0;
}
