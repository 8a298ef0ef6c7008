# relctl_package_version(RELCTL_EXECUTABLE SOURCE_DIR <out-prefix>)
#
# The Debian version of the packages, read from the built relctl itself
# (`relctl --version`: "relctl 0.1.0 (321510e)", the version project()
# declares and `git describe --always --dirty --tags` at build time, see
# cmake/Version.cmake), so that a package never says another version than the
# binaries it carries, even when the tree moved on after the build. Sets
#   <out-prefix>_VERSION   the Debian version
#   <out-prefix>_REVISION  the revision relctl reports ("321510e", "unknown")
#   <out-prefix>_EPOCH     the revision's commit time (seconds since 1970), the
#                          changelog's date and the packages' SOURCE_DATE_EPOCH
#
# The version is native (no Debian revision, no "-1"): the project ships its
# own packaging, so there is no upstream tarball a Debian revision would count
# builds of. From the git description:
#   0.1.0                 the commit tagged v0.1.0 (or 0.1.0): the release
#   0.1.0+5.gabc1234      5 commits after the tag of the version project() says
#   0.1.0~389.gabc1234    no tag of that version yet: the 389th commit on the way
#                         to 0.1.0; '~' sorts before the release itself
#   ....dirty             built from a tree with uncommitted changes
# The commit count before the hash keeps successive builds in order for apt
# (a hash alone does not sort); a date would tie for commits of one day.
# Outside a git checkout the revision is "unknown" and the version is
# project()'s.
function(relctl_package_version executable source_dir out)
    execute_process(COMMAND "${executable}" --version
        OUTPUT_VARIABLE line OUTPUT_STRIP_TRAILING_WHITESPACE
        RESULT_VARIABLE failed)
    if(failed OR NOT line MATCHES "^relctl ([0-9][0-9A-Za-z.]*) \\(([^)]*)\\)$")
        message(FATAL_ERROR "relctl_package_version: '${executable} --version' printed '${line}' "
                            "(exit ${failed}), not 'relctl VERSION (REVISION)'")
    endif()
    set(upstream "${CMAKE_MATCH_1}")
    set(revision "${CMAKE_MATCH_2}")
    set(described "${revision}")
    set(suffix "")
    if(described MATCHES "^(.*)-dirty$")
        set(described "${CMAKE_MATCH_1}")
        set(suffix ".dirty")
    endif()

    find_package(Git QUIET)
    set(version "${upstream}")
    set(epoch "")
    if(NOT revision STREQUAL "unknown" AND GIT_FOUND)
        # git reads its own descriptions ("v0.0.9-12-gabc1234") as revisions.
        execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${source_dir}" rev-parse --verify --short
                                "${described}^{commit}"
            OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
            RESULT_VARIABLE failed ERROR_QUIET)
        if(failed)
            message(FATAL_ERROR "relctl_package_version: the built revision ${revision} "
                                "is not a commit of ${source_dir}")
        endif()
        string(REPLACE "." "\\." upstream_re "${upstream}")
        if(described MATCHES "^v?${upstream_re}$")
            # The release itself.
        elseif(described MATCHES "^v?${upstream_re}-([0-9]+)-g[0-9a-f]+$")
            set(version "${upstream}+${CMAKE_MATCH_1}.g${commit}")
        else()
            # No tag of this version yet (a bare hash, or an older tag's
            # description): counted from the first commit.
            execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${source_dir}" rev-list --count "${commit}"
                OUTPUT_VARIABLE count OUTPUT_STRIP_TRAILING_WHITESPACE)
            set(version "${upstream}~${count}.g${commit}")
        endif()
        set(version "${version}${suffix}")
        execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${source_dir}" log -1 --format=%ct "${commit}"
            OUTPUT_VARIABLE epoch OUTPUT_STRIP_TRAILING_WHITESPACE)
    endif()
    if(NOT epoch MATCHES "^[0-9]+$")
        if(DEFINED ENV{SOURCE_DATE_EPOCH})
            set(epoch "$ENV{SOURCE_DATE_EPOCH}")
        else()
            string(TIMESTAMP epoch "%s" UTC)
        endif()
    endif()
    set(${out}_VERSION "${version}" PARENT_SCOPE)
    set(${out}_REVISION "${revision}" PARENT_SCOPE)
    set(${out}_EPOCH "${epoch}" PARENT_SCOPE)
endfunction()
