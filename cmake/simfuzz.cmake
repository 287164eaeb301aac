# simfuzz build helpers: the protobuf scenario code, the harness libraries
# in their normal and fuzzing flavours, and simfuzz_add_target().

find_program(SF_PROTOC_C protoc-c REQUIRED)
find_program(SF_PROTOC protoc)
find_library(SF_PROTOBUF_C_LIB protobuf-c REQUIRED)
find_path(SF_PROTOBUF_C_INCLUDE protobuf-c/protobuf-c.h REQUIRED)
find_program(SF_AFL_CC afl-clang-fast)
option(SIMFUZZ_FEEDBACK "Abstract-state feedback in fuzzers (off: ablation builds)" ON)
option(SIMFUZZ_FUZZERS "Build libFuzzer and AFL++ fuzzers (needs clang)" ON)

set(SF_PROTO_OUT ${CMAKE_BINARY_DIR}/proto)
add_custom_command(
  OUTPUT ${SF_PROTO_OUT}/scenario.pb-c.c ${SF_PROTO_OUT}/scenario.pb-c.h
  COMMAND ${CMAKE_COMMAND} -E make_directory ${SF_PROTO_OUT}
  COMMAND ${SF_PROTOC_C} --c_out=${SF_PROTO_OUT} -I${PROJECT_SOURCE_DIR}/proto
          ${PROJECT_SOURCE_DIR}/proto/scenario.proto
  DEPENDS ${PROJECT_SOURCE_DIR}/proto/scenario.proto
  COMMENT "protoc-c scenario.proto")
set_source_files_properties(${SF_PROTO_OUT}/scenario.pb-c.c PROPERTIES COMPILE_OPTIONS "-w")

set(SF_SIM_SOURCES
  ${PROJECT_SOURCE_DIR}/sim/world.c ${PROJECT_SOURCE_DIR}/sim/net.c
  ${PROJECT_SOURCE_DIR}/sim/stream.c ${PROJECT_SOURCE_DIR}/sim/disk.c
  ${PROJECT_SOURCE_DIR}/sim/trace.c)
set(SF_HARNESS_SOURCES
  ${PROJECT_SOURCE_DIR}/harness/scenario.c ${PROJECT_SOURCE_DIR}/harness/run.c
  ${PROJECT_SOURCE_DIR}/harness/feedback.c ${PROJECT_SOURCE_DIR}/harness/mutate.c
  ${PROJECT_SOURCE_DIR}/harness/textpb.c ${PROJECT_SOURCE_DIR}/harness/linearize.c
  ${SF_PROTO_OUT}/scenario.pb-c.c)
set(SF_INCLUDES ${PROJECT_SOURCE_DIR}/sim ${PROJECT_SOURCE_DIR}/harness ${SF_PROTO_OUT}
  ${SF_PROTOBUF_C_INCLUDE})
if(SIMFUZZ_FEEDBACK)
  set(SF_FEEDBACK_DEF SF_FEEDBACK=1)
else()
  set(SF_FEEDBACK_DEF SF_FEEDBACK=0)
endif()

add_library(simfuzz_harness STATIC ${SF_HARNESS_SOURCES})
target_include_directories(simfuzz_harness PUBLIC ${SF_INCLUDES})
target_compile_definitions(simfuzz_harness PUBLIC _POSIX_C_SOURCE=200809L ${SF_FEEDBACK_DEF})
target_link_libraries(simfuzz_harness PUBLIC simfuzz_sim ${SF_PROTOBUF_C_LIB})

set(SIMFUZZ_FUZZ_SANITIZERS "address,undefined" CACHE STRING
    "Sanitizers of the libFuzzer builds (comma list; empty for none)")
# The simulator and harness are tested under ASan+UBSan by the test suite
# and fuzzed sanitized by harness_selftest_fuzzer; in the targets' fuzzers
# only the system under test needs the checks (a sanitized core costs about
# half the throughput of simulation-heavy targets).
option(SIMFUZZ_SANITIZE_CORE "Sanitize the simulator and harness in the targets' fuzzers too" OFF)
# The command line (main() lives here; each binary adds a target registry).
set(SF_TRACE_HTML ${CMAKE_BINARY_DIR}/harness/trace_html.c)
add_custom_command(
  OUTPUT ${SF_TRACE_HTML}
  COMMAND ${CMAKE_COMMAND} -DHEAD=${PROJECT_SOURCE_DIR}/harness/trace_html.in
          -DTAIL=${PROJECT_SOURCE_DIR}/harness/trace_html_tail.in -DOUT=${SF_TRACE_HTML}
          -P ${PROJECT_SOURCE_DIR}/cmake/embed.cmake
  DEPENDS ${PROJECT_SOURCE_DIR}/harness/trace_html.in
          ${PROJECT_SOURCE_DIR}/harness/trace_html_tail.in ${PROJECT_SOURCE_DIR}/cmake/embed.cmake)
add_library(simfuzz_cli STATIC
  ${PROJECT_SOURCE_DIR}/harness/cli.c ${PROJECT_SOURCE_DIR}/harness/cli_replay.c
  ${PROJECT_SOURCE_DIR}/harness/cli_minimize.c ${PROJECT_SOURCE_DIR}/harness/cli_triage.c
  ${PROJECT_SOURCE_DIR}/harness/cli_trace.c
  ${SF_TRACE_HTML})
target_link_libraries(simfuzz_cli PUBLIC simfuzz_harness)

# OSS-Fuzz style: SIMFUZZ_ENGINE is $LIB_FUZZING_ENGINE. Everything is then
# compiled with the CFLAGS the infrastructure chose (sanitizer, coverage
# instrumentation, AFL++'s compiler) and only the fuzzers are linked, with
# $CXX and the engine. The simulator and harness are kept out of the
# fuzzers' coverage with an ignore list, as in our own builds.
set(SIMFUZZ_ENGINE "" CACHE STRING
    "Link the fuzzers with this engine and take compile flags from CFLAGS (OSS-Fuzz: \$LIB_FUZZING_ENGINE)")
set(SF_HAVE_LIBFUZZER OFF)
set(SF_CORE_NOCOV "")
if(SIMFUZZ_ENGINE)
  enable_language(CXX)
  set(SF_HAVE_LIBFUZZER ON)
  set(SF_FUZZ_CFLAGS "")
  set(SF_SAN_CORE "")
  separate_arguments(SF_FUZZ_LDFLAGS UNIX_COMMAND "${SIMFUZZ_ENGINE}")
  include(CheckCCompilerFlag)
  set(CMAKE_REQUIRED_FLAGS "-fsanitize-coverage=inline-8bit-counters")
  check_c_compiler_flag(-fsanitize-coverage-ignorelist=${PROJECT_SOURCE_DIR}/cmake/core.ignorelist
                        SF_HAVE_IGNORELIST)
  unset(CMAKE_REQUIRED_FLAGS)
  if(SF_HAVE_IGNORELIST)
    set(SF_CORE_NOCOV -fsanitize-coverage-ignorelist=${PROJECT_SOURCE_DIR}/cmake/core.ignorelist)
  endif()
  set(SF_CORE_SOURCES ${SF_SIM_SOURCES} ${SF_HARNESS_SOURCES})
  add_library(simfuzz_fuzzcore STATIC ${SF_CORE_SOURCES})
  target_include_directories(simfuzz_fuzzcore PUBLIC ${SF_INCLUDES})
  target_compile_definitions(simfuzz_fuzzcore PUBLIC _POSIX_C_SOURCE=200809L ${SF_FEEDBACK_DEF})
  target_compile_options(simfuzz_fuzzcore PRIVATE ${SF_CORE_NOCOV})
  target_link_libraries(simfuzz_fuzzcore PUBLIC ${SF_PROTOBUF_C_LIB})
  add_library(simfuzz_fuzzcore_san ALIAS simfuzz_fuzzcore) # CFLAGS sanitize everything
elseif(SIMFUZZ_FUZZERS AND CMAKE_C_COMPILER_ID MATCHES "Clang")
  set(SF_HAVE_LIBFUZZER ON)
  if(SIMFUZZ_FUZZ_SANITIZERS)
    set(SF_SAN ",${SIMFUZZ_FUZZ_SANITIZERS}")
    set(SF_SAN_CORE -fsanitize=${SIMFUZZ_FUZZ_SANITIZERS} -fno-sanitize-recover=undefined)
  else()
    set(SF_SAN "")
    set(SF_SAN_CORE "")
  endif()
  set(SF_FUZZ_CFLAGS -fsanitize=fuzzer-no-link${SF_SAN} -fno-omit-frame-pointer -g)
  if(SIMFUZZ_FUZZ_SANITIZERS MATCHES "undefined")
    list(APPEND SF_FUZZ_CFLAGS -fno-sanitize-recover=undefined)
  endif()
  set(SF_FUZZ_LDFLAGS -fsanitize=fuzzer${SF_SAN})
  # The simulator and the harness get sanitizers but no coverage: the
  # fuzzer is steered by the target's code coverage plus the abstract
  # features that feedback.c turns into coverage (which already cover the
  # simulator's fault paths). Instrumenting the simulator would only add
  # per-event cost and noise.
  set(SF_CORE_SOURCES ${SF_SIM_SOURCES} ${SF_HARNESS_SOURCES})
  list(REMOVE_ITEM SF_CORE_SOURCES ${PROJECT_SOURCE_DIR}/harness/feedback.c)
  add_library(simfuzz_fuzzfb OBJECT ${PROJECT_SOURCE_DIR}/harness/feedback.c)
  target_include_directories(simfuzz_fuzzfb PRIVATE ${SF_INCLUDES})
  target_compile_options(simfuzz_fuzzfb PRIVATE ${SF_FUZZ_CFLAGS})
  add_library(simfuzz_fuzzcore STATIC ${SF_CORE_SOURCES} $<TARGET_OBJECTS:simfuzz_fuzzfb>)
  target_include_directories(simfuzz_fuzzcore PUBLIC ${SF_INCLUDES})
  target_compile_definitions(simfuzz_fuzzcore PUBLIC _POSIX_C_SOURCE=200809L ${SF_FEEDBACK_DEF})
  if(SIMFUZZ_SANITIZE_CORE)
    target_compile_options(simfuzz_fuzzcore PRIVATE ${SF_SAN_CORE})
  endif()
  target_compile_options(simfuzz_fuzzcore PRIVATE -fno-omit-frame-pointer -g)
  target_compile_options(simfuzz_fuzzcore INTERFACE ${SF_FUZZ_CFLAGS})
  target_link_libraries(simfuzz_fuzzcore PUBLIC ${SF_PROTOBUF_C_LIB})
  # always sanitized: for harness_selftest_fuzzer, whose crashes are ours
  add_library(simfuzz_fuzzcore_san STATIC ${SF_CORE_SOURCES} $<TARGET_OBJECTS:simfuzz_fuzzfb>)
  target_include_directories(simfuzz_fuzzcore_san PUBLIC ${SF_INCLUDES})
  target_compile_definitions(simfuzz_fuzzcore_san PUBLIC _POSIX_C_SOURCE=200809L ${SF_FEEDBACK_DEF})
  target_compile_options(simfuzz_fuzzcore_san PRIVATE ${SF_SAN_CORE} -fno-omit-frame-pointer -g)
  target_compile_options(simfuzz_fuzzcore_san INTERFACE ${SF_FUZZ_CFLAGS})
  target_link_libraries(simfuzz_fuzzcore_san PUBLIC ${SF_PROTOBUF_C_LIB})
endif()

# The AFL++ custom mutator library: plain -fPIC code without sanitizers, as
# it is loaded into afl-fuzz itself.
set(SF_AFL_MUTATOR ${CMAKE_BINARY_DIR}/fuzz/libsimfuzz_mutator.so)
if(SF_AFL_CC AND NOT SIMFUZZ_ENGINE)
  add_custom_command(
    OUTPUT ${SF_AFL_MUTATOR}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/fuzz
    COMMAND ${CMAKE_C_COMPILER} -std=c11 -O2 -g -fPIC -shared -D_POSIX_C_SOURCE=200809L
            -I${PROJECT_SOURCE_DIR}/sim -I${PROJECT_SOURCE_DIR}/harness -I${SF_PROTO_OUT}
            ${PROJECT_SOURCE_DIR}/harness/afl_mutator.c ${PROJECT_SOURCE_DIR}/harness/mutate.c
            ${PROJECT_SOURCE_DIR}/harness/scenario.c ${SF_PROTO_OUT}/scenario.pb-c.c
            ${SF_PROTOBUF_C_LIB} -o ${SF_AFL_MUTATOR}
    DEPENDS ${PROJECT_SOURCE_DIR}/harness/afl_mutator.c ${PROJECT_SOURCE_DIR}/harness/mutate.c
            ${PROJECT_SOURCE_DIR}/harness/scenario.c ${SF_PROTO_OUT}/scenario.pb-c.c
    COMMENT "AFL++ custom mutator library" VERBATIM)
  add_custom_target(simfuzz_afl_mutator ALL DEPENDS ${SF_AFL_MUTATOR})
endif()

# simfuzz_add_target(NAME name SOURCES src... [DEFINES def...] [CORPUS dir] [DICT file]
#                    [SANITIZED_CORE])
#   build/bin/simfuzz-<name>      the CLI for the target
#   build/fuzz/<name>_fuzzer      libFuzzer (clang), ASan+UBSan on the target's code
#                                 (and on the simulator/harness with SANITIZED_CORE
#                                 or -DSIMFUZZ_SANITIZE_CORE=ON)
#   build/fuzz/<name>_afl         AFL++ persistent mode (when afl-clang-fast exists)
#   build/corpus/<name>/*.pb      the seed corpus: corpus/<dir>/*.textproto encoded
#   build/fuzz/<name>.dict        dictionary
# Target sources define `const sf_target SF_TARGET_SYMBOL` named SF_TARGET_NAME
# (both set here) and keep everything else static.
function(simfuzz_add_target)
  cmake_parse_arguments(T "SANITIZED_CORE" "NAME;CORPUS;DICT" "SOURCES;DEFINES" ${ARGN})
  if(NOT T_CORPUS)
    set(T_CORPUS ${T_NAME})
  endif()
  set(stub ${CMAKE_BINARY_DIR}/targets/${T_NAME}_stub.c)
  file(WRITE ${stub}.in
    "#include \"simfuzz.h\"\n"
    "extern const sf_target sf_target_${T_NAME};\n"
    "const sf_target *const sf_this_target = &sf_target_${T_NAME};\n")
  configure_file(${stub}.in ${stub} COPYONLY)
  set(defs SF_TARGET_NAME="${T_NAME}" SF_TARGET_SYMBOL=sf_target_${T_NAME} ${T_DEFINES})

  set(cli_stub ${CMAKE_BINARY_DIR}/targets/${T_NAME}_cli_stub.c)
  file(WRITE ${cli_stub}.in
    "#include \"simfuzz.h\"\n"
    "extern const sf_target sf_target_${T_NAME};\n"
    "const sf_target *const sf_cli_targets[] = {&sf_target_${T_NAME}, 0};\n")
  configure_file(${cli_stub}.in ${cli_stub} COPYONLY)
  add_executable(simfuzz-${T_NAME} ${cli_stub} ${T_SOURCES})
  target_compile_definitions(simfuzz-${T_NAME} PRIVATE ${defs})
  target_link_libraries(simfuzz-${T_NAME} PRIVATE simfuzz_cli)
  set_target_properties(simfuzz-${T_NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)

  # the target as a library, for tests
  add_library(sftarget_${T_NAME} STATIC ${T_SOURCES})
  target_compile_definitions(sftarget_${T_NAME} PRIVATE ${defs})
  target_link_libraries(sftarget_${T_NAME} PUBLIC simfuzz_harness)

  if(SF_HAVE_LIBFUZZER)
    add_executable(${T_NAME}_fuzzer ${PROJECT_SOURCE_DIR}/harness/libfuzzer.c ${stub} ${T_SOURCES})
    target_compile_definitions(${T_NAME}_fuzzer PRIVATE ${defs})
    if(SIMFUZZ_ENGINE AND NOT SIMFUZZ_ENGINE MATCHES "-fsanitize=fuzzer")
      # AFL++'s, honggfuzz's and centipede's drivers have no LLVMFuzzerMutate
      target_compile_definitions(${T_NAME}_fuzzer PRIVATE SF_NO_CUSTOM_MUTATOR)
    endif()
    if(T_SANITIZED_CORE)
      target_link_libraries(${T_NAME}_fuzzer PRIVATE simfuzz_fuzzcore_san)
    else()
      target_link_libraries(${T_NAME}_fuzzer PRIVATE simfuzz_fuzzcore)
    endif()
    target_link_options(${T_NAME}_fuzzer PRIVATE ${SF_FUZZ_LDFLAGS})
    set_target_properties(${T_NAME}_fuzzer PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fuzz)
    if(SIMFUZZ_ENGINE)
      set_target_properties(${T_NAME}_fuzzer PROPERTIES LINKER_LANGUAGE CXX)
    endif()
    set_property(GLOBAL APPEND PROPERTY SIMFUZZ_FUZZERS ${T_NAME}_fuzzer ${T_NAME}_seeds)
  endif()

  if(SF_AFL_CC AND NOT SIMFUZZ_ENGINE)
    set(out ${CMAKE_BINARY_DIR}/fuzz/${T_NAME}_afl)
    set(defflags "")
    foreach(d ${defs})
      list(APPEND defflags "-D${d}")
    endforeach()
    add_custom_command(
      OUTPUT ${out}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/fuzz
      COMMAND ${CMAKE_COMMAND} -E env AFL_QUIET=1 ${SF_AFL_CC} -std=gnu11 -O2 -g
              -D_POSIX_C_SOURCE=200809L -D${SF_FEEDBACK_DEF} ${defflags}
              -I${PROJECT_SOURCE_DIR}/sim -I${PROJECT_SOURCE_DIR}/harness -I${SF_PROTO_OUT}
              ${SF_SIM_SOURCES} ${SF_HARNESS_SOURCES} ${PROJECT_SOURCE_DIR}/harness/afl_driver.c
              ${stub} ${T_SOURCES} ${SF_PROTOBUF_C_LIB} -o ${out}
      DEPENDS ${SF_SIM_SOURCES} ${SF_HARNESS_SOURCES} ${PROJECT_SOURCE_DIR}/harness/afl_driver.c
              ${stub} ${T_SOURCES}
      COMMENT "AFL++ fuzzer ${T_NAME}_afl" VERBATIM)
    add_custom_target(${T_NAME}_afl ALL DEPENDS ${out})
  endif()

  file(GLOB seeds ${PROJECT_SOURCE_DIR}/corpus/${T_CORPUS}/*.textproto)
  set(outs "")
  foreach(seed ${seeds})
    get_filename_component(base ${seed} NAME_WE)
    set(o ${CMAKE_BINARY_DIR}/corpus/${T_NAME}/${base}.pb)
    add_custom_command(
      OUTPUT ${o}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/corpus/${T_NAME}
      COMMAND sh ${PROJECT_SOURCE_DIR}/cmake/encode_seed.sh ${SF_PROTOC}
              ${PROJECT_SOURCE_DIR}/proto ${seed} ${o}
      DEPENDS ${seed} ${PROJECT_SOURCE_DIR}/proto/scenario.proto
      COMMENT "seed ${T_NAME}/${base}" VERBATIM)
    list(APPEND outs ${o})
  endforeach()
  set(dict ${CMAKE_BINARY_DIR}/fuzz/${T_NAME}.dict)
  set(dict_in ${PROJECT_SOURCE_DIR}/harness/scenario.dict)
  if(T_DICT)
    list(APPEND dict_in ${T_DICT})
  endif()
  add_custom_command(
    OUTPUT ${dict}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/fuzz
    COMMAND ${CMAKE_COMMAND} -E cat ${dict_in} > ${dict}
    DEPENDS ${dict_in})
  add_custom_target(${T_NAME}_seeds ALL DEPENDS ${outs} ${dict})
  set_property(GLOBAL APPEND PROPERTY SIMFUZZ_TARGETS ${T_NAME})
endfunction()

# simfuzz_finalize(): build/bin/simfuzz, the command line with every target
# added by simfuzz_add_target() (choose one with --target NAME).
function(simfuzz_finalize)
  get_property(targets GLOBAL PROPERTY SIMFUZZ_TARGETS)
  set(reg ${CMAKE_BINARY_DIR}/targets/all_targets.c)
  set(text "#include \"simfuzz.h\"\n")
  set(list "")
  foreach(t ${targets})
    string(APPEND text "extern const sf_target sf_target_${t};\n")
    string(APPEND list "&sf_target_${t}, ")
  endforeach()
  string(APPEND text "const sf_target *const sf_cli_targets[] = {${list}0};\n")
  file(WRITE ${reg}.in "${text}")
  configure_file(${reg}.in ${reg} COPYONLY)
  add_executable(simfuzz ${reg})
  foreach(t ${targets})
    target_link_libraries(simfuzz PRIVATE sftarget_${t})
  endforeach()
  target_link_libraries(simfuzz PRIVATE simfuzz_cli)
  set_target_properties(simfuzz PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
  # every fuzzer with its seeds and dictionary (what an OSS-Fuzz build needs)
  get_property(fuzzers GLOBAL PROPERTY SIMFUZZ_FUZZERS)
  add_custom_target(simfuzz_fuzzers DEPENDS ${fuzzers})
endfunction()
