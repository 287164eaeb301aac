#!/bin/bash -eu
# ClusterFuzzLite runs this with OSS-Fuzz's environment; one build script
# serves both.
exec bash "$SRC/simfuzz/ossfuzz/build.sh"
