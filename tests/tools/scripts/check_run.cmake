# Runs a tool and checks what it did; used by the tool ctest tests (tests/tools/worldgen.cmake, world.cmake) as
#   cmake -DTOOL=<exe> -DRUN1=<args> [-DRUN2=<args>] [-DEXPECT_EXIT=<n>] [-DEXPECT_STDERR=<regex>]
#         [-DEXPECT_STDOUT=<regex>] [-DSAME=<fileA>|<fileB>] [-DCLEAN=<file>|...] -P check_run.cmake
# Argument lists are separated by '|' (a ';' would be split by add_test). RUN2, if given, runs after RUN1 with the
# same expectations. SAME compares two files byte for byte afterwards. CLEAN files are removed first, so a stale
# output from an earlier run can never pass for a fresh one.
if(NOT DEFINED EXPECT_EXIT)
  set(EXPECT_EXIT 0)
endif()
if(DEFINED CLEAN)
  string(REPLACE "|" ";" clean_files "${CLEAN}")
  file(REMOVE ${clean_files})
endif()

foreach(run RUN1 RUN2)
  if(NOT DEFINED ${run})
    continue()
  endif()
  string(REPLACE "|" ";" args "${${run}}")
  execute_process(COMMAND ${TOOL} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc STREQUAL "${EXPECT_EXIT}")
    message(FATAL_ERROR "${run}: exit ${rc}, expected ${EXPECT_EXIT}\nstdout: ${out}\nstderr: ${err}")
  endif()
  if(DEFINED EXPECT_STDERR AND NOT err MATCHES "${EXPECT_STDERR}")
    message(FATAL_ERROR "${run}: stderr does not match '${EXPECT_STDERR}':\n${err}")
  endif()
  if(DEFINED EXPECT_STDOUT AND NOT out MATCHES "${EXPECT_STDOUT}")
    message(FATAL_ERROR "${run}: stdout does not match '${EXPECT_STDOUT}':\n${out}")
  endif()
endforeach()

if(DEFINED SAME)
  string(REPLACE "|" ";" pair "${SAME}")
  list(GET pair 0 file_a)
  list(GET pair 1 file_b)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${file_a} ${file_b} RESULT_VARIABLE differ)
  if(NOT differ EQUAL 0)
    message(FATAL_ERROR "${file_a} and ${file_b} differ")
  endif()
endif()
