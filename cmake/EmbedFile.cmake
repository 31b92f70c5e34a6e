# mtm_embed_file(TARGET file symbol): compiles `file` into TARGET as
# `extern const std::string_view symbol` (namespace mtm::embedded), rebuilt when the file changes.
function(mtm_embed_file target file symbol)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/embedded_${symbol}.cpp)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DIN=${file} -DOUT=${out} -DSYMBOL=${symbol}
            -P ${CMAKE_SOURCE_DIR}/cmake/EmbedFileScript.cmake
    DEPENDS ${file} ${CMAKE_SOURCE_DIR}/cmake/EmbedFileScript.cmake
    COMMENT "Embedding ${file} as ${symbol}")
  target_sources(${target} PRIVATE ${out})
endfunction()
