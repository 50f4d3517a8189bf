# Runs the vtp-profile sections that measure surfaces on a world without one (vtp-worldgen's empty preset; the
# terrain section refuses a world with no stored chunk, exit 1):
#   cmake -DPROFILE=<exe> -DWORLDGEN=<exe> -DOUT=<dir> -P check_profile_empty.cmake
# The run completes (exit 0; it once divided by the count of surface chunks), and the figures that need a surface
# chunk are null: no collider was built, so there is no cache to walk.
file(MAKE_DIRECTORY ${OUT})
set(world ${OUT}/profile_empty.vtw)
file(REMOVE ${world})
execute_process(COMMAND ${WORLDGEN} --preset empty --size 16,16,16 --out ${world} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "vtp-worldgen: exit ${rc}: ${err}")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/profile_report.cmake)
profile_sections(${world} mesh,masks,colliders,water,contacts ${OUT}/profile_empty.json json)
string(JSON chunks GET "${json}" collider chunks)
string(JSON cache TYPE "${json}" cache)
if(NOT chunks EQUAL 0 OR NOT cache STREQUAL "NULL")
  message(FATAL_ERROR "an empty world: ${chunks} collider chunks and a cache of type ${cache}, expected 0 and null")
endif()
string(JSON poses GET "${json}" contacts sphere_r32_poses)
string(JSON us TYPE "${json}" contacts sphere_r32_median_us)
if(NOT poses EQUAL 0 OR NOT us STREQUAL "NULL")
  message(FATAL_ERROR "an empty world: ${poses} contact poses and a time of type ${us}, expected 0 and null")
endif()
