# Script mode, for the benchmarks' smoke tests:
#   cmake -DCMD="prog|arg|..." -DEXPECT="regex|regex|..." [-DSKIP_UNLESS=program] -P RunSmoke.cmake
# Runs CMD (arguments separated by |), then fails unless it exited 0 and its output matches every
# regex in EXPECT (a figure line each). With SKIP_UNLESS, prints "skipped: ..." with the reason and
# stops when that program is not on PATH (the test's SKIP_REGULAR_EXPRESSION marks it skipped). A benchmark that crashes, stops printing a
# figure or changes its lines fails the suite; its times are printed, never compared.
if(DEFINED SKIP_UNLESS AND NOT SKIP_UNLESS STREQUAL "")
  find_program(smoke_needed ${SKIP_UNLESS})
  if(NOT smoke_needed)
    message("skipped: ${SKIP_UNLESS} is not installed (install it to run this smoke test)")
    return()
  endif()
endif()
string(REPLACE "|" ";" cmd "${CMD}")
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT err STREQUAL "")
  message("stderr:\n${err}")
endif()
if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "smoke: ${CMD} exited with ${rc}, expected 0")
endif()
string(REPLACE "|" ";" expect "${EXPECT}")
foreach(re IN LISTS expect)
  if(NOT out MATCHES "${re}")
    message(FATAL_ERROR "smoke: the output has no line matching '${re}'")
  endif()
endforeach()
