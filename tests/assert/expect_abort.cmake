# cmake -DPROGRAM=<exe> -DMODE=<mode> -DEXPECT=<regex> -P expect_abort.cmake: passes only when PROGRAM MODE fails (a
# nonzero exit or a signal, here abort()) and its stderr matches EXPECT. ctest's PASS_REGULAR_EXPRESSION alone would
# pass a program that printed the message and exited 0; WILL_FAIL does not combine with it.
execute_process(COMMAND "${PROGRAM}" "${MODE}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "exit: ${rc}\nstdout: ${out}\nstderr: ${err}")
if(rc STREQUAL "0")
  message(FATAL_ERROR "${PROGRAM} ${MODE} exited 0: the assertion did not fire")
endif()
if(NOT err MATCHES "${EXPECT}")
  message(FATAL_ERROR "${PROGRAM} ${MODE} failed (${rc}) without the message /${EXPECT}/ on stderr")
endif()
