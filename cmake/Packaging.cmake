# Debian 12 packages, made by CPack's DEB generator from the install components:
#
#   cmake --build --preset release --target package
#
# writes into build/release (Debian's names, package_version_architecture):
#   relctl_*.deb                    relctl_Runtime: the CLI, relctl(1), bash and
#                                   zsh completion
#   release-console_*.deb           relctl_Console: the console, its menu entry,
#                                   icons, AppStream metainfo, release-console(1)
#   librelctl-dev_*.deb             relctl_Development: the headers, the static
#                                   client and cluster libraries, the CMake
#                                   package, the schema's source
#   relctl-dbgsym_*.ddeb, release-console-dbgsym_*.ddeb
#                                   the two programs' debug information, split
#                                   off by CPack (the .deb's binaries are stripped)
# scripts/package-test.sh checks them with lintian and installs them into a
# clean Debian 12 root.
#
# CPack rather than a debian/ directory: the build already says what goes
# where (the install components, with the manual page and the completion
# scripts generated from relctl's grammar at build time), and CPack packages
# the binaries build/release already has, the ones the tests ran against.
# dpkg-buildpackage would configure and build the whole tree again in a
# directory of its own, tests and benchmarks included, and keep a second list
# of what is installed where (debian/*.install) to drift from the first.
#
# The package target depends on `all`, as CPack's always does: after
# scripts/test.sh built everything it only checks that nothing changed, and a
# package is never made from binaries older than the sources.
#
# What a debian/ build gets from debhelper is done in three scripts CPack
# runs: packaging/CPackProjectConfig.cmake (the version, read from the built
# relctl, and SOURCE_DATE_EPOCH), packaging/DebianFiles.cmake (copyright,
# changelog.gz, lintian overrides, compressed manual pages, file modes) and
# packaging/DebugPackages.cmake (what CMake 3.25's -dbgsym packages lack).

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME relctl)
# Replaced when packaging, from the built relctl (CPackProjectConfig.cmake).
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(RELCTL_PACKAGE_MAINTAINER "Seed fc0a0333 maintainers <maintainers@users.noreply.a-seed-fc0a0333.example>"
    CACHE STRING "The Maintainer of the Debian packages (and the changelog's signer)")
mark_as_advanced(RELCTL_PACKAGE_MAINTAINER)
set(CPACK_PACKAGE_CONTACT "${RELCTL_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${RELCTL_PACKAGE_MAINTAINER}")
# Each package's synopsis is its own (the first line of its description
# below): an empty summary keeps CPack from putting project()'s DESCRIPTION in
# front of every one of them.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "")

# One source, three packages (and two -dbgsym): each says it comes from relctl.
set(CPACK_DEBIAN_PACKAGE_SOURCE relctl)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL relctl_Runtime relctl_Console relctl_Development)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# gzip, not dpkg-deb's xz: relctl's 77 MB of debug information takes 4 s
# with gzip and 53 s with xz (33 s on both cores) for 27 MB against 16 MB, and
# CI packages at every run.
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)
# Depends from the libraries the ELF files load (dpkg-shlibdeps, with the
# versions Debian's symbols files give), not a list kept by hand.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Control files 0644 and directories 0755, whatever the umask: lintian's
# control-file-has-bad-permissions and non-standard-dir-perm otherwise.
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

# relctl: what a CI runner installs.
set(CPACK_DEBIAN_RELCTL_RUNTIME_PACKAGE_NAME relctl)
set(CPACK_DEBIAN_RELCTL_RUNTIME_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_RELCTL_RUNTIME_DEBUGINFO_PACKAGE ON)
# Recommends, not Depends: a runner that names its database (--dsn,
# RELCTL_DSN) needs neither. Without one, relctl starts the embedded default
# database, which needs the server binaries; psql is the administrator's tool
# for the set-up (docs/pipeline.md).
set(CPACK_DEBIAN_RELCTL_RUNTIME_PACKAGE_RECOMMENDS "postgresql, postgresql-client")
set(CPACK_DEBIAN_RELCTL_RUNTIME_DESCRIPTION
"release control for shared CI environments
relctl gives each shared environment (test, staging, prod) a bounded,
renewable lease held in PostgreSQL with a fencing token, and accepts a
publish only from the current holder and only for a newer generation, so
that an older pipeline finishing last cannot put its release back. Retries
are idempotent through operation ids, and every accepted or refused
operation is recorded in an append-only audit trail.

This package holds the relctl command that CI jobs call, with its manual
page and bash and zsh completion. Without a database named, relctl starts a
private PostgreSQL cluster of its own, from the PostgreSQL server package
it recommends.")

# release-console: what a release manager's desk installs.
set(CPACK_DEBIAN_RELCTL_CONSOLE_PACKAGE_NAME release-console)
set(CPACK_DEBIAN_RELCTL_CONSOLE_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_RELCTL_CONSOLE_DEBUGINFO_PACKAGE ON)
# Qt loads its SVG icon engine as a plugin, which dpkg-shlibdeps cannot see:
# without it every icon of the console is empty (resources/README.md).
set(CPACK_DEBIAN_RELCTL_CONSOLE_PACKAGE_DEPENDS "libqt6svg6")
# The console's default connection is the embedded database, as relctl's.
set(CPACK_DEBIAN_RELCTL_CONSOLE_PACKAGE_RECOMMENDS "postgresql")
set(CPACK_DEBIAN_RELCTL_CONSOLE_PACKAGE_SUGGESTS "relctl")
set(CPACK_DEBIAN_RELCTL_CONSOLE_DESCRIPTION
"desktop console for relctl's release control
The release console shows a relctl database to the people who watch and
decide releases: who holds each environment and who waits for it, the
timeline of leases, publishes and refusals, and the audit trail. Release
managers approve or deny promotions, freeze, unfreeze and roll back
environments, and trace why a write was refused. --demo opens a database of
its own holding a week of made-up history.")

# librelctl-dev: for programs of one's own on relctl::client.
set(CPACK_DEBIAN_RELCTL_DEVELOPMENT_PACKAGE_NAME librelctl-dev)
set(CPACK_DEBIAN_RELCTL_DEVELOPMENT_PACKAGE_SECTION libdevel)
# What the installed relctlConfig.cmake finds (cmake/relctlConfig.cmake.in):
# nlohmann_json for the public headers; libpqxx, libpq and libcrypto, which
# the static client's consumers link; pkg-config, through which it finds the
# first two. libpqxx within the series the client was built with (6.4 on
# Debian 12): its C++ ABI changes from one to the next, and a consumer links
# whatever libpqxx.so it finds. spdlog and fmt are compiled into the client:
# not needed.
if(NOT PQXX_VERSION MATCHES "^([0-9]+)\\.([0-9]+)")
    message(FATAL_ERROR "Packaging: no libpqxx version from pkg-config (PQXX_VERSION '${PQXX_VERSION}')")
endif()
set(relctl_pqxx_major "${CMAKE_MATCH_1}")
set(relctl_pqxx_minor "${CMAKE_MATCH_2}")
math(EXPR relctl_pqxx_next "${relctl_pqxx_minor} + 1")
set(CPACK_DEBIAN_RELCTL_DEVELOPMENT_PACKAGE_DEPENDS
    "libpqxx-dev (>= ${relctl_pqxx_major}.${relctl_pqxx_minor}), libpqxx-dev (<< ${relctl_pqxx_major}.${relctl_pqxx_next}), libpq-dev, libssl-dev (>= 3), nlohmann-json3-dev (>= 3.10), pkgconf")
set(CPACK_DEBIAN_RELCTL_DEVELOPMENT_DESCRIPTION
"client library of the relctl database (development files)
relctl::client is the C++20 client of the relctl database that the relctl
command and the release console are built on: leases, publishes, the queue,
promotions, the audit trail and its history checker. It starts no process.
relctl::cluster adds the embedded database that relctl starts when no
database is named. No Qt.

This package holds their static libraries and headers, the CMake package
(find_package(relctl) gives relctl::client, relctl::cluster, and
relctl::core, the two under their former name) and the schema's SQL source
in /usr/share/relctl/migrations.")

# The three scripts CPack runs, and what they need to know of this build.
set(CPACK_PROJECT_CONFIG_FILE "${PROJECT_SOURCE_DIR}/packaging/CPackProjectConfig.cmake")
set(CPACK_PRE_BUILD_SCRIPTS "${PROJECT_SOURCE_DIR}/packaging/DebianFiles.cmake")
set(CPACK_POST_BUILD_SCRIPTS "${PROJECT_SOURCE_DIR}/packaging/DebugPackages.cmake")
set(CPACK_RELCTL_SOURCE_DIR "${PROJECT_SOURCE_DIR}")
set(CPACK_RELCTL_TARGETS_FILE "${PROJECT_BINARY_DIR}/packaging/targets.cmake")
file(GENERATE OUTPUT "${CPACK_RELCTL_TARGETS_FILE}"
     CONTENT "set(CPACK_RELCTL_EXECUTABLE \"$<TARGET_FILE:relctl>\")\n")

include(CPack)
