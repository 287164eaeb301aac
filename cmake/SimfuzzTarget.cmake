# simfuzz_add_target(): turn a system under test into simfuzz's tools.
# Used in simfuzz's own tree and, installed, by outside projects through
# find_package(simfuzz CONFIG REQUIRED) or add_subdirectory(simfuzz).
#
# simfuzz_add_target(NAME <name> SOURCES <src>...
#                    [INCLUDES <dir>...] [DEFINES <def>...]
#                    [COMPILE_OPTIONS <opt>...] [LIBRARIES <lib>...]
#                    [CORPUS <dir>] [DICT <file>] [ROUTE <function>...]
#                    [KEEP_NDEBUG] [NO_ASSERT_HOOK] [SANITIZED_CORE] [NO_FUZZERS])
#
# Relative paths are relative to the calling CMakeLists.txt. Builds, in the
# calling project's build directory:
#   bin/simfuzz-<name>      the command line of this target (replay,
#                           minimize, sweep, triage, ...); bin/simfuzz
#                           dispatches to it: simfuzz --target <name> ...
#   fuzz/<name>_fuzzer      libFuzzer (clang), ASan+UBSan on the target's code
#   fuzz/<name>_afl         AFL++ persistent mode (when afl-clang-fast exists)
#   fuzz/<name>.dict        the scenario format's dictionary (+ DICT)
#   corpus/<name>/*.pb      the seed corpus: CORPUS/*.textproto encoded and
#                           CORPUS/*.pb copied, kept in step at every build
#   sftarget_<name>         an OBJECT library of the target (for tests)
#
# Every one of them compiles SOURCES with the same INCLUDES, DEFINES and
# COMPILE_OPTIONS and links LIBRARIES; the fuzzers add only their engine's
# instrumentation. The target's sources keep their assert()s in every build
# (-UNDEBUG after the build type's -DNDEBUG: a library's assertions are
# oracles) unless KEEP_NDEBUG is given, and a failed assertion is a failure
# of the run like a failed invariant: named "assert", at the assertion's
# file and line, on the node whose code was running, with the trace hash of
# that moment, the same in every binary (calls to glibc's __assert_fail are
# routed to simfuzz with -Wl,--wrap; NO_ASSERT_HOOK leaves them alone, and
# an assertion then aborts the process like any crash, which the campaign
# tools survive). SF_TARGET_NAME and SF_TARGET_SYMBOL
# are defined for the sources (see simfuzz.h). ROUTE lists C library
# functions (rand, srand, random, srandom, time, gettimeofday,
# clock_gettime, getrandom) whose calls from the target's code and its
# statically linked libraries are redirected into the simulator
# (simfuzz_libc.h). SANITIZED_CORE sanitizes the simulator and harness in
# the libFuzzer build too (for targets whose crashes may be simfuzz's own).
# NO_FUZZERS builds the command line and the seed corpus only.
include_guard(GLOBAL)
include(CheckCCompilerFlag)

# Releases before 0.6 installed the public headers flat, and targets
# included them by their bare names ("simfuzz.h"). They still build (the
# headers' directory is searched last), but a project's own header of the
# same name wins: say so once per target, at configure time, where a
# -Werror build cannot turn the note into an error. A bare name that the
# source's directory, INCLUDES or the LIBRARIES' include directories
# provide is the project's own.
function(_simfuzz_note_bare_includes name)
  cmake_parse_arguments(A "" "" "SOURCES;INCLUDES;LIBRARIES" ${ARGN})
  foreach(lib ${A_LIBRARIES})
    if(TARGET ${lib})
      get_target_property(dirs ${lib} INTERFACE_INCLUDE_DIRECTORIES)
      foreach(d ${dirs})
        if(d AND NOT d MATCHES "\\$<")
          list(APPEND A_INCLUDES ${d})
        endif()
      endforeach()
    endif()
  endforeach()
  get_property(names GLOBAL PROPERTY SIMFUZZ_HEADER_NAMES)
  if(NOT names)
    return()
  endif()
  string(REPLACE ";" "|" bare "${names}")
  foreach(src ${A_SOURCES})
    if(src MATCHES "^\\$<" OR NOT EXISTS ${src})
      continue()
    endif()
    get_filename_component(dir ${src} DIRECTORY)
    file(STRINGS ${src} hits REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<](${bare})\\.h[\">]")
    foreach(hit ${hits})
      string(REGEX REPLACE ".*[\"<]([a-z_]+)\\.h.*" "\\1" header "${hit}")
      set(own OFF)
      foreach(d ${dir} ${A_INCLUDES})
        get_filename_component(d ${d} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
        if(EXISTS ${d}/${header}.h)
          set(own ON)
        endif()
      endforeach()
      if(NOT own)
        string(STRIP "${hit}" hit)
        message(DEPRECATION "simfuzz_add_target(${name}): ${src}: '${hit}': the bare name is "
          "deprecated; include <simfuzz/${header}.h>")
        return()
      endif()
    endforeach()
  endforeach()
endfunction()

function(simfuzz_add_target)
  cmake_parse_arguments(T "KEEP_NDEBUG;NO_ASSERT_HOOK;SANITIZED_CORE;NO_FUZZERS" "NAME;CORPUS;DICT"
    "SOURCES;INCLUDES;DEFINES;COMPILE_OPTIONS;LIBRARIES;ROUTE" ${ARGN})
  if(T_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "simfuzz_add_target: unknown arguments: ${T_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT T_NAME MATCHES "^[A-Za-z0-9_]+$")
    message(FATAL_ERROR "simfuzz_add_target: NAME '${T_NAME}' must be letters, digits and _")
  endif()
  if(NOT T_SOURCES)
    message(FATAL_ERROR "simfuzz_add_target(${T_NAME}): SOURCES is required")
  endif()
  set(name ${T_NAME})
  set(sources "")
  foreach(src ${T_SOURCES})
    if(NOT src MATCHES "^\\$<")
      get_filename_component(src ${src} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    endif()
    list(APPEND sources ${src})
  endforeach()
  _simfuzz_note_bare_includes(${T_NAME} SOURCES ${sources} INCLUDES ${T_INCLUDES}
    LIBRARIES ${T_LIBRARIES})
  get_property(afl_cc GLOBAL PROPERTY SIMFUZZ_AFL_CC)
  get_property(launcher GLOBAL PROPERTY SIMFUZZ_AFL_LAUNCHER)
  get_property(base_dict GLOBAL PROPERTY SIMFUZZ_DICT)
  get_property(sync GLOBAL PROPERTY SIMFUZZ_SYNC_CORPUS)
  get_property(protoc GLOBAL PROPERTY SIMFUZZ_PROTOC)
  get_property(proto_dir GLOBAL PROPERTY SIMFUZZ_PROTO_DIR)
  get_property(engine GLOBAL PROPERTY SIMFUZZ_ENGINE)

  # ---- how the system under test is compiled: one definition for all ----
  set(sut simfuzz_sut_${name})
  add_library(${sut} INTERFACE)
  target_include_directories(${sut} INTERFACE ${T_INCLUDES})
  target_compile_definitions(${sut} INTERFACE SF_TARGET_NAME="${name}"
    SF_TARGET_SYMBOL=sf_target_${name} ${T_DEFINES})
  if(NOT T_KEEP_NDEBUG)
    target_compile_options(${sut} INTERFACE -UNDEBUG)
  endif()
  # How every binary of the target links, in a library of its own that
  # each binary links directly: link options reach a binary through
  # $<LINK_ONLY:...> only under policy CMP0099 NEW, which a caller's old
  # cmake_minimum_required() leaves OLD, so no option may travel that way.
  set(sutlink simfuzz_sutlink_${name})
  add_library(${sutlink} INTERFACE)
  target_link_libraries(${sutlink} INTERFACE ${T_LIBRARIES})
  target_link_libraries(${sut} INTERFACE ${sutlink})
  # a failed assert() in the target or a library linked statically into it
  # becomes the run's failure, with its site, node, time and trace hash
  if(NOT T_NO_ASSERT_HOOK)
    target_link_options(${sutlink} INTERFACE -Wl,--wrap=__assert_fail)
  endif()
  # check sites named relative to the project (src/x.c:42), so one bug found
  # from two checkouts is one signature
  check_c_compiler_flag(-fmacro-prefix-map=/a=/b SIMFUZZ_HAVE_MACRO_PREFIX_MAP)
  if(SIMFUZZ_HAVE_MACRO_PREFIX_MAP)
    target_compile_options(${sut} INTERFACE -fmacro-prefix-map=${CMAKE_SOURCE_DIR}/=)
  endif()
  target_compile_options(${sut} INTERFACE ${T_COMPILE_OPTIONS})
  set(routable rand srand random srandom time gettimeofday clock_gettime getrandom)
  foreach(fn ${T_ROUTE})
    if(NOT fn IN_LIST routable)
      message(FATAL_ERROR "simfuzz_add_target(${name}): ROUTE ${fn}: not one of ${routable}")
    endif()
    target_link_options(${sutlink} INTERFACE -Wl,--wrap=${fn})
  endforeach()

  # the stub naming the target of a binary (sf_this_target)
  set(stub ${CMAKE_BINARY_DIR}/simfuzz-targets/${name}_stub.c)
  file(WRITE ${stub}.in
    "/* generated by simfuzz_add_target(${name}) */\n"
    "#include \"simfuzz_runner.h\"\n"
    "extern const sf_target sf_target_${name};\n"
    "const sf_target *const sf_this_target = &sf_target_${name};\n")
  configure_file(${stub}.in ${stub} COPYONLY)

  # ---- plain: the target as objects (tests) and its command line ----
  add_library(sftarget_${name} OBJECT ${sources})
  # users of the objects get their link needs, not the target's defines
  target_link_libraries(sftarget_${name} PRIVATE ${sut} INTERFACE ${sutlink}
    PUBLIC simfuzz::harness)
  add_executable(simfuzz-${name} ${stub})
  target_link_libraries(simfuzz-${name} PRIVATE sftarget_${name} ${sutlink} simfuzz::cli)
  set_target_properties(simfuzz-${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)

  # ---- isolated: the target's objects linked into one relocatable object
  # in which only sf_target_<name> stays global, so that one program can
  # hold several targets, two variants of one library included (tests,
  # benchmarks). Link sftarget_<name>_isolated. ----
  find_program(SIMFUZZ_OBJCOPY NAMES objcopy llvm-objcopy-14 llvm-objcopy)
  if(SIMFUZZ_OBJCOPY AND CMAKE_LINKER)
    set(iso ${CMAKE_BINARY_DIR}/simfuzz-targets/${name}_isolated.o)
    add_custom_command(OUTPUT ${iso}
      COMMAND ${CMAKE_LINKER} -r -o ${iso} $<TARGET_OBJECTS:sftarget_${name}>
      COMMAND ${SIMFUZZ_OBJCOPY} --keep-global-symbol=sf_target_${name} ${iso}
      DEPENDS sftarget_${name} $<TARGET_OBJECTS:sftarget_${name}>
      COMMAND_EXPAND_LISTS VERBATIM)
    add_custom_target(sftarget_${name}_isolate DEPENDS ${iso})
    add_library(sftarget_${name}_isolated INTERFACE)
    add_dependencies(sftarget_${name}_isolated sftarget_${name}_isolate)
    target_link_libraries(sftarget_${name}_isolated INTERFACE ${iso} ${sutlink} simfuzz::harness)
  endif()

  # ---- libFuzzer ----
  if(NOT T_NO_FUZZERS AND TARGET simfuzz::libfuzzer AND CMAKE_C_COMPILER_ID MATCHES "Clang")
    add_executable(${name}_fuzzer ${stub} ${sources})
    if(T_SANITIZED_CORE)
      target_link_libraries(${name}_fuzzer PRIVATE ${sut} ${sutlink} simfuzz::libfuzzer_san)
    else()
      target_link_libraries(${name}_fuzzer PRIVATE ${sut} ${sutlink} simfuzz::libfuzzer)
    endif()
    set_target_properties(${name}_fuzzer PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fuzz)
    if(engine)
      set_target_properties(${name}_fuzzer PROPERTIES LINKER_LANGUAGE CXX)
    endif()
    set_property(GLOBAL APPEND PROPERTY SIMFUZZ_FUZZERS ${name}_fuzzer)
  endif()

  # ---- AFL++: the same compilation through afl-clang-fast ----
  if(NOT T_NO_FUZZERS AND TARGET simfuzz::afl AND afl_cc)
    add_executable(${name}_afl ${stub} ${sources})
    target_link_libraries(${name}_afl PRIVATE ${sut} ${sutlink} simfuzz::afl)
    set_target_properties(${name}_afl PROPERTIES SIMFUZZ_UNSANITIZED ON
      C_COMPILER_LAUNCHER "sh;${launcher};${afl_cc}" C_LINKER_LAUNCHER "sh;${launcher};${afl_cc}"
      RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fuzz)
  endif()

  # ---- seed corpus and dictionary ----
  if(T_CORPUS)
    get_filename_component(corpus ${T_CORPUS} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    if(NOT IS_DIRECTORY ${corpus})
      message(FATAL_ERROR "simfuzz_add_target(${name}): CORPUS ${corpus} is not a directory")
    endif()
  else()
    set(corpus ${CMAKE_CURRENT_SOURCE_DIR}/corpus/${name})
  endif()
  set(dict ${CMAKE_BINARY_DIR}/fuzz/${name}.dict)
  set(dict_in ${base_dict})
  if(T_DICT)
    get_filename_component(extra ${T_DICT} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    list(APPEND dict_in ${extra})
  endif()
  add_custom_command(
    OUTPUT ${dict}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/fuzz
    COMMAND ${CMAKE_COMMAND} -E cat ${dict_in} > ${dict}
    DEPENDS ${dict_in})
  # Runs at every build: a seed added or removed since CMake last ran shows
  # at once, and encoded seeds whose source is gone are removed.
  if(protoc)
    set(encoder -DPROTOC=${protoc} -DPROTO_DIR=${proto_dir})
  else()
    set(encoder -DENCODER=$<TARGET_FILE:simfuzz::simfuzz>)
  endif()
  add_custom_target(${name}_seeds ALL
    COMMAND ${CMAKE_COMMAND} -DSRC=${corpus} -DOUT=${CMAKE_BINARY_DIR}/corpus/${name}
            ${encoder} -P ${sync}
    DEPENDS ${dict}
    COMMENT "seed corpus of ${name}" VERBATIM)
  get_target_property(dispatcher simfuzz::simfuzz ALIASED_TARGET)
  if(dispatcher AND NOT protoc)
    add_dependencies(${name}_seeds ${dispatcher})
  endif()

  # every fuzzer with its seeds and dictionary (what an OSS-Fuzz build needs)
  if(NOT TARGET simfuzz_fuzzers)
    add_custom_target(simfuzz_fuzzers)
  endif()
  if(TARGET ${name}_fuzzer)
    add_dependencies(simfuzz_fuzzers ${name}_fuzzer ${name}_seeds)
  endif()
  set_property(GLOBAL APPEND PROPERTY SIMFUZZ_TARGETS ${name})
  _simfuzz_tools_in_build()
endfunction()

# An installed simfuzz: copy the dispatcher and the AFL++ mutator into this
# build (bin/simfuzz next to bin/simfuzz-<t>, fuzz/libsimfuzz_mutator.so),
# where simfuzz --target finds the per-target tools. In simfuzz's own tree
# and with add_subdirectory() they are built there directly.
function(_simfuzz_tools_in_build)
  get_property(done GLOBAL PROPERTY SIMFUZZ_TOOLS_COPIED)
  get_target_property(imported simfuzz::simfuzz IMPORTED)
  if(done OR NOT imported)
    return()
  endif()
  set_property(GLOBAL PROPERTY SIMFUZZ_TOOLS_COPIED ON)
  set(cmds COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/bin ${CMAKE_BINARY_DIR}/fuzz
    COMMAND ${CMAKE_COMMAND} -E copy_if_different $<TARGET_FILE:simfuzz::simfuzz>
            ${CMAKE_BINARY_DIR}/bin/simfuzz)
  if(TARGET simfuzz::mutator)
    list(APPEND cmds COMMAND ${CMAKE_COMMAND} -E copy_if_different
      $<TARGET_FILE:simfuzz::mutator> ${CMAKE_BINARY_DIR}/fuzz/libsimfuzz_mutator.so)
  endif()
  add_custom_target(simfuzz_tools ALL ${cmds} VERBATIM)
endfunction()

# Kept for projects written against earlier releases: nothing left to do.
function(simfuzz_finalize)
endfunction()
