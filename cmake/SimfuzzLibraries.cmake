# How simfuzz's own libraries are built: the simulator, the harness in each
# fuzzing flavour, the command line and the AFL++ mutator. Included by the
# top-level CMakeLists.txt. A project using simfuzz sees these as
# simfuzz::<name> (find_package(simfuzz) or add_subdirectory()):
#
#   simfuzz::sim            the simulator (sim.h)
#   simfuzz::harness        scenarios, runner, checkers, adapter helpers
#   simfuzz::cli            the command line of one target (main() included)
#   simfuzz::simfuzz        the dispatcher executable: simfuzz --target T ...
#   simfuzz::libfuzzer      simulator + harness + libFuzzer driver; its usage
#                           requirements instrument the target's sources
#   simfuzz::libfuzzer_san  the same with the simulator and harness sanitized
#   simfuzz::afl            simulator + harness + AFL++ persistent driver
#   simfuzz::mutator        the AFL++ custom mutator library (MODULE)

find_program(SF_PROTOC_C protoc-c REQUIRED)
find_program(SF_PROTOC protoc)
find_library(SF_PROTOBUF_C_LIB protobuf-c REQUIRED)
find_path(SF_PROTOBUF_C_INCLUDE protobuf-c/protobuf-c.h REQUIRED)
find_program(SF_AFL_CC afl-clang-fast)
option(SIMFUZZ_FEEDBACK "Abstract-state feedback in fuzzers (off: ablation builds)" ON)
option(SIMFUZZ_FUZZERS "Build libFuzzer and AFL++ fuzzers (needs clang)" ON)
set(SIMFUZZ_FUZZ_SANITIZERS "address,undefined" CACHE STRING
    "Sanitizers of the libFuzzer builds (comma list; empty for none)")
# The simulator and harness are tested under ASan+UBSan by the test suite
# and fuzzed sanitized by harness_selftest_fuzzer; in the targets' fuzzers
# only the system under test needs the checks (a sanitized core costs about
# half the throughput of simulation-heavy targets).
option(SIMFUZZ_SANITIZE_CORE "Sanitize the simulator and harness in the targets' fuzzers too" OFF)
# OSS-Fuzz style: SIMFUZZ_ENGINE is $LIB_FUZZING_ENGINE. Everything is then
# compiled with the CFLAGS the infrastructure chose (sanitizer, coverage
# instrumentation, AFL++'s compiler) and the fuzzers are linked with $CXX
# and the engine.
set(SIMFUZZ_ENGINE "" CACHE STRING
    "Link the fuzzers with this engine and take compile flags from CFLAGS (OSS-Fuzz: \$LIB_FUZZING_ENGINE)")

set(SF_SRC ${PROJECT_SOURCE_DIR})
set(SF_PROTO_OUT ${PROJECT_BINARY_DIR}/proto)
add_custom_command(
  OUTPUT ${SF_PROTO_OUT}/scenario.pb-c.c ${SF_PROTO_OUT}/scenario.pb-c.h
  COMMAND ${CMAKE_COMMAND} -E make_directory ${SF_PROTO_OUT}
  COMMAND ${SF_PROTOC_C} --c_out=${SF_PROTO_OUT} -I${SF_SRC}/proto ${SF_SRC}/proto/scenario.proto
  DEPENDS ${SF_SRC}/proto/scenario.proto
  COMMENT "protoc-c scenario.proto")
set_source_files_properties(${SF_PROTO_OUT}/scenario.pb-c.c PROPERTIES COMPILE_OPTIONS "-w")

set(SF_SIM_SOURCES
  ${SF_SRC}/sim/world.c ${SF_SRC}/sim/assert.c ${SF_SRC}/sim/net.c ${SF_SRC}/sim/stream.c ${SF_SRC}/sim/disk.c
  ${SF_SRC}/sim/trace.c ${SF_SRC}/sim/version.c ${SF_SRC}/sim/heap.c)
set(SF_HARNESS_SOURCES
  ${SF_SRC}/harness/scenario/scenario.c ${SF_SRC}/harness/scenario/draw.c ${SF_SRC}/harness/scenario/textpb.c
  ${SF_SRC}/harness/run/run.c ${SF_SRC}/harness/run/sites.c ${SF_SRC}/harness/run/features.c ${SF_SRC}/harness/engine/mutate.c
  ${SF_SRC}/harness/check/linearize.c ${SF_SRC}/harness/adapter/record.c
  ${SF_SRC}/harness/adapter/libc.c ${SF_SRC}/harness/program/program.c
  ${SF_SRC}/harness/program/fiber.c ${SF_SRC}/harness/program/net.c ${SF_SRC}/harness/program/fs.c
  ${SF_SRC}/harness/program/client.c ${SF_SRC}/harness/program/iov.c ${SF_SRC}/harness/program/thread.c
  ${SF_PROTO_OUT}/scenario.pb-c.c)
set(SF_FEEDBACK_SOURCE ${SF_SRC}/harness/run/feedback.c)
# public headers, installed as <simfuzz/NAME.h>: what a target's author
# (simfuzz.h and its helpers) and a tool's author (simfuzz_runner.h,
# scenario.h) include; the rest is internal
set(SF_INCLUDE ${SF_SRC}/include)
set(SF_PUBLIC_HEADER_NAMES version sim simfuzz simfuzz_runner scenario linearize simfuzz_wire
  simfuzz_record simfuzz_libc simfuzz_program simfuzz_client)
set(SF_PUBLIC_HEADERS)
foreach(h ${SF_PUBLIC_HEADER_NAMES})
  list(APPEND SF_PUBLIC_HEADERS ${SF_INCLUDE}/simfuzz/${h}.h)
endforeach()
if(SIMFUZZ_FEEDBACK)
  set(SF_FEEDBACK_DEF SF_FEEDBACK=1)
else()
  set(SF_FEEDBACK_DEF SF_FEEDBACK=0)
endif()

# Where a library's users find the public headers: <simfuzz/sim.h> through
# include/. The bare names of releases before 0.6 ("simfuzz.h") still
# resolve, through include/simfuzz searched last (-idirafter, one token so
# that CMake's de-duplication keeps it whole): a project's own sim.h or
# scenario.h always wins over ours. simfuzz_add_target() warns about them.
function(sf_public_includes name)
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${SF_INCLUDE}> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_options(${name} INTERFACE
    $<BUILD_INTERFACE:-idirafter${SF_INCLUDE}/simfuzz>
    $<INSTALL_INTERFACE:-idirafter$<INSTALL_PREFIX>/${CMAKE_INSTALL_INCLUDEDIR}/simfuzz>)
endfunction()

# Settings every library holding simulator or harness code shares; the
# internal headers ("engine/mutate.h") are the library's own.
function(sf_core_settings name)
  sf_public_includes(${name})
  target_include_directories(${name} PRIVATE ${SF_SRC}/harness ${SF_PROTO_OUT}
    ${SF_PROTOBUF_C_INCLUDE})
  target_compile_definitions(${name} PRIVATE _POSIX_C_SOURCE=200809L ${SF_FEEDBACK_DEF})
  target_link_libraries(${name} PUBLIC ${SF_PROTOBUF_C_LIB})
endfunction()

# ---- plain: the command line, tests, the sweep ----
add_library(simfuzz_sim STATIC ${SF_SIM_SOURCES})
sf_public_includes(simfuzz_sim)
add_library(simfuzz_harness STATIC ${SF_HARNESS_SOURCES} ${SF_FEEDBACK_SOURCE})
sf_core_settings(simfuzz_harness)
target_link_libraries(simfuzz_harness PUBLIC simfuzz_sim)

set(SF_TRACE_HTML ${PROJECT_BINARY_DIR}/harness/trace_html.c)
add_custom_command(
  OUTPUT ${SF_TRACE_HTML}
  COMMAND ${CMAKE_COMMAND} -DHEAD=${SF_SRC}/harness/cli/trace_html.in
          -DTAIL=${SF_SRC}/harness/cli/trace_html_tail.in -DOUT=${SF_TRACE_HTML}
          -P ${SF_SRC}/cmake/embed.cmake
  DEPENDS ${SF_SRC}/harness/cli/trace_html.in ${SF_SRC}/harness/cli/trace_html_tail.in
          ${SF_SRC}/cmake/embed.cmake)
add_library(simfuzz_cli STATIC
  ${SF_SRC}/harness/cli/cli.c ${SF_SRC}/harness/cli/opts.c ${SF_SRC}/harness/cli/scenario_cmds.c ${SF_SRC}/harness/cli/replay.c ${SF_SRC}/harness/cli/minimize.c
  ${SF_SRC}/harness/cli/triage.c ${SF_SRC}/harness/cli/trace.c
  ${SF_SRC}/harness/cli/isolate.c ${SF_SRC}/harness/cli/sweep.c ${SF_SRC}/harness/cli/json.c
  ${SF_SRC}/harness/cli/sha1.c ${SF_SRC}/harness/cli/nightly.c ${SF_SRC}/harness/cli/explore.c
  ${SF_SRC}/harness/explore/explore.c
  ${SF_SRC}/harness/cli/reach.c ${SF_SRC}/harness/cli/fuzz.c
  ${SF_SRC}/harness/cli/main_target.c ${SF_TRACE_HTML})
target_compile_definitions(simfuzz_cli PRIVATE _POSIX_C_SOURCE=200809L)
target_include_directories(simfuzz_cli PRIVATE ${SF_SRC}/harness)
target_link_libraries(simfuzz_cli PUBLIC simfuzz_harness)

# the dispatcher: no target's code, only the commands that need none
add_executable(simfuzz ${SF_SRC}/harness/cli/dispatch.c)
target_compile_definitions(simfuzz PRIVATE _POSIX_C_SOURCE=200809L)
target_include_directories(simfuzz PRIVATE ${SF_SRC}/harness)
target_link_libraries(simfuzz PRIVATE simfuzz_cli)
set_target_properties(simfuzz PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)

set(SF_INSTALL_TARGETS simfuzz_sim simfuzz_harness simfuzz_cli simfuzz)

# ---- libFuzzer flavour ----
# The simulator and the harness get no coverage instrumentation: the fuzzer
# is steered by the target's code coverage plus the abstract features that
# feedback.c turns into coverage (which already cover the simulator's fault
# paths). Instrumenting the simulator would only add per-event cost and
# noise. The usage requirements carry the instrumentation of the target's
# own sources.
set(SF_HAVE_LIBFUZZER OFF)
if(SIMFUZZ_ENGINE)
  enable_language(CXX)
  set(SF_HAVE_LIBFUZZER ON)
  separate_arguments(SF_ENGINE_LDFLAGS UNIX_COMMAND "${SIMFUZZ_ENGINE}")
  set(SF_CORE_NOCOV "")
  set(CMAKE_REQUIRED_FLAGS "-fsanitize-coverage=inline-8bit-counters")
  check_c_compiler_flag(-fsanitize-coverage-ignorelist=${SF_SRC}/cmake/core.ignorelist
                        SF_HAVE_IGNORELIST)
  unset(CMAKE_REQUIRED_FLAGS)
  if(SF_HAVE_IGNORELIST)
    set(SF_CORE_NOCOV -fsanitize-coverage-ignorelist=${SF_SRC}/cmake/core.ignorelist)
  endif()
  add_library(simfuzz_libfuzzer STATIC ${SF_SIM_SOURCES} ${SF_HARNESS_SOURCES}
    ${SF_FEEDBACK_SOURCE} ${SF_SRC}/harness/engine/libfuzzer.c)
  sf_core_settings(simfuzz_libfuzzer)
  target_compile_options(simfuzz_libfuzzer PRIVATE ${SF_CORE_NOCOV})
  if(NOT SIMFUZZ_ENGINE MATCHES "-fsanitize=fuzzer")
    # AFL++'s, honggfuzz's and centipede's drivers have no LLVMFuzzerMutate
    set_source_files_properties(${SF_SRC}/harness/engine/libfuzzer.c
      TARGET_DIRECTORY simfuzz_libfuzzer PROPERTIES COMPILE_DEFINITIONS SF_NO_CUSTOM_MUTATOR)
  endif()
  # engines reference the entry points weakly: pull the driver out of the archive
  target_link_options(simfuzz_libfuzzer INTERFACE ${SF_ENGINE_LDFLAGS}
    -Wl,--undefined=LLVMFuzzerTestOneInput)
  list(APPEND SF_INSTALL_TARGETS simfuzz_libfuzzer)
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
  # feedback paths and the driver: instrumented, like the target
  add_library(simfuzz_libfuzzer_obj OBJECT ${SF_FEEDBACK_SOURCE} ${SF_SRC}/harness/engine/libfuzzer.c)
  sf_core_settings(simfuzz_libfuzzer_obj)
  target_compile_options(simfuzz_libfuzzer_obj PRIVATE ${SF_FUZZ_CFLAGS})
  foreach(flavour simfuzz_libfuzzer simfuzz_libfuzzer_san)
    add_library(${flavour} STATIC ${SF_SIM_SOURCES} ${SF_HARNESS_SOURCES}
      $<TARGET_OBJECTS:simfuzz_libfuzzer_obj>)
    sf_core_settings(${flavour})
    target_compile_options(${flavour} PRIVATE -fno-omit-frame-pointer -g)
    target_compile_options(${flavour} INTERFACE ${SF_FUZZ_CFLAGS})
    target_link_options(${flavour} INTERFACE ${SF_FUZZ_LDFLAGS}
      -Wl,--undefined=LLVMFuzzerTestOneInput)
    list(APPEND SF_INSTALL_TARGETS ${flavour})
  endforeach()
  if(SIMFUZZ_SANITIZE_CORE)
    target_compile_options(simfuzz_libfuzzer PRIVATE ${SF_SAN_CORE})
  endif()
  # always sanitized: for harness_selftest_fuzzer, whose crashes are ours
  target_compile_options(simfuzz_libfuzzer_san PRIVATE ${SF_SAN_CORE})
endif()

# ---- AFL++ flavour ----
# Built with the project's compiler and no sanitizer; only the feedback
# paths and the persistent-mode driver go through afl-clang-fast (its
# instrumentation and __AFL_LOOP), as do the target's sources and the final
# link (cmake/afl-cc.sh as compiler and linker launcher).
set(SF_HAVE_AFL OFF)
set(SF_AFL_LAUNCHER ${SF_SRC}/cmake/afl-cc.sh)
if(SF_AFL_CC AND SIMFUZZ_FUZZERS AND NOT SIMFUZZ_ENGINE)
  set(SF_HAVE_AFL ON)
  add_library(simfuzz_afl_obj OBJECT ${SF_FEEDBACK_SOURCE} ${SF_SRC}/harness/engine/afl_driver.c)
  sf_core_settings(simfuzz_afl_obj)
  set_target_properties(simfuzz_afl_obj PROPERTIES SIMFUZZ_UNSANITIZED ON
    C_COMPILER_LAUNCHER "sh;${SF_AFL_LAUNCHER};${SF_AFL_CC}")
  add_library(simfuzz_afl STATIC ${SF_SIM_SOURCES} ${SF_HARNESS_SOURCES}
    $<TARGET_OBJECTS:simfuzz_afl_obj>)
  sf_core_settings(simfuzz_afl)
  set_target_properties(simfuzz_afl PROPERTIES SIMFUZZ_UNSANITIZED ON)
  list(APPEND SF_INSTALL_TARGETS simfuzz_afl)
endif()

# ---- the AFL++ custom mutator library: plain -fPIC code without
# sanitizers, loaded into afl-fuzz itself; exports only afl_custom_* ----
if(SIMFUZZ_FUZZERS AND NOT SIMFUZZ_ENGINE)
  add_library(simfuzz_mutator MODULE ${SF_SRC}/harness/engine/afl_mutator.c
    ${SF_SRC}/harness/engine/mutate.c ${SF_SRC}/harness/scenario/scenario.c ${SF_SRC}/harness/scenario/draw.c
    ${SF_SRC}/sim/assert.c ${SF_PROTO_OUT}/scenario.pb-c.c)
  # a module must not leave a symbol unresolved: afl-fuzz would refuse it
  target_link_options(simfuzz_mutator PRIVATE -Wl,--no-undefined)
  sf_core_settings(simfuzz_mutator)
  set_target_properties(simfuzz_mutator PROPERTIES SIMFUZZ_UNSANITIZED ON PREFIX lib
    OUTPUT_NAME simfuzz_mutator C_VISIBILITY_PRESET hidden
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fuzz)
  list(APPEND SF_INSTALL_TARGETS simfuzz_mutator)
endif()

foreach(t ${SF_INSTALL_TARGETS})
  if(t STREQUAL "simfuzz")
    add_executable(simfuzz::simfuzz ALIAS simfuzz)
    continue()
  endif()
  string(REGEX REPLACE "^simfuzz_" "" export_name ${t})
  set_target_properties(${t} PROPERTIES EXPORT_NAME ${export_name})
  add_library(simfuzz::${export_name} ALIAS ${t})
endforeach()
if(SIMFUZZ_ENGINE) # CFLAGS sanitize everything already
  add_library(simfuzz::libfuzzer_san ALIAS simfuzz_libfuzzer)
endif()
