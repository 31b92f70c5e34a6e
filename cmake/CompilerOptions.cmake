# Warnings and sanitizers for every mtm target: link mtm::options.
add_library(mtm_options INTERFACE)
add_library(mtm::options ALIAS mtm_options)
target_compile_options(mtm_options INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                             -Wold-style-cast -Wcast-align)
if(MTM_WERROR)
  target_compile_options(mtm_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()
if(MTM_SANITIZE AND MTM_TSAN)
  message(FATAL_ERROR "MTM_SANITIZE (ASan) and MTM_TSAN cannot be combined: build them in two trees")
endif()
if(MTM_SANITIZE)
  target_compile_options(mtm_options INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer
                                               -fno-sanitize-recover=undefined)
  target_link_options(mtm_options INTERFACE -fsanitize=address,undefined)
endif()
if(MTM_TSAN)
  # -Wno-tsan: GCC warns that TSan does not model std::atomic_thread_fence. libcxlccl's fences
  # order its stores to the pool for other processes, which TSan cannot see in any case.
  target_compile_options(mtm_options INTERFACE -fsanitize=thread -fno-omit-frame-pointer -Wno-tsan)
  target_link_options(mtm_options INTERFACE -fsanitize=thread)
endif()
