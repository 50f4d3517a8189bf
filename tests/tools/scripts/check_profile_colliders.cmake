# Runs vtp-profile on part of the shipped default world with --csv and --html and checks the collider sections
# (keys as tools/profile/collider_bench.cpp writes them): every key exists, no query of ours disagrees with the oracle, the builds as the collider
# cache runs them (wide-apron meshes) own as many triangles as the 10^3 meshes, the CSV has a row per surface chunk
# and the HTML report holds the summary table.
#   cmake -DPROFILE=<exe> -DWORLD=<.vtw> -DOUT=<dir> -P check_profile_colliders.cmake
file(MAKE_DIRECTORY ${OUT})
set(report ${OUT}/profile_colliders.json)
set(csv ${OUT}/profile_colliders.csv)
set(html ${OUT}/profile_colliders.html)
file(REMOVE ${report} ${csv} ${html})
execute_process(COMMAND ${PROFILE} ${WORLD} --box=-48,-48,-48,48,48,48 --json ${report} --csv ${csv} --html ${html}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "vtp-profile: exit ${rc}: ${err}")
endif()
file(READ ${report} json)
foreach(path "collider bytes_per_triangle" "collider build_ns_per_triangle" "collider reference bytes_per_triangle"
             "ratios build_vs_bullet_quantized" "ratios long_ray_vs_bullet" "ratios short_ray_vs_bullet"
             "ratios aabb_vs_bullet" "ratios aabb_with_vertices_vs_bullet" "ratios long_ray_vs_brute_force"
             "ratios by_bucket typical long_ray_vs_bullet" "ratios by_bucket typical short_ray_vs_bullet"
             "ratios by_bucket typical aabb_vs_bullet" "mismatches ours" "mismatches bullet" "cache hits"
             "cache misses" "cache builds" "cache evictions" "cache overflow_builds" "cache bytes" "mesh ns_per_triangle"
             "masks median_ns_per_chunk" "collider as_cached build_ns_per_triangle"
             "collider as_cached bullet_edge_info_ns_per_triangle" "ratios build_as_cached_vs_bullet_quantized"
             "ratios build_as_cached_vs_bullet_with_edge_info" "collider build_with_edge_flags_ns_per_triangle"
             "ratios build_with_edge_flags_vs_bullet_quantized" "cache upgrades" "cache queries_miss_us")
  string(REPLACE " " ";" keys "${path}")
  string(JSON type ERROR_VARIABLE missing TYPE "${json}" ${keys})
  if(missing)
    message(FATAL_ERROR "${path} missing from ${report}")
  endif()
endforeach()
string(JSON ours GET "${json}" mismatches ours)
if(NOT ours EQUAL 0)
  message(FATAL_ERROR "mismatches.ours is ${ours}: some query disagrees with the double-precision oracle")
endif()
string(JSON other GET "${json}" collider as_cached chunks_with_other_triangles)
if(NOT other EQUAL 0)
  message(FATAL_ERROR "${other} chunks own other triangles in their wide-apron mesh than in their 10^3 mesh")
endif()
string(JSON chunks GET "${json}" collider chunks)
if(chunks LESS 20)
  message(FATAL_ERROR "collider.chunks is ${chunks}: the box should hold dozens of surface chunks")
endif()
file(STRINGS ${csv} lines)
list(LENGTH lines count)
math(EXPR rows "${count} - 1")
if(NOT rows EQUAL chunks)
  message(FATAL_ERROR "${csv} has ${rows} rows for ${chunks} surface chunks")
endif()
file(READ ${html} page)
string(FIND "${page}" "id='summary'" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${html} has no summary table")
endif()
