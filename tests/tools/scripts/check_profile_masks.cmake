# Runs vtp-worldgen then vtp-profile on the world it made and checks the report's masks section (keys as tools/profile/mask_bench.cpp writes them):
#   cmake -DWORLDGEN=<exe> -DPROFILE=<exe> -DOUT=<dir> -P check_profile_masks.cmake
# Every documented masks key must exist (null is allowed where the world has nothing to measure, e.g. no
# airborne bodies on a flat world); the broadphase must miss no touching pair and the index must equal a rebuild.
file(MAKE_DIRECTORY ${OUT})
set(world ${OUT}/profile_flat.vtw)
set(report ${OUT}/profile_flat.json)
file(REMOVE ${world} ${report})
execute_process(COMMAND ${WORLDGEN} --preset flat --size 32,16,32 --seed 3 --out ${world}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "vtp-worldgen: exit ${rc}: ${err}")
endif()
execute_process(COMMAND ${PROFILE} ${world} --json ${report} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "vtp-profile: exit ${rc}: ${err}")
endif()
file(READ ${report} json)
foreach(key median_ns_per_chunk index_build_ms entries mixed full_solid full_water bits_per_voxel index_bytes
            query_ns_per_chunk query_ns_per_body edit_1_us edit_1_without_index_us edit_sphere8_us
            edit_sphere8_without_index_us false_pair_rejection chunk_aabb_false_pairs contact_false_pair_rejection
            violations target_median_ns_per_chunk target_query_ns_per_chunk target_false_pair_rejection timing
            far_voxel_query_ratio far_voxel_lock_free far_voxel_cleared_lock_free)
  string(JSON type ERROR_VARIABLE missing TYPE "${json}" masks ${key})
  if(missing)
    message(FATAL_ERROR "masks.${key} missing from ${report}")
  endif()
endforeach()
# A voxel 30000 voxels away keeps the queries lock-free, and they are lock-free again once it is cleared.
foreach(check "violations|0" "index_matches_build|ON" "edit_index_matches_rebuild|ON" "far_voxel_lock_free|ON"
              "far_voxel_cleared_lock_free|ON")
  string(REPLACE "|" ";" pair "${check}")
  list(GET pair 0 key)
  list(GET pair 1 expected)
  string(JSON value GET "${json}" masks ${key})
  if(NOT value STREQUAL expected)
    message(FATAL_ERROR "masks.${key} is ${value}, expected ${expected}")
  endif()
endforeach()
string(JSON mixed GET "${json}" masks mixed)
if(mixed LESS 1)
  message(FATAL_ERROR "masks.mixed is ${mixed}: a flat world has a surface")
endif()

# --sections: only the sections asked for; a report the chosen sections cannot give, or an unknown section, is a usage
# error (exit 2).
include(${CMAKE_CURRENT_LIST_DIR}/profile_report.cmake)
profile_sections(${world} masks ${OUT}/profile_flat_masks.json json)
string(JSON mixed_only GET "${json}" masks mixed)
if(NOT mixed_only EQUAL mixed)
  message(FATAL_ERROR "--sections masks: masks.mixed is ${mixed_only}, the full run's ${mixed}")
endif()
expect_no_sections("${json}" terrain mesh collider ratios mismatches cache water contacts)
foreach(args "--sections;masks;--csv;${OUT}/x.csv" "--sections;masks,bogus")
  execute_process(COMMAND ${PROFILE} ${world} ${args} --json ${OUT}/unused.json RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "vtp-profile ${args}: exit ${rc}, expected 2 (usage): ${err}")
  endif()
endforeach()
