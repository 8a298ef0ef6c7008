# libpqxx 6.4 as one target, relctl::pqxx, for everything that speaks SQL
# through it (core's libraries, the test support, the security and hardening
# tests, the audit benchmark). Debian's libpqxx 6.4 config header omits
# PQXX_HAVE_OPTIONAL; without it std::optional parameters and field::get<T>()
# do not compile, so the definition travels with the library, not with each
# user. relctl::client links it PRIVATE (no pqxx type in a public header); it
# is exported with the client because a static client's consumers link
# libpqxx too.
find_package(PkgConfig REQUIRED)
pkg_check_modules(PQXX REQUIRED IMPORTED_TARGET libpqxx)

add_library(relctl_pqxx INTERFACE)
add_library(relctl::pqxx ALIAS relctl_pqxx)
set_target_properties(relctl_pqxx PROPERTIES EXPORT_NAME pqxx)
# A target whose RELCTL_STATIC_CXX_RUNTIME property is on (the relctl
# executable, app/CMakeLists.txt) links libpqxx's archive instead of
# libpqxx.so, so that it loads no C++ library at start-up. The property is
# read on the target being linked, through the client.
find_library(RELCTL_PQXX_ARCHIVE NAMES libpqxx.a)
mark_as_advanced(RELCTL_PQXX_ARCHIVE)
if(RELCTL_PQXX_ARCHIVE)
    target_link_libraries(relctl_pqxx INTERFACE
        "$<BUILD_INTERFACE:$<IF:$<BOOL:$<TARGET_PROPERTY:RELCTL_STATIC_CXX_RUNTIME>>,${RELCTL_PQXX_ARCHIVE},PkgConfig::PQXX>>"
        "$<INSTALL_INTERFACE:PkgConfig::PQXX>")
else()
    target_link_libraries(relctl_pqxx INTERFACE PkgConfig::PQXX)
endif()
target_compile_definitions(relctl_pqxx INTERFACE PQXX_HAVE_OPTIONAL)
