# The `consumer` test: install relctl's development component into a staging
# prefix, configure and build tests/consumer against it with the build's own
# compiler and flags, and run the result.
#   cmake -DRELCTL_BUILD_DIR=... -DCONSUMER_SOURCE_DIR=... -DWORK_DIR=...
#         -DGENERATOR=... -DCXX_COMPILER=... [-DBUILD_TYPE= -DCXX_FLAGS= -DEXE_LINKER_FLAGS=]
#         -P check.cmake
foreach(var IN ITEMS RELCTL_BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER)
    if(NOT DEFINED ${var})
        message(FATAL_ERROR "check.cmake: ${var} is not set")
    endif()
endforeach()

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

function(step)
    execute_process(COMMAND ${ARGV} RESULT_VARIABLE result)
    if(NOT result EQUAL 0)
        list(JOIN ARGV " " command)
        message(FATAL_ERROR "failed (${result}): ${command}")
    endif()
endfunction()

step("${CMAKE_COMMAND}" --install "${RELCTL_BUILD_DIR}" --prefix "${prefix}" --component relctl_Development)
# Only the staging prefix may satisfy find_package(relctl): no package
# registry, so a build tree registered elsewhere cannot stand in for it.
step("${CMAKE_COMMAND}" -S "${CONSUMER_SOURCE_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}"
     "-DCMAKE_PREFIX_PATH=${prefix}"
     -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
     "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
     "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}"
     "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
     "-DCMAKE_EXE_LINKER_FLAGS=${EXE_LINKER_FLAGS}")
step("${CMAKE_COMMAND}" --build "${WORK_DIR}/build")
step("${WORK_DIR}/build/relctl-consumer")
