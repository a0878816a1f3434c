# Every TEST_CASE must reach ctest whole: catch_discover_tests splits a name at ';' (a CMake list separator),
# and each half then runs as a Catch filter that matches nothing and passes. So no name may hold a ';'.
# Run as: cmake -DSOURCE_DIR=<repo> -P check_test_names.cmake
file(GLOB test_sources "${SOURCE_DIR}/tests/test_*.cpp")
set(bad "")
foreach(source ${test_sources})
  file(READ "${source}" text)
  string(REGEX MATCHALL "TEST_CASE\\(\"[^\"]*\"" names "${text}")
  foreach(name ${names})
    # MATCHALL's list already split a name at its ';': a piece without the closing quote is half of one.
    if(NOT name MATCHES "^TEST_CASE\\(\".*\"$")
      list(APPEND bad "${source}: ${name}")
    endif()
  endforeach()
  string(REGEX MATCHALL "TEST_CASE\\(\"[^\"]*;[^\"]*\"" split "${text}")
  if(split)
    list(APPEND bad "${source}")
  endif()
endforeach()
if(bad)
  message(FATAL_ERROR "test names with ';' (ctest would run an empty filter for them): ${bad}")
endif()
