# The README's two examples are exactly the consumer programs CI compiles against the installed package and runs;
# here they are also built against the tree and run on the shipped world.
foreach(example main bullet_main)
  add_test(NAME readme_example_${example}_is_the_consumer
    COMMAND ${CMAKE_COMMAND} -DREADME=${PROJECT_SOURCE_DIR}/README.md
            -DEXAMPLE=${PROJECT_SOURCE_DIR}/tests/consumer/${example}.cpp
            -P ${CMAKE_CURRENT_LIST_DIR}/scripts/readme_check.cmake)
  set_tests_properties(readme_example_${example}_is_the_consumer PROPERTIES LABELS docs)
endforeach()

add_executable(vtp_example_engine_neutral ${PROJECT_SOURCE_DIR}/tests/consumer/main.cpp)
target_link_libraries(vtp_example_engine_neutral PRIVATE vtp::terrain vtp::mesher vtp::physics)
add_test(NAME readme_example_engine_neutral_runs
  COMMAND vtp_example_engine_neutral ${PROJECT_SOURCE_DIR}/data/worlds/default.vtw
          ${CMAKE_CURRENT_BINARY_DIR}/readme_example_edited.vtw)
add_executable(vtp_example_bullet ${PROJECT_SOURCE_DIR}/tests/consumer/bullet_main.cpp)
target_link_libraries(vtp_example_bullet PRIVATE vtp::physics_bullet)
add_test(NAME readme_example_bullet_runs COMMAND vtp_example_bullet ${PROJECT_SOURCE_DIR}/data/worlds/default.vtw)
set_tests_properties(readme_example_engine_neutral_runs readme_example_bullet_runs PROPERTIES LABELS docs)
