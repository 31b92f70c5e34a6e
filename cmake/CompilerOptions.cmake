# Warnings and sanitizers for every mtm target: link mtm::options.
add_library(mtm_options INTERFACE)
add_library(mtm::options ALIAS mtm_options)
target_compile_options(mtm_options INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                             -Wold-style-cast -Wcast-align)
if(MTM_SANITIZE)
  target_compile_options(mtm_options INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer
                                               -fno-sanitize-recover=undefined)
  target_link_options(mtm_options INTERFACE -fsanitize=address,undefined)
endif()
