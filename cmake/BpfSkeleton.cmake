# The BPF programs are built for x86-64: their vmlinux.h is that architecture's, and abit.bpf.c
# walks x86-64 page tables (its present, accessed and PSE bits, 4 or 5 levels).
if(NOT CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  message(FATAL_ERROR "mtm builds for x86-64 only, not ${CMAKE_SYSTEM_PROCESSOR}: its accessed-bit walker "
                      "(profiler/bpf/abit.bpf.c) reads x86-64 page-table entries and its vmlinux.h is x86-64's. "
                      "Porting means both, and a -D__TARGET_ARCH_ for the new architecture.")
endif()

# mtm_bpf_skeleton(TARGET NAME): compiles bpf/NAME.bpf.c (next to the calling CMakeLists.txt)
# with clang for the BPF target, generates NAME.skel.h with bpftool, and adds it to TARGET's
# include path. Headers: the checked-in bpf/vmlinux.h and libbpf's <bpf/...>.
function(mtm_bpf_skeleton target name)
  set(src ${CMAKE_CURRENT_SOURCE_DIR}/bpf/${name}.bpf.c)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/bpf)
  set(obj ${dir}/${name}.bpf.o)
  set(skel ${dir}/${name}.skel.h)
  file(GLOB headers ${CMAKE_CURRENT_SOURCE_DIR}/bpf/*.h)
  add_custom_command(
    OUTPUT ${skel}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${MTM_BPF_CLANG} -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Werror
            -I${CMAKE_CURRENT_SOURCE_DIR}/bpf -c ${src} -o ${obj}
    COMMAND ${MTM_BPFTOOL} gen skeleton ${obj} name ${name} > ${skel}
    DEPENDS ${src} ${headers}
    COMMENT "BPF ${name}: clang -target bpf, bpftool gen skeleton"
    VERBATIM)
  add_custom_target(${target}_${name}_skel DEPENDS ${skel})
  add_dependencies(${target} ${target}_${name}_skel)
  # The generated skeleton is C with casts our warnings flag: a system header to us.
  target_include_directories(${target} SYSTEM PRIVATE ${dir})
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/bpf)
endfunction()
