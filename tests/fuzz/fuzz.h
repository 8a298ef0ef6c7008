#pragma once

// One fuzz target: libFuzzer calls it with every input it makes up (the fuzz
// preset, scripts/fuzz.sh); in the normal build replay.cpp calls it with every
// file of its corpus (tests/fuzz/corpus/NAME), so the seeds and every crash
// found and added there are regression tests of the suite. A target aborts
// (check) when a property fails, not only when the code crashes.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace fuzz {

inline std::string_view text(const std::uint8_t* data, std::size_t size)
{
    return {reinterpret_cast<const char*>(data), size};
}

inline void check(bool holds, const char* what)
{
    if (!holds) {
        std::fprintf(stderr, "property broken: %s\n", what);
        std::abort();
    }
}

} // namespace fuzz
