# vtp-world run on real files: tests/tools/world_tool_test.sh, one ctest per scenario (label `tools`). Worlds are made
# by the tool itself from the committed empty default world, tests/data/world/empty.vtw (see the README there).
# readme_example applies the first code block of tools/README.md "Edit scripts", which is passed as the last argument.
if(TARGET vtp-world)
  foreach(scenario help usage check_good check_corrupt salvage copy_identical edit edit_rejects raycast
                   raycast_water outputs_atomic readme_example)
    add_test(NAME vtp_world_${scenario}
             COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/world_tool_test.sh ${scenario} $<TARGET_FILE:vtp-world>
                     ${PROJECT_SOURCE_DIR}/tests/data/world ${PROJECT_SOURCE_DIR}/tools/README.md)
    set_tests_properties(vtp_world_${scenario} PROPERTIES LABELS tools TIMEOUT 300)
  endforeach()
endif()

# Acceptance: `vtp-world copy` of the shipped default world is byte-identical to it (load + save is deterministic).
if(TARGET vtp-world)
  set(world_copy_out ${CMAKE_CURRENT_BINARY_DIR}/world_copy_default.vtw)
  add_test(NAME vtp_world_copy_default_identical
           COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:vtp-world>
                   "-DRUN1=copy|${PROJECT_SOURCE_DIR}/data/worlds/default.vtw|${world_copy_out}"
                   "-DCLEAN=${world_copy_out}" "-DSAME=${world_copy_out}|${PROJECT_SOURCE_DIR}/data/worlds/default.vtw"
                   -P ${CMAKE_CURRENT_LIST_DIR}/scripts/check_run.cmake)
  set_tests_properties(vtp_world_copy_default_identical PROPERTIES LABELS tools TIMEOUT 120)
endif()

# `vtp-world export-obj` on the default world: a small box gives valid triangles and a PNG; a box reaching
# past storage is clipped (one past every axis exports exactly the whole world, one wholly outside exports nothing);
# bad boxes are usage errors (2); a missing world or an unwritable output is invalid data (1).
if(TARGET vtp-world)
  set(export_out ${CMAKE_CURRENT_BINARY_DIR}/export_obj)
  file(MAKE_DIRECTORY ${export_out})
  set(default_world ${PROJECT_SOURCE_DIR}/data/worlds/default.vtw)
  set(export_error_line "^vtp-world: [^\n]+\n$")
  function(vtp_export_obj_run name)
    add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:vtp-world> ${ARGN}
                                  -P ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/scripts/check_run.cmake)
    set_tests_properties(${name} PROPERTIES LABELS tools TIMEOUT 300)
  endfunction()

  add_test(NAME vtp_world_export_obj_box
           COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:vtp-world>
                   "-DRUN=export-obj|${default_world}|--box|-24,-16,-24,8,16,8|--out|${export_out}/box.obj|--png|${export_out}/box.png|--png-size|160x120"
                   -DOBJ=${export_out}/box.obj -DPNG=${export_out}/box.png -DMIN_FACES=100
                   -P ${CMAKE_CURRENT_LIST_DIR}/scripts/check_export_obj.cmake)
  set_tests_properties(vtp_world_export_obj_box PROPERTIES LABELS tools TIMEOUT 300)
  vtp_export_obj_run(vtp_world_export_obj_deterministic
    "-DRUN1=export-obj|${default_world}|--box=-40,-48,-40,40,48,40|--out|${export_out}/det_a.obj"
    "-DRUN2=export-obj|${default_world}|--box=-40,-48,-40,40,48,40|--out|${export_out}/det_b.obj"
    "-DCLEAN=${export_out}/det_a.obj|${export_out}/det_b.obj" "-DSAME=${export_out}/det_a.obj|${export_out}/det_b.obj")
  vtp_export_obj_run(vtp_world_export_obj_box_past_storage_is_whole_world
    "-DRUN1=export-obj|${default_world}|--out|${export_out}/all.obj"
    "-DRUN2=export-obj|${default_world}|--box|-20000000,-20000000,-20000000,20000000,20000000,20000000|--out|${export_out}/clipped.obj"
    "-DCLEAN=${export_out}/all.obj|${export_out}/clipped.obj" "-DSAME=${export_out}/all.obj|${export_out}/clipped.obj")
  vtp_export_obj_run(vtp_world_export_obj_box_outside_storage_is_empty
    "-DRUN1=export-obj|${default_world}|--box|16777200,0,0,16777300,8,8|--out|${export_out}/outside.obj"
    "-DCLEAN=${export_out}/outside.obj" "-DEXPECT_STDOUT= 0 triangles")
  vtp_export_obj_run(vtp_world_export_obj_rejects_bad_box
    "-DRUN1=export-obj|${default_world}|--box|1,2,3|--out|${export_out}/bad.obj"
    "-DRUN2=export-obj|${default_world}|--box|0,0,0,0,8,8|--out|${export_out}/bad.obj"
    -DEXPECT_EXIT=2 "-DEXPECT_STDERR=${export_error_line}")
  vtp_export_obj_run(vtp_world_export_obj_rejects_bad_png_size
    "-DRUN1=export-obj|${default_world}|--out|${export_out}/bad.obj|--png|${export_out}/bad.png|--png-size|0x0"
    -DEXPECT_EXIT=2 "-DEXPECT_STDERR=${export_error_line}")
  vtp_export_obj_run(vtp_world_export_obj_missing_world
    "-DRUN1=export-obj|${export_out}/no-such-world.vtw|--out|${export_out}/bad.obj"
    -DEXPECT_EXIT=1 "-DEXPECT_STDERR=${export_error_line}")
  vtp_export_obj_run(vtp_world_export_obj_unwritable_out
    "-DRUN1=export-obj|${default_world}|--box|0,0,0,8,8,8|--out|${export_out}/no/such/dir/x.obj"
    "-DRUN2=export-obj|${default_world}|--box|0,0,0,8,8,8|--out|${export_out}/ok.obj|--png|${export_out}/no/such/dir/x.png"
    -DEXPECT_EXIT=1 "-DEXPECT_STDERR=${export_error_line}")
  # A write that fails part-way (a full disk) is an error too, and the device is left in place.
  if(EXISTS /dev/full)
    vtp_export_obj_run(vtp_world_export_obj_full_disk
      "-DRUN1=export-obj|${default_world}|--box|0,0,0,8,8,8|--out|/dev/full"
      "-DRUN2=export-obj|${default_world}|--box|0,0,0,8,8,8|--out|${export_out}/ok.obj|--png|/dev/full"
      -DEXPECT_EXIT=1 "-DEXPECT_STDERR=^vtp-world: cannot write /dev/full: [^\n]+\n$")
  endif()
endif()
