#pragma once

#include <string_view>

namespace relctl {

// The release, as project() in CMakeLists.txt declares it (e.g. "0.1.0").
std::string_view version();
// The source it was built from: `git describe --always --dirty --tags` at
// build time, or "unknown" when built outside a git checkout.
std::string_view revision();

} // namespace relctl
