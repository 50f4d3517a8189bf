# vtp-profile (tools/profile), label `tools`: each test runs a check script of tests/tools/scripts on the tool.
if(NOT TARGET vtp-profile OR NOT TARGET vtp-worldgen)
  return()
endif()
set(profile_out ${CMAKE_CURRENT_BINARY_DIR}/profile_out)
set(default_world ${PROJECT_SOURCE_DIR}/data/worlds/default.vtw)

# vtp_profile_check(<name> <timeout s> <script> <cmake -D options...>): one ctest test running
# `cmake -DPROFILE=<vtp-profile> -DOUT=<profile_out> <options> -P scripts/<script>`. A script given -DWORLDGEN makes
# its world with it (never pass it with the shipped world as WORLD).
set(worldgen -DWORLDGEN=$<TARGET_FILE:vtp-worldgen>)
function(vtp_profile_check name timeout script)
  add_test(NAME ${name}
           COMMAND ${CMAKE_COMMAND} -DPROFILE=$<TARGET_FILE:vtp-profile> -DOUT=${profile_out} ${ARGN}
                   -P ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/scripts/${script})
  set_tests_properties(${name} PROPERTIES LABELS tools TIMEOUT ${timeout})
endfunction()

# The report of a small flat world made by vtp-worldgen carries the masks section with every key the profiler writes
# (tools/profile/mask_bench.cpp), no broadphase violation and an index equal to a rebuild.
vtp_profile_check(vtp_profile_masks_section 600 check_profile_masks.cmake ${worldgen})
# The collider sections, the CSV and the HTML report on part of the shipped default world; then the HTML rendered in
# headless chromium (label `html`, skipped when chromium is absent; .ci/run installs it).
vtp_profile_check(vtp_profile_collider_sections 900 check_profile_colliders.cmake -DWORLD=${default_world})
set_tests_properties(vtp_profile_collider_sections PROPERTIES FIXTURES_SETUP profile_html)
add_test(NAME vtp_profile_html_renders
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/scripts/check_profile_html.sh ${profile_out}/profile_colliders.html)
set_tests_properties(vtp_profile_html_renders PROPERTIES LABELS html TIMEOUT 120 SKIP_RETURN_CODE 77
                     FIXTURES_REQUIRED profile_html)
# The water section on the shipped default world (a lake) and on a world without water (made by vtp-worldgen).
vtp_profile_check(vtp_profile_water_section 300 check_profile_water.cmake -DWORLD=${default_world} -DWET=ON)
vtp_profile_check(vtp_profile_water_section_dry 300 check_profile_water.cmake ${worldgen}
                  -DWORLD=${profile_out}/profile_dry.vtw -DWET=OFF)
# The contacts section (a radius-32 sphere resting on the surface) on the shipped default world.
vtp_profile_check(vtp_profile_contacts_section 300 check_profile_contacts.cmake -DWORLD=${default_world})
# The surface sections on a world without a surface complete.
vtp_profile_check(vtp_profile_empty_world 300 check_profile_empty.cmake ${worldgen})
# A malformed --box and a seed beyond 2^64 - 1 are usage errors (exit 2), before any work.
add_test(NAME vtp_profile_rejects_bad_arguments
         COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:vtp-profile> "-DRUN1=${default_world}|--box|-8,-8,-8,8,8"
                 "-DRUN2=${default_world}|--seed|99999999999999999999" -DEXPECT_EXIT=2
                 "-DEXPECT_STDERR=^vtp-profile: [^\n]+\n$" -P ${CMAKE_CURRENT_LIST_DIR}/scripts/check_run.cmake)
set_tests_properties(vtp_profile_rejects_bad_arguments PROPERTIES LABELS tools TIMEOUT 60)
