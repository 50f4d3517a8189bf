# vtp-sim (tools/sim), label `tools`: a short run of both modes on the shipped default world, twice: every report key
# of issue 6, no NaN body, a crater dug, the same hash from both runs (tests/tools/scripts/check_sim.cmake).
if(TARGET vtp-sim)
  # Until the BulletTerrain adapter's implementation is in the tree, vtp-sim has only the bullet-bvh mode.
  if(EXISTS ${PROJECT_SOURCE_DIR}/physics/src/bullet_terrain.cpp)
    set(sim_collision both)
  else()
    set(sim_collision bullet-bvh)
  endif()
  add_test(NAME vtp_sim_short_run
           COMMAND ${CMAKE_COMMAND} -DSIM=$<TARGET_FILE:vtp-sim> -DWORLD=${PROJECT_SOURCE_DIR}/data/worlds/default.vtw
                   -DOUT=${CMAKE_CURRENT_BINARY_DIR}/sim_out -DCOLLISION=${sim_collision}
                   -P ${CMAKE_CURRENT_LIST_DIR}/scripts/check_sim.cmake)
  set_tests_properties(vtp_sim_short_run PROPERTIES LABELS tools TIMEOUT 300)
endif()
