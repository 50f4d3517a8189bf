# Helpers of the vtp-profile checks (included by check_profile_*.cmake).

# Runs `${PROFILE} <world> --sections <sections> --json <report>` and reads the report into `out_json`; a failed run is
# fatal.
function(profile_sections world sections report out_json)
  file(REMOVE ${report})
  execute_process(COMMAND ${PROFILE} ${world} --sections ${sections} --json ${report} RESULT_VARIABLE rc
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "vtp-profile --sections ${sections}: exit ${rc}: ${err}")
  endif()
  file(READ ${report} json)
  set(${out_json} "${json}" PARENT_SCOPE)
endfunction()

# Fails unless none of the sections after `json` is in the report.
function(expect_no_sections json)
  foreach(section ${ARGN})
    string(JSON type ERROR_VARIABLE absent TYPE "${json}" ${section})
    if(NOT absent)
      message(FATAL_ERROR "the report has a ${section} section it was not asked for")
    endif()
  endforeach()
endfunction()
