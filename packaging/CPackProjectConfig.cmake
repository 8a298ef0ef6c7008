# CPack reads this (CPACK_PROJECT_CONFIG_FILE, set in cmake/Packaging.cmake)
# when it starts, before it installs anything. It sets what configuring could
# not know:
# - the packages' version, read from the relctl the build made
#   (PackageVersion.cmake says how), so a build after a commit packages as
#   the new version without configuring again;
# - SOURCE_DATE_EPOCH, the time CPack gives every file in the packages and
#   DebianFiles.cmake the changelog's date: the commit's time, so that
#   packaging one commit twice gives the same files with the same dates. One
#   already set in the environment wins, as the convention has it.
include("${CPACK_RELCTL_TARGETS_FILE}")
include("${CPACK_RELCTL_SOURCE_DIR}/packaging/PackageVersion.cmake")
relctl_package_version("${CPACK_RELCTL_EXECUTABLE}" "${CPACK_RELCTL_SOURCE_DIR}" relctl_package)
set(CPACK_PACKAGE_VERSION "${relctl_package_VERSION}")
set(CPACK_RELCTL_REVISION "${relctl_package_REVISION}")
if(NOT DEFINED ENV{SOURCE_DATE_EPOCH})
    set(ENV{SOURCE_DATE_EPOCH} "${relctl_package_EPOCH}")
endif()
message(STATUS "relctl packages: version ${CPACK_PACKAGE_VERSION} (revision ${CPACK_RELCTL_REVISION})")
