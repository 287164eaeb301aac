# simfuzz_add_program(): an unmodified C program as the nodes of a target.
#
# simfuzz_add_program(NAME <name> SOURCES <src>...
#                     ARGS <word>... [NODES <min> <max>]
#                     [INCLUDES <dir>...] [DEFINES <def>...]
#                     [COMPILE_OPTIONS <opt>...] [LIBRARIES <static lib>...]
#                     [CORPUS <dir>])
#
# Compiles SOURCES as they are (no #include of simfuzz's), links them and
# LIBRARIES (static archives, searched for what the sources need) into one
# relocatable object, and then:
#   - every reference to a call of simfuzz's table (harness/program/calls.h,
#     installed as program_calls.h) is renamed to simfuzz's model of it
#     (objcopy --redefine-syms), main included (sfp_main_<name>), and
#     everything else the program defines is made local, so that several
#     programs (versions of one, too) can share a binary;
#   - the writable globals (.data, .bss) are merged into one section,
#     sfp_globals_<name>, which each node keeps a copy of (thread-local variables
#     are refused at build time);
# and makes the same tools as simfuzz_add_target: bin/simfuzz-<name> and the
# seed corpus. Node k runs main() with ARGS, in which {node} is k, {nodes}
# the number of nodes and {addr:K} node K's address (10.0.0.K+1).
# See docs/programs.md.
function(simfuzz_add_program)
  cmake_parse_arguments(P "" "NAME;CORPUS;CLIENT"
    "SOURCES;INCLUDES;DEFINES;COMPILE_OPTIONS;LIBRARIES;ARGS;NODES" ${ARGN})
  if(P_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "simfuzz_add_program: unknown arguments: ${P_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT P_NAME MATCHES "^[A-Za-z0-9_]+$" OR NOT P_SOURCES)
    message(FATAL_ERROR "simfuzz_add_program: NAME (letters, digits, _) and SOURCES are required")
  endif()
  if(P_CLIENT)
    message(FATAL_ERROR "simfuzz_add_program(${P_NAME}): CLIENT is not supported yet")
  endif()
  set(name ${P_NAME})
  set(min 1)
  set(max 8)
  if(P_NODES)
    list(GET P_NODES 0 min)
    list(GET P_NODES 1 max)
  endif()
  get_property(calls GLOBAL PROPERTY SIMFUZZ_PROGRAM_CALLS)
  find_program(SIMFUZZ_OBJCOPY NAMES objcopy llvm-objcopy-14 llvm-objcopy)
  find_program(SIMFUZZ_READELF NAMES readelf llvm-readelf-14 llvm-readelf)
  if(NOT SIMFUZZ_OBJCOPY OR NOT SIMFUZZ_READELF OR NOT CMAKE_LINKER)
    message(FATAL_ERROR "simfuzz_add_program(${name}): needs ld, objcopy and readelf (binutils)")
  endif()
  set(dir ${CMAKE_BINARY_DIR}/simfuzz-targets)

  # the symbol map, from the one table
  # (the rows end in a backslash, which would escape CMake's list separator:
  # match the names in the whole text instead of reading lines)
  file(READ ${calls} text)
  string(REGEX MATCHALL "X\\([A-Za-z0-9_]+, (MODEL|REFUSE)," rows "${text}")
  set(map "")
  foreach(row ${rows})
    string(REGEX REPLACE "^X\\(([A-Za-z0-9_]+),.*" "\\1" sym "${row}")
    if(sym STREQUAL "main") # each program's own: several may share a binary
      string(APPEND map "main sfp_main_${name}\n")
    else()
      string(APPEND map "${sym} sfp_${sym}\n")
    endif()
  endforeach()
  file(WRITE ${dir}/${name}_syms.map.in "${map}")
  configure_file(${dir}/${name}_syms.map.in ${dir}/${name}_syms.map COPYONLY)
  # .data and .bss, not .data.rel.ro (constant once relocated), in a
  # section of this program's own
  file(WRITE ${dir}/${name}_globals.ld.in
    "SECTIONS\n{\n  sfp_globals_${name} : { *(.data .data.rel .data.rel.local "
    ".data.rel.local.* .data.[!r]* .bss .bss.* COMMON) }\n}\n")
  configure_file(${dir}/${name}_globals.ld.in ${dir}/${name}_globals.ld COPYONLY)

  # the program's objects, compiled as they are
  set(sources "")
  foreach(src ${P_SOURCES})
    get_filename_component(src ${src} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    list(APPEND sources ${src})
  endforeach()
  add_library(sfprog_${name} OBJECT ${sources})
  target_include_directories(sfprog_${name} PRIVATE ${P_INCLUDES})
  target_compile_definitions(sfprog_${name} PRIVATE ${P_DEFINES})
  target_compile_options(sfprog_${name} PRIVATE -UNDEBUG -fno-common ${P_COMPILE_OPTIONS})
  set(libs "")
  foreach(lib ${P_LIBRARIES}) # a static library target of the project, or an archive's path
    if(TARGET ${lib})
      list(APPEND libs $<TARGET_FILE:${lib}>)
    else()
      get_filename_component(lib ${lib} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
      list(APPEND libs ${lib})
    endif()
  endforeach()
  set(obj ${dir}/${name}_program.o)
  add_custom_command(OUTPUT ${obj}
    COMMAND ${CMAKE_LINKER} -r -T ${dir}/${name}_globals.ld -o ${obj}.tmp
            $<TARGET_OBJECTS:sfprog_${name}> ${libs}
    COMMAND ${CMAKE_COMMAND} -DREADELF=${SIMFUZZ_READELF} -DOBJ=${obj}.tmp -DNAME=${name}
            -P ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/program_check.cmake
    # its calls renamed; of what it defines only its main stays global
    COMMAND ${SIMFUZZ_OBJCOPY} --redefine-syms=${dir}/${name}_syms.map
            --keep-global-symbol=sfp_main_${name} ${obj}.tmp ${obj}
    DEPENDS sfprog_${name} $<TARGET_OBJECTS:sfprog_${name}> ${dir}/${name}_syms.map
            ${dir}/${name}_globals.ld ${libs}
    COMMENT "program ${name}: interposed object"
    COMMAND_EXPAND_LISTS VERBATIM)
  add_custom_target(sfprog_${name}_object DEPENDS ${obj})

  # the target file: the program's description and its sf_target
  set(args "")
  foreach(a ${P_ARGS})
    string(REPLACE "\\" "\\\\" a "${a}")
    string(REPLACE "\"" "\\\"" a "${a}")
    string(APPEND args "\"${a}\", ")
  endforeach()
  list(LENGTH P_ARGS nargs)
  file(WRITE ${dir}/${name}_program.c.in
    "/* generated by simfuzz_add_program(${name}) */\n"
    "#include <simfuzz/simfuzz.h>\n#include <simfuzz/simfuzz_program.h>\n\n"
    "int sfp_main_${name}(int argc, char **argv);\n"
    "extern unsigned char __start_sfp_globals_${name}[] __attribute__((weak));\n"
    "extern unsigned char __stop_sfp_globals_${name}[] __attribute__((weak));\n"
    "static const char *const args[] = {${args}NULL};\n"
    "static const sf_program program = {\"${name}\", sfp_main_${name},\n"
    "    __start_sfp_globals_${name}, __stop_sfp_globals_${name}, args, ${nargs}};\n"
    "static void *create(int nodes) {\n  return sf_program_create(&program, nodes);\n}\n"
    "const sf_target sf_target_${name} = {\n"
    "    .name = \"${name}\",\n    .summary = \"the program ${name}, unmodified\",\n"
    "    .min_nodes = ${min}, .max_nodes = ${max}, .default_nodes = ${min},\n"
    "    .create = create, .destroy = sf_program_destroy, .ops = &sf_program_ops,\n"
    "    .observe = sf_program_observe};\n")
  configure_file(${dir}/${name}_program.c.in ${dir}/${name}_program.c COPYONLY)
  set(corpus "")
  if(P_CORPUS)
    get_filename_component(c ${P_CORPUS} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    set(corpus CORPUS ${c})
  endif()
  simfuzz_add_target(NAME ${name} NO_FUZZERS SOURCES ${dir}/${name}_program.c
    LIBRARIES ${obj} ${corpus})
  add_dependencies(sftarget_${name} sfprog_${name}_object)
endfunction()
