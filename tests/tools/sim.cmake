# vtp-sim (tools/sim), label `tools`: a short run of both modes on the shipped default world, twice: every report key
# of issue 6, no NaN body, a crater dug, the same hash from both runs (tests/tools/scripts/check_sim.cmake).
if(TARGET vtp-sim)
  add_test(NAME vtp_sim_short_run
           COMMAND ${CMAKE_COMMAND} -DSIM=$<TARGET_FILE:vtp-sim> -DWORLD=${PROJECT_SOURCE_DIR}/data/worlds/default.vtw
                   -DOUT=${CMAKE_CURRENT_BINARY_DIR}/sim_out -DCOLLISION=both
                   -P ${CMAKE_CURRENT_LIST_DIR}/scripts/check_sim.cmake)
  set_tests_properties(vtp_sim_short_run PROPERTIES LABELS tools TIMEOUT 300)
endif()
