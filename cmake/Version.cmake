# Script mode (cmake -P), run at every build: writes OUTPUT, the definition of
# relctl::version() and relctl::revision(), from the project's VERSION and the
# git description of the source tree (git describe --always --dirty), or
# "unknown" outside a git checkout (a source tarball). configure_file leaves
# OUTPUT untouched when nothing changed, so a build after a commit recompiles
# one file, and a build without one nothing.
find_package(Git QUIET)
set(RELCTL_REVISION "unknown")
if(GIT_FOUND AND EXISTS "${SOURCE_DIR}/.git")
    execute_process(
        COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" describe --always --dirty --tags
        OUTPUT_VARIABLE described
        OUTPUT_STRIP_TRAILING_WHITESPACE
        RESULT_VARIABLE failed
        ERROR_QUIET)
    if(NOT failed AND described)
        set(RELCTL_REVISION "${described}")
    endif()
endif()
configure_file("${INPUT}" "${OUTPUT}" @ONLY)
