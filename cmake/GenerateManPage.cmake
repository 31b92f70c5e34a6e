# cmake -P: one program's man page by help2man, from its --help and --version. A program with
# subcommands (CLI11's "Subcommands:" list) gets a COMMANDS section with each one's --help, two
# levels deep (mtmctl config check). Inputs: HELP2MAN PROGRAM NAME SECTION DESCRIPTION SEE_ALSO
# OUTPUT.

# The names in a CLI11 help text's "Subcommands:" list.
function(subcommands_of out)
  execute_process(COMMAND ${PROGRAM} ${ARGN} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} ${ARGN} --help failed (${rc})")
  endif()
  set(names "")
  set(inside FALSE)
  string(REPLACE "\n" ";" lines "${help}")
  foreach(line IN LISTS lines)
    if(line STREQUAL "Subcommands:")
      set(inside TRUE)
    elseif(inside AND line MATCHES "^  ([a-z][a-z0-9-]*) ")
      list(APPEND names "${CMAKE_MATCH_1}")
    elseif(inside AND NOT line MATCHES "^ ")
      set(inside FALSE)
    endif()
  endforeach()
  set(${out} "${names}" PARENT_SCOPE)
endfunction()

# roff for one subcommand's help: a subsection with the text as it prints.
function(append_command_help out)
  execute_process(COMMAND ${PROGRAM} ${ARGN} --help OUTPUT_VARIABLE help)
  string(REPLACE "\\" "\\e" help "${help}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" help "${help}")
  string(REPLACE ";" " " words "${NAME} ${ARGN}")
  set(${out} "${${out}}.SS \"${words}\"\n.nf\n${help}.fi\n" PARENT_SCOPE)
endfunction()

set(include "${OUTPUT}.h2m")
set(commands "")
subcommands_of(top)
foreach(sub IN LISTS top)
  append_command_help(commands ${sub})
  subcommands_of(inner ${sub})
  foreach(leaf IN LISTS inner)
    append_command_help(commands ${sub} ${leaf})
  endforeach()
endforeach()
set(text "")
if(commands)
  string(APPEND text "[COMMANDS]\nEach command's own --help:\n${commands}\n")
endif()
string(APPEND text "[SEE ALSO]\n${SEE_ALSO}\n")
file(WRITE "${include}" "${text}")

execute_process(COMMAND ${HELP2MAN} --no-info --no-discard-stderr --section=${SECTION} --name=${DESCRIPTION}
                        --include=${include} --output=${OUTPUT} ${PROGRAM}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man ${PROGRAM} failed (${rc})")
endif()
