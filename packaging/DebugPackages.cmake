# CPack runs this (CPACK_POST_BUILD_SCRIPTS, set in cmake/Packaging.cmake) on
# the packages it made, before it copies them into the build directory.
# CMake 3.25's -dbgsym packages (CPACK_DEBIAN_DEBUGINFO_PACKAGE) need three
# repairs, or lintian fails them and dpkg records what is not there:
# - their md5sums name each file by its absolute path in CPack's staging
#   directory (lintian's md5sums-lists-nonexistent-file, an error; debsums
#   would check nothing): written again with the paths dpkg installs;
# - they carry no copyright and no changelog (no-copyright-file,
#   no-changelog): usr/share/doc/PACKAGE-dbgsym becomes a symlink to
#   PACKAGE's, as debhelper makes it, valid because a -dbgsym package depends
#   on its PACKAGE of the same version;
# - the .debug files are executable: 0644, as dh_strip leaves them.
# Each is packed again by dpkg-deb, gzip as CPack's, every file dated
# SOURCE_DATE_EPOCH as CPack dates them.
set(epoch "$ENV{SOURCE_DATE_EPOCH}")
foreach(ddeb IN LISTS CPACK_PACKAGE_FILES)
    if(NOT ddeb MATCHES "/([^/_]+)-dbgsym_[^/]*\\.ddeb$")
        continue()
    endif()
    set(package "${CMAKE_MATCH_1}")
    set(dir "${ddeb}.unpacked")
    file(REMOVE_RECURSE "${dir}")
    execute_process(COMMAND dpkg-deb --raw-extract "${ddeb}" "${dir}" COMMAND_ERROR_IS_FATAL ANY)

    file(MAKE_DIRECTORY "${dir}/usr/share/doc")
    file(CREATE_LINK "${package}" "${dir}/usr/share/doc/${package}-dbgsym" SYMBOLIC)
    file(GLOB_RECURSE files LIST_DIRECTORIES false RELATIVE "${dir}" "${dir}/usr/lib/debug/*")
    set(md5sums "")
    foreach(f IN LISTS files)
        file(CHMOD "${dir}/${f}" FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
        file(MD5 "${dir}/${f}" sum)
        string(APPEND md5sums "${sum}  ${f}\n")
    endforeach()
    file(WRITE "${dir}/DEBIAN/md5sums" "${md5sums}")
    file(CHMOD "${dir}/DEBIAN/md5sums" FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
    if(epoch)
        execute_process(COMMAND find "${dir}" -exec touch -h -d "@${epoch}" {} +
                        COMMAND_ERROR_IS_FATAL ANY)
    endif()

    file(REMOVE "${ddeb}")
    execute_process(COMMAND dpkg-deb --root-owner-group -Zgzip --build "${dir}" "${ddeb}"
                    OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
    file(REMOVE_RECURSE "${dir}")
endforeach()
