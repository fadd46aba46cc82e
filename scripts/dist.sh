#!/usr/bin/env bash
# Builds one agent bundle: build/dist/ctxbench-agent-<version>-linux-<arch>.tar.gz, then rewrites
# build/dist/SHA256SUMS over every bundle there. Usage: scripts/dist.sh amd64|arm64 VERSION [BUILD]
#
# Layout (docs/architecture.md, "Bundle"): bin/ctxbench-agent and bin/ctxbench (the command line,
# docs/cli.md; both static Go), kernels/ (every kernel
# executable; kernels/libexec/ holds helpers the catalog scan skips), lib/ (shared libraries the C++
# kernels find through their $ORIGIN RPATH), python/ (pyperf, for the host's python3 >= 3.9), share/ (the systemd unit), VERSION.
# Incremental: the C++ kernels have their own CMake build dir per arch, Go uses its build cache, pyperf
# is downloaded once per version; a second run costs the tar + gzip (seconds).
# Reproducible: two runs on one commit give the same bytes (every mtime is the commit's, the zipapp's
# too; tar sorts names and records no owner; gzip records no name or time).
# Rollback: the bundles of the DIST_KEEP (default 3) most recently built versions per arch stay in
# build/dist and in SHA256SUMS, newest last (the installer's default); older ones are deleted.
set -euo pipefail
keep=${DIST_KEEP:-3}
[[ "$keep" =~ ^[1-9][0-9]*$ ]] || { echo "dist: DIST_KEEP must be a number >= 1" >&2; exit 2; }

arch=${1:?usage: dist.sh amd64|arm64 VERSION [BUILD]}
version=${2:?usage: dist.sh amd64|arm64 VERSION [BUILD]}
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(mkdir -p "${3:-$root/build}" && cd "${3:-$root/build}" && pwd)"

case "$arch" in
  amd64) triple=x86_64-linux-gnu; cmake_cross=() ;;
  arm64)
    triple=aarch64-linux-gnu
    command -v aarch64-linux-gnu-g++ >/dev/null ||
      { echo "dist: arm64 needs crossbuild-essential-arm64 (scripts/bootstrap.sh dist)" >&2; exit 1; }
    cmake_cross=(-DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=aarch64
      -DCMAKE_C_COMPILER=aarch64-linux-gnu-gcc -DCMAKE_CXX_COMPILER=aarch64-linux-gnu-g++
      -DCMAKE_FIND_ROOT_PATH=/usr/lib/aarch64-linux-gnu -DCMAKE_LIBRARY_ARCHITECTURE=aarch64-linux-gnu
      -DCMAKE_FIND_ROOT_PATH_MODE_PROGRAM=NEVER) ;;
  *) echo "dist: unknown arch $arch (amd64, arm64)" >&2; exit 2 ;;
esac

name="ctxbench-agent-$version-linux-$arch"
work="$build/dist-work/$arch"
stage="$work/$name"
out="$build/dist"
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/kernels/libexec" "$stage/lib" "$stage/python" "$out"

# Go: static (no cgo), so they run on any Linux of the arch. -buildvcs=false: Go would stamp whether the
# work tree is dirty (vcs.modified), which changes the binary between two runs on one commit.
(cd "$root/agent" && CGO_ENABLED=0 GOOS=linux GOARCH="$arch" go build -trimpath -buildvcs=false \
  -ldflags "-s -w -X main.version=$version" -o "$stage/bin/ctxbench-agent" ./cmd/ctxbench-agent)
(cd "$root/agent" && CGO_ENABLED=0 GOOS=linux GOARCH="$arch" go build -trimpath -buildvcs=false \
  -ldflags "-s -w -X main.version=$version" -o "$stage/bin/ctxbench" ./cmd/ctxbench)
(cd "$root/kernels/go" && CGO_ENABLED=0 GOOS=linux GOARCH="$arch" go build -trimpath -buildvcs=false \
  -o "$stage/kernels/ctxbench-kernels-go" ./cmd/ctxbench-kernels-go)

# C++: its own build dir per arch (CTXBENCH_BUNDLE: static Boost.Context, $ORIGIN/../lib RPATH).
cmake -S "$root/kernels/cpp" -B "$build/cmake/dist-$arch" -DCMAKE_BUILD_TYPE=Release -DCTXBENCH_BUNDLE=ON \
  -DCTXBENCH_KERNELS_OUT="$work/cpp" "${cmake_cross[@]}" >/dev/null
cmake --build "$build/cmake/dist-$arch" -j2 --target ctxbench-kernels-cpp ctxbench-exec-true >/dev/null
cp "$work/cpp/ctxbench-kernels-cpp" "$stage/kernels/"
cp "$work/cpp/libexec/ctxbench-exec-true" "$stage/kernels/libexec/"

# The shared libraries the C++ kernels need besides glibc's own (their NEEDED entries, and those
# libraries' own, two levels deep), copied from this arch's multiarch dir into lib/.
libdir="/usr/lib/$triple"
glibc='^(libc|libm|libpthread|libdl|librt|libresolv|libutil|ld-linux[-a-z0-9_]*)\.so'
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -Ev "$glibc" || true; }
for so in $(needed "$stage/kernels/ctxbench-kernels-cpp"); do
  for dep in "$so" $(needed "$libdir/$so"); do
    [[ -e "$stage/lib/$dep" ]] && continue
    src="$libdir/$dep"
    [[ -e "$src" ]] || src="/lib/$triple/$dep"
    [[ -e "$src" ]] || { echo "dist: $dep for $arch not found in $libdir" >&2; exit 1; }
    cp -L "$src" "$stage/lib/$dep"
  done
done

# Python kernels: a zipapp run by the host's python3 (>= 3.9) with pyperf from python/ (pure Python).
pyperf_pin="$(grep -E '^pyperf==' "$root/kernels/python/requirements.txt")"
pycache="$build/dist-work/pyperf-${pyperf_pin#pyperf==}"
if [[ ! -f "$pycache/.done" ]]; then
  rm -rf "$pycache"
  "${PYTHON:-python3}" -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps --no-compile --target "$pycache" "$pyperf_pin"
  touch "$pycache/.done"
fi
cp -r "$pycache/pyperf" "$pycache"/pyperf-*.dist-info "$stage/python/"
rm -rf "$stage/python/pyperf/tests"
app="$work/pyapp"
rm -rf "$app" && mkdir -p "$app"
cp -r "$root/kernels/python/ctxbench_kernels_py" "$app/"
find "$app" -name '__pycache__' -prune -exec rm -rf {} +
cp "$root/kernels/python/bundle_main.py" "$app/__main__.py"
# zipapp stores each file's mtime (in local time): the commit's, in UTC, so a rebuild is the same zip.
mtime="$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 315532800)"
find "$app" -exec touch -h -d "@$mtime" {} +
TZ=UTC "${PYTHON:-python3}" -m zipapp "$app" -p '/usr/bin/env python3' -o "$stage/kernels/ctxbench-kernels-py"
chmod +x "$stage/kernels/ctxbench-kernels-py"

mkdir -p "$stage/share"
cp "$root/deploy/systemd/ctxbench-agent.service" "$stage/share/"
echo "$version" >"$stage/VERSION"

# Reproducible archive: fixed order, owner and mtime (the commit's time).
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" -C "$work" -cf - "$name" |
  gzip -n >"$out/$name.tar.gz.tmp"
mv -f "$out/$name.tar.gz.tmp" "$out/$name.tar.gz"
# Keep the $keep most recently built versions of this arch (this one is the newest) for --version.
# shellcheck disable=SC2012 # bundle names have no spaces or newlines (VERSION + commit)
ls -t "$out"/ctxbench-agent-*-linux-"$arch".tar.gz | tail -n +"$((keep + 1))" | xargs -r rm -f --
# Oldest first, so the last line of an arch is its newest bundle (what the installer picks by default).
# shellcheck disable=SC2012,SC2011
(cd "$out" && ls -tr ctxbench-agent-*.tar.gz | xargs sha256sum -- >SHA256SUMS.tmp && mv -f SHA256SUMS.tmp SHA256SUMS)
echo "dist: $out/$name.tar.gz"
