#!/usr/bin/env bash
# Starts the product on its embedded defaults: the server (HTTP + gRPC, SQLite) and one local agent
# connected to it. `make run` builds first and then calls this; Ctrl-C stops both cleanly.
#
# Overrides (all optional): CTXBENCH_HTTP_HOST/PORT (127.0.0.1:8080), CTXBENCH_GRPC_HOST/PORT
# (127.0.0.1:50051), CTXBENCH_DATA_DIR (./data), CTXBENCH_AGENT_SPOOL (<data dir>/agent-spool),
# CTXBENCH_AGENT_NAME, CTXBENCH_RUN_FRESH=1 (start from an empty data dir: used by browser tests),
# CTXBENCH_ADMIN_TOKEN (else <data dir>/admin-token) and the server's other CTXBENCH_* settings.
# Prints the server's one-time sign-in link (http://127.0.0.1:8080/?login=<code>).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

http_host=${CTXBENCH_HTTP_HOST:-127.0.0.1}
http_port=${CTXBENCH_HTTP_PORT:-8080}
grpc_host=${CTXBENCH_GRPC_HOST:-127.0.0.1}
grpc_port=${CTXBENCH_GRPC_PORT:-50051}
data_dir=$(realpath -m "${CTXBENCH_DATA_DIR:-$root/data}")
spool_dir=$(realpath -m "${CTXBENCH_AGENT_SPOOL:-$data_dir/agent-spool}")

server_bin="$root/.venv/bin/ctxbench-server"
agent_bin="$root/build/bin/ctxbench-agent"
for f in "$server_bin" "$agent_bin" "$root/build/kernels"; do
  [ -e "$f" ] || { echo "run: $f is missing: run 'make build' (or 'make run')" >&2; exit 1; }
done

if [ "${CTXBENCH_RUN_FRESH:-0}" = 1 ]; then
  rm -rf "$data_dir" "$spool_dir"
fi
mkdir -p "$data_dir" "$spool_dir"

server_pid="" agent_pid="" tee_pid="" server_out=""
stop() {
  trap - INT TERM EXIT
  [ -n "$agent_pid" ] && kill -TERM "$agent_pid" 2>/dev/null || true
  [ -n "$server_pid" ] && kill -TERM "$server_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  [ -n "$tee_pid" ] && wait "$tee_pid" 2>/dev/null || true
  [ -n "$server_out" ] && rm -f "$server_out"
}
trap 'stop; exit 0' INT TERM
trap stop EXIT

export CTXBENCH_HTTP_HOST=$http_host CTXBENCH_HTTP_PORT=$http_port
export CTXBENCH_GRPC_HOST=$grpc_host CTXBENCH_GRPC_PORT=$grpc_port
export CTXBENCH_DATA_DIR=$data_dir
export CTXBENCH_FRONTEND_DIR=${CTXBENCH_FRONTEND_DIR:-$root/build/frontend}
# The server's stdout (its `ctxbench-server: ...` lines) also goes to a private file, to find the
# one-time sign-in link in it. tee ignores Ctrl-C so the server's last lines still get through.
server_out=$(mktemp)
exec 3> >(trap '' INT TERM; exec tee "$server_out")
tee_pid=$!
(cd "$root" && exec "$server_bin") >&3 &
server_pid=$!
exec 3>&-

# Wait for the HTTP side; gRPC starts in the same process before HTTP answers.
health="http://$http_host:$http_port/api/v1/health"
for _ in $(seq 1 600); do
  if curl -fsS -o /dev/null "$health" 2>/dev/null; then break; fi
  kill -0 "$server_pid" 2>/dev/null || { echo "run: the server exited; see its log above" >&2; exit 1; }
  sleep 0.1
done
curl -fsS -o /dev/null "$health" || { echo "run: the server did not answer $health in 60 s" >&2; exit 1; }

# The local agent enrolls with the server's multi-use agent token (once: its credential stays in the
# spool) and trusts the CA the server generated, or the operator's CA (CTXBENCH_AGENT_CA_FILE).
token_args=(--token-file "$data_dir/agent-token")
[ -n "${CTXBENCH_AGENT_TOKEN:-}" ] && token_args=()
tls_args=(--ca-file "$data_dir/tls/ca.pem")
[ -n "${CTXBENCH_GRPC_TLS_CERT:-}" ] && tls_args=()
[ -n "${CTXBENCH_AGENT_CA_FILE:-}${CTXBENCH_AGENT_CA_FINGERPRINT:-}" ] && tls_args=()
case "${CTXBENCH_GRPC_TLS:-true}" in false | 0 | no | off) tls_args=(--insecure) ;; esac
"$agent_bin" --server "$grpc_host:$grpc_port" "${token_args[@]}" "${tls_args[@]}" \
  --kernels "$root/build/kernels" --spool "$spool_dir" &
agent_pid=$!

sign_in=""
for _ in $(seq 1 50); do
  sign_in=$(sed -n 's/^ctxbench-server: sign in at //p' "$server_out" | tail -n 1)
  [ -n "$sign_in" ] && break
  sleep 0.1
done

db="SQLite ctxbench.db, "
[[ "${CTXBENCH_DATABASE_URL:-}" == postgresql* ]] && db="database in PostgreSQL; "
cat <<EOF

  ctxbench is running: sign in at ${sign_in:-http://$http_host:$http_port/}
  (the link works once; afterwards sign in with the token in $data_dir/admin-token)
  API docs: http://$http_host:$http_port/docs   gRPC for agents: $grpc_host:$grpc_port
  API: curl -H "authorization: Bearer \$(cat $data_dir/admin-token)" http://$http_host:$http_port/api/v1/machines
  data: $data_dir (${db}admin-token, agent-token, tls/ca.pem)   Ctrl-C stops both.

EOF

# Whichever stops first, stop the other.
set +e
wait -n "$server_pid" "$agent_pid"
status=$?
echo "run: $( kill -0 "$server_pid" 2>/dev/null && echo agent || echo server ) exited (status $status); stopping" >&2
exit "$status"
