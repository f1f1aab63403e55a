# The test format.check (tests/CMakeLists.txt): every C and C++ file of
# src/, include/ and tests/ laid out as .clang-format says, by
# clang-format-14 (CLANG_FORMAT; ROOT: the source tree).
if(NOT CLANG_FORMAT)
  message(FATAL_ERROR "clang-format-14 not found: scripts/deps.sh installs it "
                      "(apt-get install clang-format-14)")
endif()
set(globs)
foreach(dir src include tests)
  foreach(ext c h cpp hpp)
    list(APPEND globs ${ROOT}/${dir}/*.${ext})
  endforeach()
endforeach()
file(GLOB_RECURSE files RELATIVE ${ROOT} ${globs})
list(LENGTH files n)
execute_process(COMMAND ${CLANG_FORMAT} --dry-run -Werror ${files}
  WORKING_DIRECTORY ${ROOT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "of ${n} files, those named above differ from .clang-format "
                      "(clang-format-14 -i FILE lays them out)")
endif()
message(STATUS "${n} files laid out as .clang-format says")
