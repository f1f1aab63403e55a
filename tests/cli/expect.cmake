# Run one command and check its exit status and output.
#   cmake -DCMD=prog|arg|arg -DRC=0 [-DOUT=regex] [-DERR=regex] -P expect.cmake
# CMD separates words with "|" because add_test would split a ";" list, and
# some arguments (synthetic topologies) contain spaces. ctest ignores the exit
# status when PASS_REGULAR_EXPRESSION is set, hence this script.
string(REPLACE "|" ";" cmd "${CMD}")
# The tests choose their settings by flags; drop the variables a developer may
# have exported so that they cannot change the outcome.
foreach(var WORKERS SCHED BIND TOPOLOGY SHEPHERD STACK STACK_GUARD IDLE STATS TRACE)
  unset(ENV{HERD_${var}})
endforeach()
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("exit status: ${rc}\n--- stdout\n${out}--- stderr\n${err}---")
if(NOT "${rc}" STREQUAL "${RC}")
  message(FATAL_ERROR "expected exit status ${RC}, got ${rc}")
endif()
if(DEFINED OUT AND NOT out MATCHES "${OUT}")
  message(FATAL_ERROR "stdout does not match: ${OUT}")
endif()
if(DEFINED ERR AND NOT err MATCHES "${ERR}")
  message(FATAL_ERROR "stderr does not match: ${ERR}")
endif()
