# cmake -DBUILD_DIR=... -DTARGET=... -DEXPECT=<regex> -P expect_compile_error.cmake
# Builds TARGET; passes only when the build FAILS and its output matches EXPECT (so a
# failure for another reason, a missing include say, does not pass).
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET} RESULT_VARIABLE result
                OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(result EQUAL 0)
  message(FATAL_ERROR "${TARGET} compiled, but it mutates the IR without the Rewriter: the MutationKey rule is broken")
endif()
if(NOT output MATCHES "${EXPECT}")
  message(FATAL_ERROR "${TARGET} failed to compile, but not with an error matching '${EXPECT}':\n${output}")
endif()
message(STATUS "${TARGET}: refused as expected")
