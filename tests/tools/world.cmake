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
