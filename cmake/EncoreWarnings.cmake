# Warning flags shared by every Encore target; CI turns them into errors (ENCORE_WERROR=ON).
add_library(encore_warnings INTERFACE)
target_compile_options(encore_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX,C>:-Wall -Wextra -Wshadow -Wconversion -Wno-sign-conversion>
  $<$<AND:$<BOOL:${ENCORE_WERROR}>,$<COMPILE_LANGUAGE:CXX,C>>:-Werror>)
