# Man pages, made at build time and installed, gzipped as Debian wants, under MANDIR with their
# program's package:
# help2man from each program's --help and --version (cmake/GenerateManPage.cmake), and pandoc
# for mtm.yaml(5) from docs/config.md (its tables as lists: docs/man/tables-as-lists.lua).
find_program(HELP2MAN help2man)
mtm_require(HELP2MAN "help2man" help2man)
find_program(PANDOC pandoc)
mtm_require(PANDOC "pandoc" pandoc)

set(MTM_MAN_SEE_ALSO "mtmd(8), mtmctl(1), mtm.yaml(5), cxlccl-pool(1), cxlccl-perf(1) and the guides in ${CMAKE_INSTALL_FULL_DOCDIR}")

function(mtm_man_page target section component description)
  set(page ${CMAKE_BINARY_DIR}/man/${target}.${section})
  add_custom_command(OUTPUT ${page} ${page}.gz
    # A sanitizer build's programs run here too: its leak report at exit is not --help's business.
    COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=0 ${CMAKE_COMMAND} -DHELP2MAN=${HELP2MAN} -DPROGRAM=$<TARGET_FILE:${target}> -DNAME=${target}
            -DSECTION=${section} -DDESCRIPTION=${description} -DSEE_ALSO=${MTM_MAN_SEE_ALSO}
            -DOUTPUT=${page} -P ${PROJECT_SOURCE_DIR}/cmake/GenerateManPage.cmake
    COMMAND gzip -9nf --keep ${page}
    DEPENDS ${target} ${PROJECT_SOURCE_DIR}/cmake/GenerateManPage.cmake
    COMMENT "Man page ${target}(${section})" VERBATIM)
  add_custom_target(${target}-man ALL DEPENDS ${page}.gz)
  install(FILES ${page}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section} COMPONENT ${component})
endfunction()

# mtm.yaml(5): docs/config.md under a NAME section (its own title becomes the page's).
function(mtm_config_man_page)
  set(page ${CMAKE_BINARY_DIR}/man/mtm.yaml.5)
  set(source ${PROJECT_SOURCE_DIR}/docs/config.md)
  add_custom_command(OUTPUT ${page} ${page}.gz
    COMMAND ${PANDOC} --from markdown-smart --standalone --to man --shift-heading-level-by=-1
            --metadata title=MTM.YAML --metadata section=5 --metadata header=mtm
            --metadata footer=mtm\ ${PROJECT_VERSION} --lua-filter=${PROJECT_SOURCE_DIR}/docs/man/tables-as-lists.lua
            --output ${page}
            ${PROJECT_SOURCE_DIR}/docs/man/mtm.yaml-name.md ${source}
    COMMAND gzip -9nf --keep ${page}
    DEPENDS ${source} ${PROJECT_SOURCE_DIR}/docs/man/mtm.yaml-name.md ${PROJECT_SOURCE_DIR}/docs/man/tables-as-lists.lua
    COMMENT "Man page mtm.yaml(5)" VERBATIM)
  add_custom_target(mtm.yaml-man ALL DEPENDS ${page}.gz)
  install(FILES ${page}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man5 COMPONENT mtm)
endfunction()
