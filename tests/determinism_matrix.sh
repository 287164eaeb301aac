#!/bin/sh
# Determinism across compilers and optimisation levels: builds the
# fingerprint program with gcc and clang at -O0 and -O2 (and, in full mode,
# with ASan+UBSan) and requires byte-identical output.
# Usage: tests/determinism_matrix.sh [quick|full]
set -eu
cd "$(dirname "$0")/.."
mode=${1:-quick}
count=300
golden_lines=300 # the scenarios tests/golden/ pins (quick mode runs exactly these)
configs="gcc:-O0 gcc:-O2 clang:-O0 clang:-O2"
if [ "$mode" = full ]; then
  count=3000
  configs="$configs gcc:-O3 clang:-O3 clang:-O1:asan gcc:-O2:asan"
fi
out=build/determinism
mkdir -p "$out/proto"
# one_config NAME C ARGS...: NAME built in configuration C (cc:opt[:asan])
# from ARGS (and the flags in $extra), its objects in a directory of its
# own, $obj (an argument %OBJ%/x names a file there), run on $count
# scenarios into $obj.txt.
one_config() {
  name=$1; c=$2
  shift 2
  cc=${c%%:*}; rest=${c#*:}; opt=${rest%%:*}; san=""
  case "$rest" in *:asan) san="-fsanitize=address,undefined -fno-sanitize-recover=undefined" ;; esac
  obj="$out/$name-$(echo "$c" | tr : _)"
  mkdir -p "$obj"
  for a do
    shift
    case $a in %OBJ%/*) a="$obj/${a#%OBJ%/}" ;; esac
    set -- "$@" "$a"
  done
  [ -z "${pre:-}" ] || $pre "$cc" "$opt" "$san"
  # shellcheck disable=SC2086 # $opt, $san, $extra: words
  $cc -std=c11 $opt $san -w -D_POSIX_C_SOURCE=200809L $extra "$@" -o "$obj.exe"
  "$obj.exe" "$count" > "$obj.txt"
}
# matrix NAME ARGS...: NAME in every configuration, side by side (a job
# each: the machine's cores, not one), and byte-identical output required.
matrix() {
  name=$1
  shift
  pids=""
  for c in $configs; do
    (one_config "$name" "$c" "$@") > "$out/$name-$(echo "$c" | tr : _).log" 2>&1 &
    pids="$pids $!"
  done
  failed=0
  for p in $pids; do wait "$p" || failed=1; done
  ref=""
  for c in $configs; do
    base="$out/$name-$(echo "$c" | tr : _)"
    if [ "$failed" = 1 ]; then
      echo "determinism matrix: $name $c:" >&2
      cat "$base.log" >&2
      continue
    fi
    if [ -z "$ref" ]; then
      ref="$base.txt"
    elif ! cmp -s "$ref" "$base.txt"; then
      echo "determinism matrix: $base differs from $ref" >&2
      diff "$ref" "$base.txt" | head -5 >&2
      exit 1
    fi
    echo "determinism matrix: $name $c ok"
  done
  [ "$failed" = 0 ] || exit 1
  # the same hashes as the tree's golden copy: a change to them is made
  # once and on purpose (regenerate it and say so in the commit)
  golden=tests/golden/$name.txt
  if ! head -n "$golden_lines" "$ref" | cmp -s - "$golden"; then
    echo "determinism matrix: $name's hashes differ from $golden" >&2
    head -n "$golden_lines" "$ref" | diff "$golden" - | head -5 >&2
    echo "if the change is deliberate: head -n $golden_lines $ref > $golden" >&2
    exit 1
  fi
  echo "determinism matrix: $name matches $golden"
}

# The simulator alone.
extra="-Iinclude -Isim -Itests"
matrix fp sim/*.c tests/chatter.c tests/sim_fingerprint.c
echo "determinism matrix: $(wc -l < "$ref") simulator scenario hashes identical across: $configs"

# The whole harness: scenario generation, runner and the example target.
protoc-c --c_out="$out/proto" -Iproto proto/scenario.proto
extra="-DSF_TARGET_NAME=\"x\" -DSF_TARGET_SYMBOL=sf_target_x -DPBSTORE_BUG_RESET_SKIP -Iinclude -Isim -Iharness -I$out/proto -Iexamples/pbstore"
matrix harness sim/*.c harness/scenario/scenario.c harness/scenario/draw.c harness/run/run.c harness/run/sites.c harness/run/features.c \
  harness/run/feedback.c harness/adapter/libc.c harness/adapter/record.c \
  "$out/proto/scenario.pb-c.c" tests/harness_fingerprint.c examples/pbstore/pbstore.c \
  examples/pbstore/pbstore_target.c examples/common/node_io_sim.c -lprotobuf-c
echo "determinism matrix: $count harness runs (pbstore_bug_reset_skip, random scenarios) identical across: $configs"

# An unmodified program (examples/programs/beacon, the correct one: whole runs),
# its object interposed as simfuzz_add_program() does: one relocatable
# object, .data and .bss in one section, calls.h's calls renamed.
# interpose CC OPT SAN SOURCE NAME MAIN GLOBALS COPIES [CFLAGS]: $obj/NAME.o,
# SOURCE's object with its calls renamed, COPIES copies of it, copy j with
# its main renamed MAIN_j and its globals section GLOBALS_j
interpose() {
  # shellcheck disable=SC2086
  $1 -std=c11 $2 $3 -w -UNDEBUG -fno-common -include harness/program/atomics.h ${9:-} \
    -c "$4" -o "$obj/$5.src.o"
  printf 'SECTIONS\n{\n  sfp_globals : { *(.data .data.rel .data.rel.local .data.rel.local.* .data.[!r]* .bss .bss.* COMMON) }\n}\n' \
    > "$obj/globals.ld"
  ld -r -T "$obj/globals.ld" -o "$obj/$5.tmp.o" "$obj/$5.src.o"
  grep -o 'X([A-Za-z0-9_]*, \(MODEL\|REFUSE\),' harness/program/calls.h |
    sed 's/^X(\([A-Za-z0-9_]*\),.*/\1 sfp_\1/' > "$obj/syms.map"
  objcopy --redefine-syms="$obj/syms.map" "$obj/$5.tmp.o" "$obj/$5.1.o"
  objcopy --keep-global-symbol=sfp_main "$obj/$5.1.o" "$obj/$5.2.o"
  j=0
  while [ "$j" -lt "$8" ]; do
    objcopy --redefine-sym "sfp_main=$6_$j" --rename-section "sfp_globals=$7_$j" \
      "$obj/$5.2.o" "$obj/$5_$j.o"
    j=$((j + 1))
  done
  ld -r -o "$obj/$5.o" "$obj/$5"_[0-9].o
}
program_object() { # CC OPT SAN: $obj/program.o, the beacon, a copy per node (5 at most)
  interpose "$1" "$2" "$3" examples/programs/beacon/beacon.c program sfp_main sfp_globals 5
}
# A threaded program with a client (examples/programs/poolkv, the correct
# one): its threads' schedules are drawn from the scenario, and so are the
# same in every build.
poolkv_objects() { # CC OPT SAN: $obj/server.o (one node) and $obj/client.o (two)
  interpose "$1" "$2" "$3" examples/programs/poolkv/poolkv.c server sfp_main sfp_globals 1
  interpose "$1" "$2" "$3" examples/programs/poolkv/poolclient.c client sfp_cmain sfp_cglobals 2 -Iinclude
}
# Threads that switch at atomic operations (tests/programs/atomics.c): gcc's
# and clang's <stdatomic.h> expand to different builtins, each one switch point.
atomics_object() { # CC OPT SAN: $obj/atomics.o (one node)
  interpose "$1" "$2" "$3" tests/programs/atomics.c atomics sfp_main sfp_globals 1
}
program_sources="sim/*.c harness/scenario/scenario.c harness/scenario/draw.c harness/run/run.c \
  harness/run/sites.c harness/run/features.c harness/run/feedback.c harness/adapter/libc.c \
  harness/adapter/record.c harness/program/program.c harness/program/fiber.c harness/program/net.c \
  harness/program/fs.c harness/program/client.c harness/program/iov.c harness/program/thread.c \
  harness/check/linearize.c $out/proto/scenario.pb-c.c tests/harness_fingerprint.c"
if [ "$(uname -m)" = x86_64 ]; then
  pre=program_object
  extra="-Iinclude -Isim -Iharness -I$out/proto"
  # shellcheck disable=SC2086 # the list of sources: words
  matrix program $program_sources tests/programs/beacon_x.c %OBJ%/program.o -lprotobuf-c
  echo "determinism matrix: $count program runs (beacon, random scenarios) identical across: $configs"
  pre=poolkv_objects
  # shellcheck disable=SC2086
  matrix poolkv $program_sources tests/programs/poolkv_x.c %OBJ%/server.o %OBJ%/client.o -lprotobuf-c
  echo "determinism matrix: $count threaded program runs (poolkv, random scenarios) identical across: $configs"
  pre=atomics_object
  # shellcheck disable=SC2086
  matrix atomics $program_sources tests/programs/atomics_x.c %OBJ%/atomics.o -lprotobuf-c
  pre=""
  echo "determinism matrix: $count runs of threads that switch at atomic operations (gcc's and clang's <stdatomic.h>) identical across: $configs"
fi
