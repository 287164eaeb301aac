# OSS-Fuzz / ClusterFuzzLite build image for simfuzz (see docs/oss-fuzz.md).
# In an oss-fuzz checkout this file lives in projects/simfuzz/ and clones
# the repository; from this repository, `COPY . $SRC/simfuzz` does the same.
FROM gcr.io/oss-fuzz-base/base-builder
RUN apt-get update && apt-get install -y --no-install-recommends \
      cmake ninja-build protobuf-c-compiler libprotobuf-c-dev protobuf-compiler zip
# The protobuf-c runtime's source, built with the sanitizer's flags when
# SANITIZER=memory (MemorySanitizer needs every linked library instrumented).
RUN git clone --depth 1 --branch v1.4.1 https://github.com/protobuf-c/protobuf-c.git $SRC/protobuf-c
COPY . $SRC/simfuzz
COPY ossfuzz/build.sh $SRC/
WORKDIR $SRC/simfuzz
