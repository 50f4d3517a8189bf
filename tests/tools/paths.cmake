# File names that are not UTF-8, across the tools that write them into JSON reports (label `tools`,
# tests/tools/scripts/check_non_utf8_paths.sh).
if(TARGET vtp-worldgen AND TARGET vtp-profile AND TARGET vtp-sim)
  add_test(NAME vtp_tools_non_utf8_paths
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/scripts/check_non_utf8_paths.sh $<TARGET_FILE:vtp-worldgen>
                   $<TARGET_FILE:vtp-profile> $<TARGET_FILE:vtp-sim>)
  set_tests_properties(vtp_tools_non_utf8_paths PROPERTIES LABELS tools TIMEOUT 300)
endif()
