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
# The collider sections, the CSV and the HTML report on part of the shipped default world
# (tests/tools/scripts/check_profile_colliders.cmake); then the HTML rendered in headless chromium (label `html`,
# skipped when chromium is absent; .ci/run installs it).
if(TARGET vtp-profile)
  add_test(NAME vtp_profile_collider_sections
           COMMAND ${CMAKE_COMMAND} -DPROFILE=$<TARGET_FILE:vtp-profile> -DWORLD=${PROJECT_SOURCE_DIR}/data/worlds/default.vtw
                   -DOUT=${CMAKE_CURRENT_BINARY_DIR}/profile_out
                   -P ${CMAKE_CURRENT_LIST_DIR}/scripts/check_profile_colliders.cmake)
  set_tests_properties(vtp_profile_collider_sections PROPERTIES LABELS tools TIMEOUT 900
                       FIXTURES_SETUP profile_html)
  add_test(NAME vtp_profile_html_renders
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/scripts/check_profile_html.sh
                   ${CMAKE_CURRENT_BINARY_DIR}/profile_out/profile_colliders.html)
  set_tests_properties(vtp_profile_html_renders PROPERTIES LABELS html TIMEOUT 120 SKIP_RETURN_CODE 77
                       FIXTURES_REQUIRED profile_html)
endif()
# The water section on the shipped default world (a lake) and on a world without water
# (tests/tools/scripts/check_profile_water.cmake).
if(TARGET vtp-profile AND TARGET vtp-worldgen)
  add_test(NAME vtp_profile_water_section
           COMMAND ${CMAKE_COMMAND} -DPROFILE=$<TARGET_FILE:vtp-profile> -DWORLD=${PROJECT_SOURCE_DIR}/data/worlds/default.vtw
                   -DOUT=${CMAKE_CURRENT_BINARY_DIR}/profile_out -DWET=ON
                   -P ${CMAKE_CURRENT_LIST_DIR}/scripts/check_profile_water.cmake)
  set_tests_properties(vtp_profile_water_section PROPERTIES LABELS tools TIMEOUT 300)
  add_test(NAME vtp_profile_water_section_dry
           COMMAND ${CMAKE_COMMAND} -DPROFILE=$<TARGET_FILE:vtp-profile> -DWORLDGEN=$<TARGET_FILE:vtp-worldgen>
                   -DWORLD=${CMAKE_CURRENT_BINARY_DIR}/profile_out/profile_dry.vtw
                   -DOUT=${CMAKE_CURRENT_BINARY_DIR}/profile_out -DWET=OFF
                   -P ${CMAKE_CURRENT_LIST_DIR}/scripts/check_profile_water.cmake)
  set_tests_properties(vtp_profile_water_section_dry PROPERTIES LABELS tools TIMEOUT 300)
endif()
# The surface sections on a world without a surface complete (tests/tools/scripts/check_profile_empty.cmake).
if(TARGET vtp-profile AND TARGET vtp-worldgen)
  add_test(NAME vtp_profile_empty_world
           COMMAND ${CMAKE_COMMAND} -DPROFILE=$<TARGET_FILE:vtp-profile> -DWORLDGEN=$<TARGET_FILE:vtp-worldgen>
                   -DOUT=${CMAKE_CURRENT_BINARY_DIR}/profile_out
                   -P ${CMAKE_CURRENT_LIST_DIR}/scripts/check_profile_empty.cmake)
  set_tests_properties(vtp_profile_empty_world PROPERTIES LABELS tools TIMEOUT 300)
endif()
# A malformed --box and a seed beyond 2^64 - 1 are usage errors (exit 2), before any work.
if(TARGET vtp-profile)
  add_test(NAME vtp_profile_rejects_bad_arguments
           COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:vtp-profile>
                   "-DRUN1=${PROJECT_SOURCE_DIR}/data/worlds/default.vtw|--box|-8,-8,-8,8,8"
                   "-DRUN2=${PROJECT_SOURCE_DIR}/data/worlds/default.vtw|--seed|99999999999999999999"
                   -DEXPECT_EXIT=2 "-DEXPECT_STDERR=^vtp-profile: [^\n]+\n$"
                   -P ${CMAKE_CURRENT_LIST_DIR}/scripts/check_run.cmake)
  set_tests_properties(vtp_profile_rejects_bad_arguments PROPERTIES LABELS tools TIMEOUT 60)
endif()
