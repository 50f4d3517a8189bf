# Runs vtp-profile --sections contacts on the shipped default world and checks the contacts section (keys as
# tools/profile/contact_bench.cpp writes them):
#   cmake -DPROFILE=<exe> -DWORLD=<default.vtw> -DOUT=<dir> -P check_profile_contacts.cmake
# At least 100 resting poses of the radius-32 sphere, each touching the terrain (points and manifolds), a positive
# time, and no other section written.
file(MAKE_DIRECTORY ${OUT})
include(${CMAKE_CURRENT_LIST_DIR}/profile_report.cmake)
profile_sections(${WORLD} contacts ${OUT}/profile_contacts.json json)
expect_no_sections("${json}" terrain mesh masks collider ratios mismatches cache water)
string(JSON poses GET "${json}" contacts sphere_r32_poses)
string(JSON us GET "${json}" contacts sphere_r32_median_us)
string(JSON points GET "${json}" contacts sphere_r32_points_per_pose)
string(JSON manifolds GET "${json}" contacts sphere_r32_manifolds_per_pose)
if(poses LESS 100 OR NOT us GREATER 0 OR points LESS 1 OR manifolds LESS 1)
  message(FATAL_ERROR "contacts: ${poses} poses, ${us} us, ${points} points and ${manifolds} manifolds per pose")
endif()
