# vtp-sim (tools/sim), label `tools`: a short run of both modes on the shipped default world, twice: every report key
# (tools/sim/sim_report.cpp), no NaN body, a crater dug, the same hash from both runs (one thread, then two) (tests/tools/scripts/check_sim.cmake).
if(TARGET vtp-sim)
  add_test(NAME vtp_sim_short_run
           COMMAND ${CMAKE_COMMAND} -DSIM=$<TARGET_FILE:vtp-sim> -DWORLD=${PROJECT_SOURCE_DIR}/data/worlds/default.vtw
                   -DOUT=${CMAKE_CURRENT_BINARY_DIR}/sim_out -DCOLLISION=both
                   -P ${CMAKE_CURRENT_LIST_DIR}/scripts/check_sim.cmake)
  set_tests_properties(vtp_sim_short_run PROPERTIES LABELS tools TIMEOUT 300)
endif()
# Numbers CLI11's checks let by: a NaN duration and seeds beyond 2^64 - 1 are usage errors (exit 2), before any work.
if(TARGET vtp-sim)
  add_test(NAME vtp_sim_rejects_bad_numbers
           COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:vtp-sim> "-DRUN1=--seconds|nan|--bodies|1"
                   "-DRUN2=--seed|18446744073709551616|--bodies|1" -DEXPECT_EXIT=2 "-DEXPECT_STDERR=^vtp-sim: [^\n]+\n$"
                   -P ${CMAKE_CURRENT_LIST_DIR}/scripts/check_run.cmake)
  set_tests_properties(vtp_sim_rejects_bad_numbers PROPERTIES LABELS tools TIMEOUT 60)
endif()
