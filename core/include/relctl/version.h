#pragma once

#include <string>
#include <string_view>

namespace relctl {

// The release, as project() in CMakeLists.txt declares it (e.g. "0.1.0").
std::string_view version();
// The source it was built from: `git describe --always --dirty --tags` at
// build time, or "unknown" when built outside a git checkout.
std::string_view revision();
// Both as --version shows them after the program's name: "0.1.0 (abc1234)".
inline std::string describedVersion()
{
    return std::string(version()) + " (" + std::string(revision()) + ")";
}

} // namespace relctl
