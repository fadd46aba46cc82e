#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks to build and test ctxbench: Debian packages (when
# missing), after checking the toolchains the README assumes (Python 3.11+, Go, Node 20+, g++, cmake).
# Usage: scripts/bootstrap.sh [build|dist|test|bench]   (dist adds the arm64 cross toolchain and Debian's
# arm64 libraries for `make dist`; test adds that, what the browser, network and install tests need and
# the linters of `make lint` and PostgreSQL's server binaries for test-*-pg (no service is used: the tests
# start their own in a temp dir); bench the independent tools the kernels are checked against)
set -euo pipefail
want=${1:-build}

die() { echo "bootstrap: $*" >&2; exit 1; }
command -v python3 >/dev/null || die "python3 (3.11+) is required"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || die "python3 must be 3.11 or newer"
command -v go >/dev/null || die "go is required (https://go.dev/dl/)"
command -v node >/dev/null || die "node 20+ is required"
[ "$(node -p 'process.versions.node.split(".")[0]')" -ge 20 ] || die "node must be 20 or newer"
command -v npm >/dev/null || die "npm is required"

pkgs=(g++ make cmake pkg-config curl libbenchmark-dev libboost-context-dev python3-venv)
# The agent bundles (make dist): arm64 is cross-built against Debian's arm64 packages (multiarch) and
# its kernels run under qemu-user-static in tests/bundles.
dist_pkgs=(crossbuild-essential-arm64 libbenchmark-dev:arm64 libboost-context-dev:arm64 qemu-user-static)
case "$want" in
  dist) pkgs+=("${dist_pkgs[@]}") ;;
  test) pkgs+=(chromium iproute2 openssh-server postgresql procps shellcheck systemd util-linux "${dist_pkgs[@]}") ;;
  bench) pkgs+=(linux-perf util-linux fio) ;;
esac

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# python3-venv is Debian's; a python3 from elsewhere (pyenv) brings venv itself.
if [[ " ${missing[*]} " == *" python3-venv "* ]] && python3 -c 'import venv, ensurepip' 2>/dev/null; then
  missing=("${missing[@]/python3-venv}")
fi
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | grep -v '^$' || true)
if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing Debian packages: ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if [[ " ${missing[*]} " == *":arm64 "* ]] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $sudo dpkg --add-architecture arm64
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
