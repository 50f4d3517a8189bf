# Fuzzing the world-file loader (tests/fuzz). Included by tests/CMakeLists.txt.
# - Every build: vtp_world_file_fuzz_replay runs the fuzz target's checks over the committed corpus
#   (tests/fuzz/corpus/world_file), as the ctest `fuzz_replay_world_file` (label `fuzz-replay`). The same executable
#   writes the seed corpus: `vtp_world_file_fuzz_replay --write-seeds DIR`.
# - VTP_BUILD_FUZZERS=ON with clang: the libFuzzer executable itself (tests/fuzz/CMakeLists.txt).
add_executable(vtp_world_file_fuzz_replay ${PROJECT_SOURCE_DIR}/tests/fuzz/world_file_fuzz.cpp
                                          ${PROJECT_SOURCE_DIR}/tests/fuzz/replay_main.cpp)
target_include_directories(vtp_world_file_fuzz_replay PRIVATE ${PROJECT_SOURCE_DIR}/terrain/src)
target_link_libraries(vtp_world_file_fuzz_replay PRIVATE vtp_terrain ZLIB::ZLIB)
vtp_target_options(vtp_world_file_fuzz_replay)
add_test(NAME fuzz_replay_world_file
         COMMAND vtp_world_file_fuzz_replay ${PROJECT_SOURCE_DIR}/tests/fuzz/corpus/world_file)
set_tests_properties(fuzz_replay_world_file PROPERTIES LABELS fuzz-replay TIMEOUT 300)

if(VTP_BUILD_FUZZERS)
  add_subdirectory(${PROJECT_SOURCE_DIR}/tests/fuzz ${CMAKE_BINARY_DIR}/fuzz)
endif()
