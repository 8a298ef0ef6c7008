# One INTERFACE target carries what every target of the project shares: the
# language standard and the warnings. Sanitizers and -Werror live in presets.
add_library(relctl_options INTERFACE)
add_library(relctl::options ALIAS relctl_options)
target_compile_features(relctl_options INTERFACE cxx_std_20)
set(CMAKE_CXX_EXTENSIONS OFF)
# The warnings of cmake_template's set: each one has caught a real defect
# class (a shadowed name, a silent sign change, a slicing base). System
# headers (Qt, libpqxx, CLI11) are included as SYSTEM and do not count.
# -Wnull-dereference is left out: at -O2 GCC 12 reports libstdc++'s own
# inlined stream buffers (reading a manifest with istreambuf_iterator).
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(relctl_options INTERFACE
        -Wall -Wextra -Wpedantic
        -Wshadow -Wconversion -Wsign-conversion -Wold-style-cast -Wcast-align -Wunused
        -Wnon-virtual-dtor -Woverloaded-virtual -Wdouble-promotion
        -Wformat=2 -Wimplicit-fallthrough)
endif()
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(relctl_options INTERFACE
        -Wmisleading-indentation -Wduplicated-cond -Wduplicated-branches -Wlogical-op)
endif()
# Qt safety defaults for the targets that use Qt (harmless elsewhere).
target_compile_definitions(relctl_options INTERFACE
    QT_NO_CAST_FROM_ASCII QT_NO_CONTEXTLESS_CONNECT QT_NO_NARROWING_CONVERSIONS_IN_CONNECT)

# Under the clang-tidy preset, files generated into the build tree (moc, rcc,
# the schema bundle) are Qt's and CMake's code, not ours: the .clang-tidy
# nearest to them, written here, turns every check off but one that cannot
# fire there (clang-tidy refuses to run with none).
if(CMAKE_CXX_CLANG_TIDY)
    file(WRITE "${CMAKE_BINARY_DIR}/.clang-tidy"
         "Checks: '-*,misc-misplaced-const'\nHeaderFilterRegex: '^$'\nWarningsAsErrors: ''\n")
endif()
