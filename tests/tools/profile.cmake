# vtp-profile (tools/profile), label `tools`: the report of a small flat world made by vtp-worldgen carries the masks
# section with every key of issue 4, no broadphase violation and an index equal to a rebuild
# (tests/tools/scripts/check_profile_masks.cmake).
if(TARGET vtp-profile AND TARGET vtp-worldgen)
  add_test(NAME vtp_profile_masks_section
           COMMAND ${CMAKE_COMMAND} -DWORLDGEN=$<TARGET_FILE:vtp-worldgen> -DPROFILE=$<TARGET_FILE:vtp-profile>
                   -DOUT=${CMAKE_CURRENT_BINARY_DIR}/profile_out
                   -P ${CMAKE_CURRENT_LIST_DIR}/scripts/check_profile_masks.cmake)
  set_tests_properties(vtp_profile_masks_section PROPERTIES LABELS tools TIMEOUT 600)
endif()
