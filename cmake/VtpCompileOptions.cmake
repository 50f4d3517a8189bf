# Compile options shared by every vtp target.
#
# vtp_target_options(<target>) applies the house flags to one of *our* targets only (third-party code never gets them):
# x86-64-v3, no FMA contraction (saved and hashed output must not depend on flags), warnings, sanitizers.
# vtp_baseline_sources(<files...>) marks the few files that must run on any x86-64 before the CPU check has passed
# (tools/README.md, determinism and builds): they are compiled for plain x86-64 and must hold no dynamic initialisers.

set(VTP_ARCH_FLAGS -march=x86-64-v3 -mtune=generic)
set(VTP_BASELINE_ARCH_FLAGS -march=x86-64 -mtune=generic)

set(VTP_SANITIZER_FLAGS "")
if(VTP_SANITIZE AND VTP_TSAN)
  message(FATAL_ERROR "VTP_SANITIZE and VTP_TSAN are exclusive")
endif()
if(VTP_SANITIZE)
  set(VTP_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
elseif(VTP_TSAN)
  set(VTP_SANITIZER_FLAGS -fsanitize=thread -fno-omit-frame-pointer)
endif()
if(VTP_SANITIZER_FLAGS)
  # Everything linked into a sanitizer build is compiled with the same runtime flags.
  add_compile_options(${VTP_SANITIZER_FLAGS})
  add_link_options(${VTP_SANITIZER_FLAGS})
endif()

function(vtp_target_options target)
  target_compile_options(${target} PRIVATE ${VTP_ARCH_FLAGS} -ffp-contract=off -Wall -Wextra -Wshadow -Wpedantic)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # The libraries are position-independent (CMAKE_POSITION_INDEPENDENT_CODE); nobody interposes their functions, so
    # GCC may inline and specialise calls between them within a file as it would in an executable.
    target_compile_options(${target} PRIVATE -fno-semantic-interposition)
  endif()
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    # GCC 12 reports false -Wrestrict positives inside libstdc++'s string concatenation (GCC bug 105329).
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  if(VTP_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

function(vtp_baseline_sources)
  set_source_files_properties(${ARGN} DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
    PROPERTIES COMPILE_OPTIONS "${VTP_BASELINE_ARCH_FLAGS}")
endfunction()
