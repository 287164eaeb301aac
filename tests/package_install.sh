#!/bin/sh
# cmake --install of this build into PREFIX (emptied first), and what the
# package must hold: the public headers and no internal one, the libraries,
# the dispatcher, the CMake package, pkg-config files and the data files.
# The outside-project tests build against PREFIX afterwards.
# Usage: tests/package_install.sh BUILD_DIR PREFIX
set -u
B=$1; P=$2
rm -rf "$P"
cmake --install "$B" --prefix "$P" > "$P.log" 2>&1 || { cat "$P.log"; echo "FAIL: install"; exit 1; }
rm -f "$P.log"
bad=0
for f in include/simfuzz/version.h include/simfuzz/simfuzz.h include/simfuzz/simfuzz_runner.h include/simfuzz/sim.h \
         include/simfuzz/scenario.h include/simfuzz/linearize.h include/simfuzz/simfuzz_wire.h \
         include/simfuzz/simfuzz_record.h include/simfuzz/simfuzz_libc.h include/simfuzz/simfuzz_program.h include/simfuzz/simfuzz_client.h \
         bin/simfuzz \
         lib/libsimfuzz_sim.a lib/libsimfuzz_harness.a lib/libsimfuzz_cli.a \
         lib/cmake/simfuzz/simfuzzConfig.cmake lib/cmake/simfuzz/simfuzzConfigVersion.cmake \
         lib/cmake/simfuzz/SimfuzzTarget.cmake lib/cmake/simfuzz/SimfuzzProgram.cmake \
         lib/cmake/simfuzz/program_check.cmake share/simfuzz/program_calls.h lib/pkgconfig/simfuzz.pc \
         lib/pkgconfig/simfuzz-sim.pc share/simfuzz/scenario.proto share/simfuzz/scenario.dict; do
  [ -e "$P/$f" ] || { echo "FAIL: $f is not installed"; bad=1; }
done
leaked=$(find "$P/include/simfuzz" -mindepth 1 -printf '%P\n' | grep -v -x -e version.h -e sim.h -e simfuzz.h -e simfuzz_runner.h \
  -e scenario.h -e linearize.h -e simfuzz_wire.h -e simfuzz_record.h -e simfuzz_libc.h -e simfuzz_program.h -e simfuzz_client.h)
[ -z "$leaked" ] || { echo "FAIL: internal headers installed: $leaked"; bad=1; }
[ $bad = 0 ] && echo "ok: installed into $P"
exit $bad
