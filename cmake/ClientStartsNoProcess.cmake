# The rule of core's split (core/CMakeLists.txt): the protocol client never
# starts a process. The build runs this script (target relctl_client_rule)
# whenever librelctl_client.a or librelctl_cluster.a changes, and fails when
# the client refers to
#   - a C library call that starts a program (fork, exec*, posix_spawn*,
#     system, popen), or
#   - anything of relctl's that the cluster library defines (spawn(), the
#     embedded cluster, the demo): such a call links only because a program
#     happens to link the cluster too, and would make every client start
#     processes.
# Symbols are compared mangled, as nm prints them (c++filt reads them).
#
#   cmake -DNM=nm -DCLIENT=librelctl_client.a -DCLUSTER=librelctl_cluster.a
#         -DSTAMP=file -P ClientStartsNoProcess.cmake
foreach(var IN ITEMS NM CLIENT CLUSTER STAMP)
    if(NOT ${var})
        message(FATAL_ERROR "ClientStartsNoProcess.cmake: -D${var}= is required")
    endif()
endforeach()

function(relctl_nm out)
    execute_process(COMMAND "${NM}" ${ARGN} OUTPUT_VARIABLE text RESULT_VARIABLE rc ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "${NM} ${ARGN} failed: ${err}")
    endif()
    set(${out} "${text}" PARENT_SCOPE)
endfunction()

# What the client's objects call and do not define themselves ("U name").
relctl_nm(text -u "${CLIENT}")
string(REGEX MATCHALL "[ \t]U [^\n]+" lines "${text}")
set(called "")
foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]U " "" name "${line}")
    list(APPEND called "${name}")
endforeach()
list(REMOVE_DUPLICATES called)

set(found "")
foreach(name IN LISTS called)
    if(name MATCHES "^(fork|vfork|clone|clone3|execl|execle|execlp|execv|execve|execvp|execvpe|fexecve|posix_spawn|posix_spawnp|system|popen)(@.*)?$")
        list(APPEND found "${name}")
    endif()
endforeach()

# What the cluster library defines of relctl's own (strong definitions: text,
# data; inline functions and templates, weak, are every library's own copy).
list(FILTER called INCLUDE REGEX "6relctl")
set(haystack "\n")
foreach(name IN LISTS called)
    string(APPEND haystack "${name}\n")
endforeach()
relctl_nm(text --defined-only "${CLUSTER}")
string(REGEX MATCHALL "[0-9a-fA-F]+ [TDBR] [^\n]*6relctl[^\n]*" lines "${text}")
foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[0-9a-fA-F]+ [TDBR] " "" name "${line}")
    string(FIND "${haystack}" "\n${name}\n" at)
    if(NOT at EQUAL -1)
        list(APPEND found "${name}")
    endif()
endforeach()

if(found)
    list(REMOVE_DUPLICATES found)
    list(JOIN found "\n  " shown)
    message(FATAL_ERROR "relctl_client must not start processes (core/CMakeLists.txt), but ${CLIENT} "
                        "refers to:\n  ${shown}\nMove the code that calls them to relctl_cluster.")
endif()
file(TOUCH "${STAMP}")
