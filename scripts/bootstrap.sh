#!/bin/sh
# Install the Debian packages simfuzz needs, when missing. Idempotent; runs
# apt-get only if something is absent. Used by both README commands and CI.
set -eu
PKGS="pkgconf libraft-dev clang-format shellcheck clang llvm libclang-rt-14-dev cmake ninja-build make gcc python3 afl++ chromium \
protobuf-c-compiler libprotobuf-c-dev protobuf-compiler zip libevent-dev libuv1-dev"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "bootstrap: installing:$missing"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
