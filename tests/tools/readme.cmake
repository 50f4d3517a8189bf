# The README's "Using vtp in your server" example must be exactly the consumer program CI compiles and runs.
add_test(NAME readme_example_is_the_consumer
  COMMAND ${CMAKE_COMMAND} -DREADME=${PROJECT_SOURCE_DIR}/README.md
          -DEXAMPLE=${PROJECT_SOURCE_DIR}/tests/consumer/main.cpp -P ${CMAKE_CURRENT_LIST_DIR}/scripts/readme_check.cmake)
set_tests_properties(readme_example_is_the_consumer PROPERTIES LABELS docs)
