# vtp-worldgen (tools/worldgen), label `worldgen`. Included by tests/CMakeLists.txt when the tools are built.
# - Tool runs, checked by tests/tools/scripts/check_run.cmake: the committed default world regenerates byte for byte
#   (from whichever build runs the tests, sanitizer builds included), the flat preset is deterministic, usage errors
#   exit 2 and I/O failures exit 1, each with one "vtp-worldgen: ..." line on stderr.
# - vtp_worldgen_tests (tests/tools/worldgen_test.cpp): properties of the generated terrain, against the library.
set(worldgen_out ${CMAKE_CURRENT_BINARY_DIR}/worldgen_out)
file(MAKE_DIRECTORY ${worldgen_out})
set(worldgen_check ${PROJECT_SOURCE_DIR}/tests/tools/scripts/check_run.cmake)
set(worldgen_error_line "^vtp-worldgen: [^\n]+\n$")

# vtp_worldgen_run(<name> <cmake -D options...>): one ctest test running check_run.cmake on the tool.
function(vtp_worldgen_run name)
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:vtp-worldgen> ${ARGN} -P ${worldgen_check})
  set_tests_properties(${name} PROPERTIES LABELS worldgen TIMEOUT 300)
endfunction()

vtp_worldgen_run(worldgen_default_matches_committed
  "-DRUN1=--preset|default|--out|${worldgen_out}/default.vtw"
  "-DCLEAN=${worldgen_out}/default.vtw"
  "-DSAME=${worldgen_out}/default.vtw|${PROJECT_SOURCE_DIR}/data/worlds/default.vtw")
vtp_worldgen_run(worldgen_flat_is_deterministic
  "-DRUN1=--preset|flat|--size|32,16,32|--seed|7|--out|${worldgen_out}/flat_a.vtw"
  "-DRUN2=--preset|flat|--size|32,16,32|--seed|7|--out|${worldgen_out}/flat_b.vtw"
  "-DCLEAN=${worldgen_out}/flat_a.vtw|${worldgen_out}/flat_b.vtw"
  "-DSAME=${worldgen_out}/flat_a.vtw|${worldgen_out}/flat_b.vtw")
vtp_worldgen_run(worldgen_json_summary
  "-DRUN1=--preset=empty|--out|${worldgen_out}/empty.vtw|--json|-"
  "-DEXPECT_STDOUT=\"stored\": 0.*\"file_bytes\": [1-9][0-9]*,.*\"file_hash\": \"[0-9a-f]+\"")
vtp_worldgen_run(worldgen_help "-DRUN1=--help" "-DEXPECT_STDOUT=--preset")

# Usage errors: exit 2 and one line on stderr.
vtp_worldgen_run(worldgen_rejects_unknown_preset
  "-DRUN1=--preset|nope|--out|${worldgen_out}/x.vtw" -DEXPECT_EXIT=2 "-DEXPECT_STDERR=${worldgen_error_line}")
vtp_worldgen_run(worldgen_rejects_report_over_world
  "-DRUN1=--preset|flat|--out|${worldgen_out}/same.vtw|--json|${worldgen_out}/same.vtw" -DEXPECT_EXIT=2
  "-DEXPECT_STDERR=^vtp-worldgen: --out and --json name the same file[^\n]+\n$")
vtp_worldgen_run(worldgen_rejects_missing_out "-DRUN1=--preset|flat" -DEXPECT_EXIT=2
  "-DEXPECT_STDERR=${worldgen_error_line}")
vtp_worldgen_run(worldgen_rejects_bad_size
  "-DRUN1=--preset|flat|--size|0,16,16|--out|${worldgen_out}/x.vtw"
  "-DRUN2=--preset|empty|--size|4096,4096,4096|--out|${worldgen_out}/x.vtw" -DEXPECT_EXIT=2
  "-DEXPECT_STDERR=${worldgen_error_line}")
vtp_worldgen_run(worldgen_rejects_size_for_terrain
  "-DRUN1=--preset|default|--size|64,96,64|--out|${worldgen_out}/x.vtw" -DEXPECT_EXIT=2
  "-DEXPECT_STDERR=${worldgen_error_line}")
vtp_worldgen_run(worldgen_rejects_bad_seed
  "-DRUN1=--preset|flat|--seed|minus-one|--out|${worldgen_out}/x.vtw"
  "-DRUN2=--preset|flat|--seed|-1|--out|${worldgen_out}/x.vtw" -DEXPECT_EXIT=2
  "-DEXPECT_STDERR=${worldgen_error_line}")
# An unwritable output is an I/O failure: exit 1.
vtp_worldgen_run(worldgen_reports_unwritable_out
  "-DRUN1=--preset|flat|--out|${worldgen_out}/no/such/dir/x.vtw" -DEXPECT_EXIT=1
  "-DEXPECT_STDERR=${worldgen_error_line}")

add_executable(vtp_worldgen_tests ${CMAKE_CURRENT_SOURCE_DIR}/tools/worldgen_test.cpp)
target_link_libraries(vtp_worldgen_tests PRIVATE vtp_worldgen_lib vtp_test_support)
vtp_target_options(vtp_worldgen_tests)
doctest_discover_tests(vtp_worldgen_tests PROPERTIES LABELS worldgen TIMEOUT 300)
