# simfuzz_add_program(): an unmodified C program as the nodes of a target.
#
# simfuzz_add_program(NAME <name> SOURCES <src>...
#                     ARGS <word>... [NODES <min> <max>]
#                     [INCLUDES <dir>...] [DEFINES <def>...]
#                     [COMPILE_OPTIONS <opt>...] [LIBRARIES <static lib>...]
#                     [CLIENT <file.c>] [CHECKS <file.c>...] [CORPUS <dir>]
#                     [CALL_COST_NS <ns>] [LIVENESS_MS <ms>]
#                     [VERSIONS <version>...])
#
# Compiles SOURCES as they are (unchanged: the one header simfuzz adds is
# program_atomics.h, forced in, below), links them and
# LIBRARIES (static archives, searched for what the sources need) into one
# relocatable object, and then:
#   - every reference to a call of simfuzz's table (harness/program/calls.h,
#     installed as program_calls.h) is renamed to simfuzz's model of it
#     (objcopy --redefine-syms), main included (sfp_main_<name>); a call
#     that the table neither models nor lists as pure goes to a stub that
#     fails the run naming it (cmake/program_check.cmake); and
#     everything else the program defines is made local, so that several
#     programs (versions of one, too) can share a binary;
#   - its sources are compiled with program_atomics.h forced in
#     (harness/program/atomics.h), so that each atomic operation they
#     spell (<stdatomic.h>, __atomic_*, __sync_*) is a switch point of the
#     node's threads;
#   - the writable globals (.data, .bss) are merged into one section,
#     sfp_globals_<name> (thread-local variables are refused at build time),
#     and the object is copied once per node (NODES' maximum; the client's
#     once per client node), main and that section renamed in each, so
#     that node k runs copy k on globals of its own;
# and makes the same tools as simfuzz_add_target: bin/simfuzz-<name>, the
# libFuzzer and AFL++ binaries (the program compiled for each, with its
# instrumentation) and the seed corpus. Node k runs main() with ARGS, in which {node} is k, {nodes}
# the number of nodes and {addr:K} node K's address (10.0.0.K+1).
# CLIENT: a C program of the user's (simfuzz_client.h) run on two client
# nodes after the servers, compiled and interposed the same way (with
# simfuzz's headers); it takes the scenario's client operations and records
# the history that the end check finds linearizable.
# CHECKS: C files of simfuzz's (not interposed: compiled as a target's
# sources are) that define the array `const sf_check sf_program_checks[]`,
# end checks run after the run's last event; they may read the nodes' files
# (sf_program_read_file, simfuzz_program.h).
# CALL_COST_NS: each call of the table the program makes costs it that much
# virtual time (0, the default: calls are free, and nothing counts them).
# LIVENESS_MS: the time within which the program promises liveness after
# every fault heals (its clients' timeouts and retries fit in it); a
# Liveness step's deadline is never shorter (sf_target.liveness_ms; 10 s
# when absent).
# VERSIONS: other builds of the program, each declared before by
# simfuzz_program_version(); SOURCES is version 0, the first of VERSIONS
# version 1, and so on. A scenario picks each node's starting version and
# may upgrade a node (stop it, restart it as another version on its files);
# each version is its own interposed object, with its own globals and
# copies, so that the versions share global names freely.
# See docs/programs.md.
function(simfuzz_add_program)
  cmake_parse_arguments(P "" "NAME;CORPUS;CLIENT;CALL_COST_NS;LIVENESS_MS"
    "SOURCES;INCLUDES;DEFINES;COMPILE_OPTIONS;LIBRARIES;ARGS;NODES;CHECKS;VERSIONS" ${ARGN})
  if(P_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "simfuzz_add_program: unknown arguments: ${P_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT P_NAME MATCHES "^[A-Za-z0-9_]+$" OR NOT P_SOURCES)
    message(FATAL_ERROR "simfuzz_add_program: NAME (letters, digits, _) and SOURCES are required")
  endif()
  set(name ${P_NAME})
  # the numeric options: 0 when absent
  foreach(opt cost:CALL_COST_NS:nanoseconds liveness:LIVENESS_MS:milliseconds)
    string(REPLACE ":" ";" opt ${opt})
    list(GET opt 0 var)
    list(GET opt 1 key)
    list(GET opt 2 unit)
    set(${var} 0)
    if(P_${key})
      if(NOT P_${key} MATCHES "^[0-9]+$")
        message(FATAL_ERROR "simfuzz_add_program(${name}): ${key} takes ${unit}")
      endif()
      set(${var} ${P_${key}})
    endif()
  endforeach()
  set(min 1)
  set(max 8)
  if(P_NODES)
    list(GET P_NODES 0 min)
    list(GET P_NODES 1 max)
  endif()
  find_program(SIMFUZZ_OBJCOPY NAMES objcopy llvm-objcopy-14 llvm-objcopy)
  find_program(SIMFUZZ_READELF NAMES readelf llvm-readelf-14 llvm-readelf)
  if(NOT SIMFUZZ_OBJCOPY OR NOT SIMFUZZ_READELF OR NOT CMAKE_LINKER)
    message(FATAL_ERROR "simfuzz_add_program(${name}): needs ld, objcopy and readelf (binutils)")
  endif()
  set(dir ${CMAKE_BINARY_DIR}/simfuzz-targets)
  set(clients 0)
  if(P_CLIENT)
    set(clients 2)
  endif()
  math(EXPR room "64 - ${clients}")
  if(min LESS 1 OR max LESS min OR max GREATER room)
    message(FATAL_ERROR "simfuzz_add_program(${name}): NODES ${min} ${max} out of 1..${room}")
  endif()
  list(LENGTH P_VERSIONS nversions)
  if(nversions GREATER 15)
    message(FATAL_ERROR "simfuzz_add_program(${name}): at most 15 VERSIONS besides SOURCES")
  endif()

  # each program of the target (the program, its other versions, its
  # client): its sources, libraries, include directories, definitions,
  # options and number of copies, in _sfp_<what>_<program>
  set(programs ${name})
  _simfuzz_program_sources(${name} "${P_SOURCES}" "${P_LIBRARIES}")
  set(_sfp_inc_${name} ${P_INCLUDES})
  set(_sfp_def_${name} ${P_DEFINES})
  set(_sfp_opt_${name} ${P_COMPILE_OPTIONS})
  set(_sfp_n_${name} ${max})
  foreach(v ${P_VERSIONS})
    get_property(known GLOBAL PROPERTY SIMFUZZ_VERSION_${v} SET)
    if(NOT known)
      message(FATAL_ERROR "simfuzz_add_program(${name}): VERSIONS ${v}: declare it first with "
        "simfuzz_program_version(${v} SOURCES ...)")
    endif()
    if(TARGET sfprog_${v})
      message(FATAL_ERROR "simfuzz_add_program(${name}): VERSIONS ${v}: another target holds it "
        "already; declare one version per target (its objects are the target's)")
    endif()
    foreach(what src libs inc def opt)
      get_property(_sfp_${what}_${v} GLOBAL PROPERTY SIMFUZZ_VERSION_${v}_${what})
    endforeach()
    set(_sfp_n_${v} ${max})
    list(APPEND programs ${v})
  endforeach()
  # the CLIENT: a program of its own (its globals, its main), which also
  # sees simfuzz's headers (simfuzz_client.h)
  if(P_CLIENT)
    set(client ${name}_client)
    _simfuzz_program_sources(${client} "${P_CLIENT}" "")
    set(_sfp_inc_${client} ${P_INCLUDES}
      $<TARGET_PROPERTY:simfuzz::harness,INTERFACE_INCLUDE_DIRECTORIES>)
    set(_sfp_def_${client} ${P_DEFINES})
    set(_sfp_opt_${client} ${P_COMPILE_OPTIONS})
    set(_sfp_n_${client} ${clients})
    list(APPEND programs ${client})
  endif()

  # .data and .bss, not .data.rel.ro (constant once relocated), in a
  # section of each program's own
  foreach(prog ${programs})
    file(WRITE ${dir}/${prog}_globals.ld.in
      "SECTIONS\n{\n  sfp_globals_${prog} : { *(.data .data.rel .data.rel.local "
      ".data.rel.local.* .data.[!r]* .bss .bss.* COMMON) }\n}\n")
    configure_file(${dir}/${prog}_globals.ld.in ${dir}/${prog}_globals.ld COPYONLY)
  endforeach()

  # one copy of each program per node (of the client per client node):
  # each with its own globals, so that switching nodes copies nothing
  set(obj "")
  set(decls "")
  foreach(prog ${programs})
    _simfuzz_program_object(${prog} "")
    list(APPEND obj ${_sfp_objs})
    _simfuzz_program_decl(${prog} ${_sfp_n_${prog}} decl)
    string(APPEND decls "${decl}")
  endforeach()
  set(client_decl "")
  set(client_ref "NULL, 0")
  if(P_CLIENT)
    string(CONCAT client_decl
      "static const char *const client_args[] = {\"client\", \"{node}\", \"{nodes}\", NULL};\n"
      "static const sf_program client = {\"${client}\", sfp_main_${client}_0,\n"
      "    __start_sfp_globals_${client}_0, __stop_sfp_globals_${client}_0, client_args, 3,\n"
      "    NULL, 0, ${client}_copies, ${clients}, 0, NULL, 0};\n")
    set(client_ref "&client, ${clients}")
  endif()

  # the target file: the program's description and its sf_target
  set(args "")
  foreach(a ${P_ARGS})
    string(REPLACE "\\" "\\\\" a "${a}")
    string(REPLACE "\"" "\\\"" a "${a}")
    string(APPEND args "\"${a}\", ")
  endforeach()
  list(LENGTH P_ARGS nargs)
  # the other versions: programs of their own, with this one's command line
  set(versions_decl "")
  set(versions_ref "NULL, 0")
  if(nversions GREATER 0)
    set(list "")
    foreach(v ${P_VERSIONS})
      string(APPEND versions_decl
        "static const sf_program version_${v} = {\"${v}\", sfp_main_${v}_0,\n"
        "    __start_sfp_globals_${v}_0, __stop_sfp_globals_${v}_0, args, ${nargs},\n"
        "    ${client_ref}, ${v}_copies, ${max}, ${cost}, NULL, 0};\n")
      string(APPEND list "&version_${v}, ")
    endforeach()
    string(APPEND versions_decl "static const sf_program *const versions[] = {${list}};\n")
    set(versions_ref "versions, ${nversions}")
  endif()
  math(EXPR target_versions "${nversions} + 1")
  # the end checks: the history's, then the user's CHECKS (each its own
  # call site, so failures stay apart)
  set(end_checks sf_program_end_checks)
  set(checks_decl "")
  set(checks_src "")
  if(P_CHECKS)
    set(end_checks end_checks)
    string(CONCAT checks_decl
      "extern const sf_check sf_program_checks[]; /* CHECKS */\n"
      "static void user_checks(void *ctx, sim_world *w) {\n"
      "  for (const sf_check *k = sf_program_checks; k->fn && !sim_failed(w); k++)\n"
      "    k->fn(ctx, w);\n}\n"
      "static const sf_check end_checks[] = {\n"
      "    {\"linearizable\", sf_program_check_history}, {\"checks\", user_checks}, {NULL, NULL}};\n")
    foreach(f ${P_CHECKS})
      get_filename_component(f ${f} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
      list(APPEND checks_src ${f})
    endforeach()
  endif()
  file(WRITE ${dir}/${name}_program.c.in
    "/* generated by simfuzz_add_program(${name}) */\n"
    "#include <simfuzz/simfuzz.h>\n#include <simfuzz/simfuzz_program.h>\n\n"
    "${decls}"
    "${client_decl}"
    "static const char *const args[] = {${args}NULL};\n"
    "${versions_decl}"
    "static const sf_program program = {\"${name}\", sfp_main_${name}_0,\n"
    "    __start_sfp_globals_${name}_0, __stop_sfp_globals_${name}_0, args, ${nargs},\n"
    "    ${client_ref}, ${name}_copies, ${max}, ${cost}, ${versions_ref}};\n"
    "static void *create(int nodes) {\n  return sf_program_create(&program, nodes);\n}\n"
    "${checks_decl}"
    "const sf_target sf_target_${name} = {\n"
    "    .name = \"${name}\",\n    .summary = \"the program ${name}, unmodified\",\n"
    "    .min_nodes = ${min}, .max_nodes = ${max}, .default_nodes = ${min},\n"
    "    .create = create, .destroy = sf_program_destroy, .ops = &sf_program_ops,\n"
    "    .observe = sf_program_observe, .workload = sf_program_workload,\n"
    "    .end_checks = ${end_checks}, .live = sf_program_live,\n"
    "    .client_nodes = ${clients}, .liveness_ms = ${liveness},\n"
    "    .versions = ${target_versions}, .exclusive = 1};\n")
  configure_file(${dir}/${name}_program.c.in ${dir}/${name}_program.c COPYONLY)
  set(corpus "")
  if(P_CORPUS)
    get_filename_component(c ${P_CORPUS} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    set(corpus CORPUS ${c})
  endif()
  simfuzz_add_target(NAME ${name} SOURCES ${dir}/${name}_program.c ${checks_src} ${corpus})
  # each binary links the programs compiled its own way
  target_link_libraries(sftarget_${name} INTERFACE ${obj})
  foreach(prog ${programs})
    add_dependencies(sftarget_${name} sfprog_${prog}_object)
  endforeach()
  if(TARGET sftarget_${name}_isolated)
    target_link_libraries(sftarget_${name}_isolated INTERFACE ${obj})
  endif()
  foreach(flavour _libfuzzer _afl)
    if(flavour STREQUAL "_libfuzzer")
      set(bin ${name}_fuzzer)
    else()
      set(bin ${name}_afl)
    endif()
    if(NOT TARGET ${bin})
      continue()
    endif()
    foreach(prog ${programs})
      _simfuzz_program_object(${prog} ${flavour})
      if(flavour STREQUAL "_libfuzzer")
        get_target_property(core ${bin} LINK_LIBRARIES)
        list(FILTER core INCLUDE REGEX "^simfuzz::libfuzzer")
        target_link_libraries(sfprog_${prog}_libfuzzer PRIVATE ${core})
      else()
        get_target_property(launcher ${bin} C_COMPILER_LAUNCHER)
        set_target_properties(sfprog_${prog}_afl PROPERTIES SIMFUZZ_UNSANITIZED ON
          C_COMPILER_LAUNCHER "${launcher}")
      endif()
      target_link_libraries(${bin} PRIVATE ${_sfp_objs})
      add_dependencies(${bin} sfprog_${prog}${flavour}_object)
    endforeach()
  endforeach()
endfunction()

# simfuzz_program_version(<version> SOURCES <src>... [INCLUDES <dir>...]
#                         [DEFINES <def>...] [COMPILE_OPTIONS <opt>...]
#                         [LIBRARIES <static lib>...])
# Declares another build of a program, for simfuzz_add_program's VERSIONS:
# its sources (another checkout, or the same files with other definitions)
# and what they compile with, as simfuzz_add_program's own arguments. The
# name (letters, digits, _) is the version's in timelines and the prefix of
# its objects' symbols: one declaration per name.
function(simfuzz_program_version v)
  cmake_parse_arguments(V "" "" "SOURCES;INCLUDES;DEFINES;COMPILE_OPTIONS;LIBRARIES" ${ARGN})
  if(V_UNPARSED_ARGUMENTS OR NOT v MATCHES "^[A-Za-z0-9_]+$" OR NOT V_SOURCES)
    message(FATAL_ERROR "simfuzz_program_version(${v}): a name (letters, digits, _) and SOURCES")
  endif()
  get_property(known GLOBAL PROPERTY SIMFUZZ_VERSION_${v} SET)
  if(known)
    message(FATAL_ERROR "simfuzz_program_version(${v}): declared twice")
  endif()
  set_property(GLOBAL PROPERTY SIMFUZZ_VERSION_${v} ON)
  # the paths as this directory names them; simfuzz_add_program reads each
  # property back as the version's _sfp_<what>_<v>
  _simfuzz_program_sources(${v} "${V_SOURCES}" "${V_LIBRARIES}")
  set(_sfp_inc_${v} "")
  foreach(d ${V_INCLUDES})
    get_filename_component(d ${d} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    list(APPEND _sfp_inc_${v} ${d})
  endforeach()
  set(_sfp_def_${v} ${V_DEFINES})
  set(_sfp_opt_${v} ${V_COMPILE_OPTIONS})
  foreach(what src libs inc def opt)
    set_property(GLOBAL PROPERTY SIMFUZZ_VERSION_${v}_${what} ${_sfp_${what}_${v}})
  endforeach()
endfunction()

# _simfuzz_program_sources(PROG SOURCES LIBS): PROG's sources as absolute
# paths in _sfp_src_<PROG>, its libraries (a static library target of the
# project, or an archive's path) as files in _sfp_libs_<PROG>. A macro:
# it sets the caller's variables.
macro(_simfuzz_program_sources prog psources plibs)
  set(_sfp_src_${prog} "")
  foreach(_f ${psources})
    get_filename_component(_f ${_f} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    list(APPEND _sfp_src_${prog} ${_f})
  endforeach()
  set(_sfp_libs_${prog} "")
  foreach(_l ${plibs})
    if(TARGET ${_l})
      list(APPEND _sfp_libs_${prog} $<TARGET_FILE:${_l}>)
    else()
      get_filename_component(_l ${_l} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
      list(APPEND _sfp_libs_${prog} ${_l})
    endif()
  endforeach()
endmacro()

# _simfuzz_program_object(PROG FLAVOUR): the OBJECT library
# sfprog_<PROG><FLAVOUR> of the program's sources and the interposed
# relocatable object simfuzz-targets/<PROG><FLAVOUR>_program.o made of it
# (target sfprog_<PROG><FLAVOUR>_object), for one binary flavour ("" for the
# command line, _libfuzzer, _afl); its copies in _sfp_objs. A macro: it
# uses the caller's _sfp_*_<PROG>, name, cost and dir.
macro(_simfuzz_program_object pname flavour)
  set(_t sfprog_${pname}${flavour})
  set(_o ${dir}/${pname}${flavour}_program.o)
  # its copies: main and the globals section renamed, everything else is
  # local already
  set(_sfp_objs "")
  set(_copy_cmds "")
  math(EXPR _last "${_sfp_n_${pname}} - 1")
  foreach(_j RANGE ${_last})
    list(APPEND _sfp_objs ${dir}/${pname}${flavour}_program_${_j}.o)
    list(APPEND _copy_cmds COMMAND ${SIMFUZZ_OBJCOPY}
      --redefine-sym sfp_main_${pname}=sfp_main_${pname}_${_j}
      --rename-section sfp_globals_${pname}=sfp_globals_${pname}_${_j} ${_o}
      ${dir}/${pname}${flavour}_program_${_j}.o)
  endforeach()
  add_library(${_t} OBJECT ${_sfp_src_${pname}})
  target_include_directories(${_t} PRIVATE ${_sfp_inc_${pname}})
  target_compile_definitions(${_t} PRIVATE ${_sfp_def_${pname}})
  # (program_atomics.h, forced in: its atomic operations become switch points)
  get_property(_atomics GLOBAL PROPERTY SIMFUZZ_PROGRAM_ATOMICS)
  target_compile_options(${_t} PRIVATE -UNDEBUG -fno-common -include ${_atomics}
    ${_sfp_opt_${pname}})
  get_property(_calls GLOBAL PROPERTY SIMFUZZ_PROGRAM_CALLS)
  set(_cost_flag "")
  if(NOT "${pname}" STREQUAL "${name}_client" AND NOT cost EQUAL 0) # the servers' calls
    set(_cost_flag -DCOST=1)
  endif()
  add_custom_command(OUTPUT ${_o} ${_sfp_objs}
    COMMAND ${CMAKE_LINKER} -r -T ${dir}/${pname}_globals.ld -o ${_o}.tmp
            $<TARGET_OBJECTS:${_t}> ${_sfp_libs_${pname}}
    # the map of its calls and the stubs of the ones it may not make
    COMMAND ${CMAKE_COMMAND} -DREADELF=${SIMFUZZ_READELF} -DNM=${CMAKE_NM} -DCALLS=${_calls}
            -DOBJ=${_o}.tmp -DNAME=${pname} -DMAP=${_o}.map -DSTUBS=${_o}.stubs.s ${_cost_flag}
            -P ${_simfuzz_program_dir}/program_check.cmake
    # its calls renamed, the refused ones bound to their stubs, and of what
    # it defines only its main left global; no COMDAT groups, which the
    # final link would merge with another program's of the same name (a
    # coverage build's counters of an inline atoi in a server and its
    # client) while this object's now local references still point at them
    COMMAND ${SIMFUZZ_OBJCOPY} --redefine-syms=${_o}.map ${_o}.tmp ${_o}.tmp2
    COMMAND ${CMAKE_C_COMPILER} -c ${_o}.stubs.s -o ${_o}.stubs.o
    COMMAND ${CMAKE_LINKER} -r -o ${_o}.tmp3 ${_o}.tmp2 ${_o}.stubs.o
    # and its destructors dropped: they would run at the host process's
    # exit, outside any node (libuv's shutdown joins its thread pool)
    COMMAND ${SIMFUZZ_OBJCOPY} --keep-global-symbol=sfp_main_${pname} --remove-section=.group
            --remove-section=.fini_array --remove-section=.rela.fini_array
            --remove-section=.dtors --remove-section=.rela.dtors ${_o}.tmp3 ${_o}
    ${_copy_cmds}
    DEPENDS ${_t} $<TARGET_OBJECTS:${_t}> ${_calls} ${dir}/${pname}_globals.ld
            ${_sfp_libs_${pname}} ${_simfuzz_program_dir}/program_check.cmake
    COMMENT "program ${pname}${flavour}: interposed object"
    COMMAND_EXPAND_LISTS VERBATIM)
  add_custom_target(${_t}_object DEPENDS ${_o} ${_sfp_objs})
endmacro()

# _simfuzz_program_decl(PROG N OUT): in OUT, the C declarations of the N
# copies of PROG's object and the array PROG_copies that lists them.
function(_simfuzz_program_decl prog n out)
  set(text "")
  set(list "")
  math(EXPR last "${n} - 1")
  foreach(j RANGE ${last})
    string(APPEND text "int sfp_main_${prog}_${j}(int argc, char **argv);\n"
      "extern unsigned char __start_sfp_globals_${prog}_${j}[] __attribute__((weak));\n"
      "extern unsigned char __stop_sfp_globals_${prog}_${j}[] __attribute__((weak));\n")
    string(APPEND list "    {sfp_main_${prog}_${j}, __start_sfp_globals_${prog}_${j}, "
      "__stop_sfp_globals_${prog}_${j}},\n")
  endforeach()
  string(APPEND text "static const sf_program_copy ${prog}_copies[] = {\n${list}};\n")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()
set(_simfuzz_program_dir ${CMAKE_CURRENT_LIST_DIR})
