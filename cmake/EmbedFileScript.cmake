# Helper run by mtm_embed_file at build time: writes IN's bytes as a C++ string_view.
file(READ ${IN} content HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${content}")
file(WRITE ${OUT}
  "#include <string_view>\n"
  "namespace mtm::embedded {\n"
  "static const char kBytes[] = {${bytes} '\\0'};\n"
  "extern const std::string_view ${SYMBOL}(kBytes, sizeof(kBytes) - 1);\n"
  "}\n")
