#!/bin/sh
# Compiler and linker launcher for AFL++ builds: CMake runs
#   sh afl-cc.sh AFL_CC COMPILER ARGS...
# and this runs AFL_CC ARGS... instead of COMPILER, so that a target's AFL++
# binary gets the same flags, defines, includes and libraries as its other
# builds, plus AFL++'s instrumentation and runtime.
set -eu
afl=$1
shift 2
AFL_QUIET=1 exec "$afl" "$@"
