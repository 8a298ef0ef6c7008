# One INTERFACE target carries what every target of the project shares: the
# language standard and the warnings. Sanitizers and -Werror live in presets.
add_library(relctl_options INTERFACE)
add_library(relctl::options ALIAS relctl_options)
target_compile_features(relctl_options INTERFACE cxx_std_20)
set(CMAKE_CXX_EXTENSIONS OFF)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(relctl_options INTERFACE -Wall -Wextra -Wpedantic)
endif()
# Qt safety defaults for the targets that use Qt (harmless elsewhere).
target_compile_definitions(relctl_options INTERFACE
    QT_NO_CAST_FROM_ASCII QT_NO_CONTEXTLESS_CONNECT QT_NO_NARROWING_CONVERSIONS_IN_CONNECT)
