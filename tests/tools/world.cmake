# vtp-world run on real files: tests/tools/world_tool_test.sh, one ctest per scenario (label `tools`). Worlds are made
# by the tool itself from the committed empty default world, tests/data/world/empty.vtw (see the README there).
if(TARGET vtp-world)
  foreach(scenario help usage check_good check_corrupt salvage copy_identical edit edit_rejects
                   readme_example)
    add_test(NAME vtp_world_${scenario}
             COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/world_tool_test.sh ${scenario} $<TARGET_FILE:vtp-world>
                     ${PROJECT_SOURCE_DIR}/tests/data/world ${PROJECT_SOURCE_DIR}/README.md)
    set_tests_properties(vtp_world_${scenario} PROPERTIES LABELS tools TIMEOUT 300)
  endforeach()
endif()

# Acceptance: `vtp-world copy` of the shipped default world is byte-identical to it (load + save is deterministic).
if(TARGET vtp-world)
  set(world_copy_out ${CMAKE_CURRENT_BINARY_DIR}/world_copy_default.vtw)
  add_test(NAME vtp_world_copy_default_identical
           COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:vtp-world>
                   "-DRUN1=copy|${PROJECT_SOURCE_DIR}/data/worlds/default.vtw|${world_copy_out}"
                   "-DCLEAN=${world_copy_out}" "-DSAME=${world_copy_out}|${PROJECT_SOURCE_DIR}/data/worlds/default.vtw"
                   -P ${CMAKE_CURRENT_LIST_DIR}/scripts/check_run.cmake)
  set_tests_properties(vtp_world_copy_default_identical PROPERTIES LABELS tools TIMEOUT 120)
endif()
