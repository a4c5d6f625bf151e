# Warnings for the project's own targets (not for third-party headers).
function(kvbe_set_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic
                           -Wshadow -Wconversion -Wno-sign-conversion>)
  endif()
endfunction()
