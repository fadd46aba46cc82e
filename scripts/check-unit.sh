#!/usr/bin/env bash
# `make lint`: systemd-analyze verify of deploy/systemd/ctxbench-agent.service. verify also checks that
# ExecStart= exists, and this machine has no /opt/ctxbench: it checks a copy whose /opt/ctxbench is a
# temp dir holding an executable stand-in. Works without systemd as PID 1.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
command -v systemd-analyze >/dev/null || { echo "check-unit: systemd-analyze missing (scripts/bootstrap.sh test)" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/opt/bin"
install -m 0755 /bin/true "$tmp/opt/bin/ctxbench-agent"
sed "s|/opt/ctxbench|$tmp/opt|g" "$root/deploy/systemd/ctxbench-agent.service" >"$tmp/ctxbench-agent.service"
out="$(SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no "$tmp/ctxbench-agent.service" 2>&1)" || { echo "$out" >&2; exit 1; }
# verify exits 0 on unknown keys and bad values; they are warnings we refuse too.
if [[ -n "$out" ]]; then echo "$out" >&2; exit 1; fi
echo "check-unit: ctxbench-agent.service ok"
