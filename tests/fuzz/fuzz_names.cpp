// Environment names and positive integers: the validators agree with their
// specification written out independently here, and numbers print back.

#include "fuzz.h"
#include "relctl/parse.h"

#include <algorithm>
#include <string>

namespace {

// ^[a-z0-9][a-z0-9._-]{0,62}$, character by character.
bool specifiedName(std::string_view s)
{
    if (s.empty() || s.size() > 63)
        return false;
    const auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    if (!alnum(s.front()))
        return false;
    for (char c : s.substr(1))
        if (!alnum(c) && c != '.' && c != '_' && c != '-')
            return false;
    return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view input = fuzz::text(data, size);
    fuzz::check(relctl::isValidEnvironmentName(input) == specifiedName(input),
                "isValidEnvironmentName follows ^[a-z0-9][a-z0-9._-]{0,62}$");
    if (const auto n = relctl::parsePositiveInt(input)) {
        fuzz::check(*n > 0, "a positive integer is positive");
        // Leading zeros are accepted ("007" is 7); otherwise plain decimal.
        const std::string_view digits = input.substr(std::min(input.find_first_not_of('0'), input.size()));
        fuzz::check(std::to_string(*n) == digits, "a positive integer is plain decimal and prints back");
    }
    return 0;
}
