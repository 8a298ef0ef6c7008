# Installs core's client and cluster libraries as a CMake package, so other
# programs can build on the same client of the relctl database:
#
#   find_package(relctl 0.1 REQUIRED)
#   target_link_libraries(my_tool PRIVATE relctl::client)
#
# relctl::client talks to a relctl database and starts no process;
# relctl::cluster adds relctl/process.h and the embedded database (and the
# demo's), for a tool that wants the same default database as relctl.
# relctl::core, the name before core was split, is kept as an INTERFACE target
# linking both (core/CMakeLists.txt). The rehearsal engine is not installed:
# its actors are the relctl executable beside the running one
# (rehearsal::defaultRelctl()), so it belongs with relctl, and `relctl
# rehearse` is how other programs use it.
#
# Component relctl_Development: the static libraries, include/relctl/*.h (the
# two libraries' FILE_SETs), the package files, and the schema's source
# (share/relctl/migrations, numbered *.sql and functions/*.sql; the client
# carries its own compiled-in copy, these are for reading and for other
# tools). relctl installs as component relctl_Runtime, release-console as
# relctl_Console (app/CMakeLists.txt); each component is a Debian package of
# its own (cmake/Packaging.cmake).
#
# Core's libraries stay static: relctl and release-console are single binaries
# that need no library path. A static library's PRIVATE dependencies (libpqxx,
# libpq) are still needed when a consumer links it, so relctlConfig.cmake
# finds them again (find_dependency and pkg-config) before it loads the targets.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(RELCTL_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/relctl"
    CACHE STRING "Where relctlConfig.cmake is installed, relative to the prefix")
set(RELCTL_INSTALL_MIGRATIONSDIR "${CMAKE_INSTALL_DATADIR}/relctl/migrations")
mark_as_advanced(RELCTL_INSTALL_CMAKEDIR)

install(TARGETS relctl_client relctl_cluster relctl_core relctl_pqxx
    EXPORT relctlTargets
    ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT relctl_Development
    FILE_SET HEADERS DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}" COMPONENT relctl_Development)

install(DIRECTORY "${PROJECT_SOURCE_DIR}/migrations/"
    DESTINATION "${RELCTL_INSTALL_MIGRATIONSDIR}"
    COMPONENT relctl_Development
    FILES_MATCHING PATTERN "*.sql")

install(EXPORT relctlTargets
    NAMESPACE relctl::
    DESTINATION "${RELCTL_INSTALL_CMAKEDIR}"
    COMPONENT relctl_Development)

configure_package_config_file(
    "${PROJECT_SOURCE_DIR}/cmake/relctlConfig.cmake.in"
    "${PROJECT_BINARY_DIR}/relctlConfig.cmake"
    INSTALL_DESTINATION "${RELCTL_INSTALL_CMAKEDIR}"
    PATH_VARS RELCTL_INSTALL_MIGRATIONSDIR)
# Before 1.0 a minor version may break the API.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/relctlConfigVersion.cmake"
    COMPATIBILITY SameMinorVersion)
install(FILES
    "${PROJECT_BINARY_DIR}/relctlConfig.cmake"
    "${PROJECT_BINARY_DIR}/relctlConfigVersion.cmake"
    DESTINATION "${RELCTL_INSTALL_CMAKEDIR}"
    COMPONENT relctl_Development)
