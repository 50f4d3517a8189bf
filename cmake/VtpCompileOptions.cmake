# Compile options shared by every vtp target.
#
# vtp_target_options(<target>) applies the house flags to one of *our* targets only (third-party code never gets them):
# x86-64-v3, no FMA contraction (saved and hashed output must not depend on flags), warnings, sanitizers.
# VTP_ASSERTS_ACTIVE: whether VTP_ASSERT checks in this build (VTP_ASSERTS, or no -DNDEBUG in the build type's flags,
# as in Debug); the test that breaks one is registered only then.
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

string(TOUPPER "${CMAKE_BUILD_TYPE}" vtp_build_type)
if(VTP_ASSERTS OR NOT " ${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${vtp_build_type}} " MATCHES " [-/]DNDEBUG ")
  set(VTP_ASSERTS_ACTIVE ON)
else()
  set(VTP_ASSERTS_ACTIVE OFF)
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
  if(VTP_ASSERTS)
    # VTP_ASSERT (vtp/terrain/assert.h) checks even where the build type defines NDEBUG.
    target_compile_definitions(${target} PRIVATE VTP_ENABLE_ASSERTS)
  endif()
endfunction()

function(vtp_baseline_sources)
  set_source_files_properties(${ARGN} DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
    PROPERTIES COMPILE_OPTIONS "${VTP_BASELINE_ARCH_FLAGS}")
endfunction()
