# CPack runs this (CPACK_PRE_BUILD_SCRIPTS, set in cmake/Packaging.cmake) once
# every component is installed into its staging directory
# (CPACK_TEMPORARY_INSTALL_DIRECTORY/<component>/usr) and before it makes the
# packages. It does what debhelper's dh_installdocs, dh_installchangelogs,
# dh_lintian, dh_compress and dh_fixperms do in a debian/ build, for files that
# are Debian's alone and so are no install rules (`cmake --install` to
# /usr/local gets none of them):
#   usr/share/doc/PACKAGE/copyright      packaging/copyright (DEP-5)
#   usr/share/doc/PACKAGE/changelog.gz   packaging/changelog.in, for this version
#   usr/share/lintian/overrides/PACKAGE  packaging/lintian/PACKAGE, where there is one
#   usr/share/man/*/*.N                  gzip -9n (Policy 12.1): no name or
#                                        time in the header, same bytes each time
#   modes                                directories and executables 0755, other
#                                        files 0644, whatever the umask was
# The packages are native (PackageVersion.cmake): so the changelog is
# changelog.gz, where a Debian revision would make it changelog.Debian.gz.
set(source "${CPACK_RELCTL_SOURCE_DIR}")
find_program(RELCTL_GZIP gzip REQUIRED)

# The changelog's date in RFC 5322 form, from SOURCE_DATE_EPOCH (which
# string(TIMESTAMP) reads; CPackProjectConfig.cmake set it). Day and month
# names spelled here: %a and %b would follow the locale.
string(TIMESTAMP weekday "%w" UTC)
string(TIMESTAMP month "%m" UTC)
set(weekdays Sun Mon Tue Wed Thu Fri Sat)
list(GET weekdays ${weekday} weekday)
math(EXPR month "${month} - 1")
set(months Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec)
list(GET months ${month} month)
string(TIMESTAMP RELCTL_PACKAGE_DATE "${weekday}, %d ${month} %Y %H:%M:%S +0000" UTC)
set(RELCTL_PACKAGE_VERSION "${CPACK_PACKAGE_VERSION}")
set(RELCTL_PACKAGE_REVISION "${CPACK_RELCTL_REVISION}")
set(RELCTL_PACKAGE_MAINTAINER "${CPACK_DEBIAN_PACKAGE_MAINTAINER}")
set(work "${CPACK_TOPLEVEL_DIRECTORY}/relctl-debian-files")
file(REMOVE_RECURSE "${work}")
configure_file("${source}/packaging/changelog.in" "${work}/changelog" @ONLY)
execute_process(COMMAND "${RELCTL_GZIP}" -9n "${work}/changelog" COMMAND_ERROR_IS_FATAL ANY)

foreach(component IN LISTS CPACK_COMPONENTS_ALL)
    string(TOUPPER "${component}" upper)
    set(package "${CPACK_DEBIAN_${upper}_PACKAGE_NAME}")
    set(root "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/${component}")
    set(prefix "${root}${CPACK_PACKAGING_INSTALL_PREFIX}")
    if(NOT package OR NOT IS_DIRECTORY "${root}")
        message(FATAL_ERROR "DebianFiles: component ${component} has no package name or no staging "
                            "directory (${root})")
    endif()

    # file(COPY), not file(INSTALL): CPack leaves DESTDIR set to the last
    # component's staging directory, which file(INSTALL) would put in front.
    file(COPY "${source}/packaging/copyright" "${work}/changelog.gz" DESTINATION "${prefix}/share/doc/${package}")
    if(EXISTS "${source}/packaging/lintian/${package}")
        file(COPY "${source}/packaging/lintian/${package}" DESTINATION "${prefix}/share/lintian/overrides")
    endif()

    file(GLOB pages "${prefix}/share/man/man[1-9]/*.[1-9]")
    foreach(page IN LISTS pages)
        execute_process(COMMAND "${RELCTL_GZIP}" -9nf "${page}" COMMAND_ERROR_IS_FATAL ANY)
    endforeach()

    # Static libraries without their debug information, stripped with
    # dh_strip's options for them, as Debian's -dev packages ship them:
    # librelctl_client.a and librelctl_cluster.a are 150 MB with it, 9 MB without.
    file(GLOB_RECURSE archives "${root}/*.a")
    foreach(archive IN LISTS archives)
        execute_process(COMMAND strip --strip-debug --remove-section=.comment --remove-section=.note
                                --enable-deterministic-archives "${archive}"
                        COMMAND_ERROR_IS_FATAL ANY)
    endforeach()

    # X: execute only where someone may already (directories, programs).
    execute_process(COMMAND chmod -R u=rwX,go=rX "${root}" COMMAND_ERROR_IS_FATAL ANY)
endforeach()
