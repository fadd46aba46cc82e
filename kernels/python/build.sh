#!/usr/bin/env bash
# Builds build/kernels/ctxbench-kernels-py: a zipapp of ctxbench_kernels_py whose shebang is the absolute path
# of the Python that runs it, so the agent can exec it directly (no shell).
#
# Which Python:
#   default                          a dedicated venv, <build>/venv-kernels-py, made with `python3 -m venv` and
#                                    holding the pinned requirements.txt (pyperf, psutil, greenlet);
#   CTXBENCH_KERNELS_PYTHON=/path    the kernels are run by that interpreter instead (e.g. the Python the
#                                    agent is configured with); it must already have pyperf, and greenlet
#                                    for coroutine.py_greenlet (without greenlet that kernel exits 3).
# A second build only re-zips the package (seconds): the venv is reinstalled only when requirements.txt or
# the base interpreter changes (their hash is kept in <venv>/.ctxbench-stamp).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="$(mkdir -p "${1:-$here/../../build}" && cd "${1:-$here/../../build}" && pwd)"
out="$build/kernels/ctxbench-kernels-py"
mkdir -p "$build/kernels"

if [[ -n "${CTXBENCH_KERNELS_PYTHON:-}" ]]; then
  python="$CTXBENCH_KERNELS_PYTHON"
  [[ "$python" == /* ]] || python="$PWD/$python"
  [[ -x "$python" ]] || { echo "CTXBENCH_KERNELS_PYTHON=$python is not an executable" >&2; exit 1; }
  "$python" -c 'import pyperf' 2>/dev/null || echo "warning: $python has no pyperf; its kernels will exit 3" >&2
else
  base="$(command -v python3)"
  venv="$build/venv-kernels-py"
  stamp="$venv/.ctxbench-stamp"
  want="$( (sha256sum "$here/requirements.txt" | cut -d' ' -f1; "$base" -c 'import sys; print(sys.version)' ; echo "$base") | sha256sum | cut -d' ' -f1)"
  if [[ ! -x "$venv/bin/python" || ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    echo "kernels-py: installing $here/requirements.txt into $venv"
    rm -rf "$venv"
    "$base" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$here/requirements.txt"
    echo "$want" >"$stamp"
  fi
  python="$venv/bin/python"
fi

# Zip the package beside the target and move it into place, so a running agent never sees half a file.
staging="$(mktemp -d)"
trap 'rm -rf "$staging"' EXIT
mkdir -p "$staging/app"
cp -r "$here/ctxbench_kernels_py" "$staging/app/"
find "$staging/app" -name '__pycache__' -prune -exec rm -rf {} +
cat >"$staging/app/__main__.py" <<'PY'
import sys

from ctxbench_kernels_py.cli import run_main

sys.exit(run_main(sys.argv[1:]))
PY
# Each module's bytecode beside its source (the layout zipimport reads; it compiles no cached copy of its
# own, so a launch compiled every module again, ~20 ms of each kernel process), by the Python that runs
# them, unchecked: the archive is rebuilt whenever a source changes.
"$python" - "$staging/app" <<'PY'
import pathlib
import py_compile
import sys

for src in sorted(pathlib.Path(sys.argv[1]).rglob("*.py")):
    py_compile.compile(
        str(src),
        cfile=str(src.with_suffix(".pyc")),
        doraise=True,
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
    )
PY
"$python" -m zipapp "$staging/app" -p "$python" -o "$out.tmp"
chmod +x "$out.tmp"
mv -f "$out.tmp" "$out"
echo "kernels-py: $out (run by $python)"
