#!/bin/sh
# Installs (or upgrades, or removes) the ctxbench agent on a Linux host. POSIX sh, run as root (run by
# another user, it runs itself again through sudo, with the same arguments and stdin):
#
#   f=$(mktemp) && curl -fsSL <server>/install-agent.sh -o "$f" && echo "<sha256>  $f" | sha256sum -c - &&
#     printf '%s\n' cxj_... | sh "$f" --server HOST:50051 --join-token-file - --ca-fingerprint sha256:<hex>
#
# (the install command of a join token, one line): this script is checked against the sha256 the command
# names before it runs, and the server served it with the sha256 of every bundle it offers written in
# (PINNED_SUMS below), so the bundle is checked against those, not against a second download; the join
# token comes on stdin, never in an argv.
# It downloads the bundle for this architecture from the server it was fetched from (<url>/dist/),
# checks its sha256, unpacks it into /opt/ctxbench (--prefix), creates the
# system user `ctxbench` and /var/lib/ctxbench (0700: identity, machine credential, spool), writes
# /etc/ctxbench/agent.env (0600) and the join token into /etc/ctxbench/join-token (0600; never in the
# agent's argv), then installs and starts the systemd unit. Without systemd as PID 1, --no-service
# installs only and prints the command that starts the agent (it enrolls on its first start).
# Run again, it upgrades in place: the state dir, and so the machine's identity, stays.
#
# Options:
#   --server HOST:PORT        the server's gRPC address (kept from agent.env on upgrade)
#   --join-token TOKEN        join token (also: --join-token-file FILE, or --join-token-file - for stdin)
#   --ca-fingerprint sha256:  pin the server's CA (the join token response carries it)
#   --insecure                plaintext gRPC (only behind a TLS-terminating proxy)
#   --name NAME               machine name shown in the explorer (default: the hostname)
#   --label KEY=VALUE         a label of this host (env=prod), repeatable, or --labels k=v,k2=v2; given,
#                             they replace an earlier install's (kept on upgrade otherwise; --labels "" clears)
#   --url URL                 where to download bundles from (default: the server that served this script)
#   --version VERSION         install that bundle version (default: the one the server offers)
#   --prefix DIR              install dir (default /opt/ctxbench)
#   --no-service              do not install the systemd unit; print the start command instead (kept on
#                             upgrade when systemd is not running and no unit was installed)
#   --uninstall               remove the agent, its unit and /etc/ctxbench (the state dir stays)
#   --purge                   with --uninstall: remove the state dir and the ctxbench user too
set -eu
# Byte-wise character classes in the checks below, whatever the caller's locale.
export LC_ALL=C

# GET /install-agent.sh replaces the value below with the server's public URL, and PINNED_SUMS with its
# SHA256SUMS (lines of "<sha256>  <bundle>"). Left as they are (this file run from a checkout), the
# installer downloads <url>/dist/SHA256SUMS instead and says that the checksums were not pinned.
DEFAULT_URL="@CTXBENCH_PUBLIC_URL@"
PINNED_SUMS='@CTXBENCH_SHA256SUMS@'

url=${CTXBENCH_URL:-}
prefix=/opt/ctxbench
etc_dir=/etc/ctxbench
state_dir=/var/lib/ctxbench
unit_dir=/etc/systemd/system
user=ctxbench
server=""
join_token=""
join_token_file=""
ca_fingerprint=""
insecure=""
name=""
labels=""
labels_given=0
version=""
no_service=0
action=install
purge=0

say() { printf 'install-agent: %s\n' "$*"; }
die() {
	printf 'install-agent: %s\n' "$*" >&2
	exit 1
}
usage() {
	sed -n '2,/^set -eu/p' "$0" 2>/dev/null | sed -e '$d' -e 's/^# \{0,1\}//' || true
	exit "${1:-0}"
}
need_arg() { [ $# -ge 2 ] || die "$1 needs a value"; }

# Not root: run this file again through sudo, before anything is parsed or read, so the arguments are
# the same and stdin (the join token of --join-token-file -) is still unread: sudo hands it on. So the
# printed commands say `sh "$f"`, and work as root where there is no sudo (containers, minimal images).
# sudo resets the environment: CTXBENCH_URL goes along as --url (a --url given later wins).
if [ "$(id -u)" -ne 0 ]; then
	for a in "$@"; do case $a in -h | --help) usage 0 ;; esac; done
	command -v sudo >/dev/null 2>&1 || die "run as root, or install sudo"
	# Read from a pipe (curl … | sh -s --), $0 is the shell, not this file: nothing to run again.
	line2=""
	if [ -f "$0" ] && [ -r "$0" ]; then { IFS= read -r _ && IFS= read -r line2; } <"$0" || true; fi
	case $line2 in
	"# Installs (or upgrades, or removes) the ctxbench agent"*) ;;
	*) die "run as root (curl -fsSL <server>/install-agent.sh | sudo sh -s -- ...)" ;;
	esac
	[ -z "${CTXBENCH_URL:-}" ] || set -- --url "$CTXBENCH_URL" "$@"
	# -u root: a sudoers runas_default of another user must not make this run itself again forever.
	exec sudo -u root sh "$0" "$@"
fi

while [ $# -gt 0 ]; do
	case "$1" in
	--*=*)
		opt=${1%%=*}
		val=${1#*=}
		shift
		set -- "$opt" "$val" "$@"
		continue
		;;
	--server) need_arg "$@"; server=$2; shift ;;
	--join-token) need_arg "$@"; join_token=$2; shift ;;
	--join-token-file) need_arg "$@"; join_token_file=$2; shift ;;
	--ca-fingerprint) need_arg "$@"; ca_fingerprint=$2; shift ;;
	--insecure) insecure=true ;;
	--name) need_arg "$@"; name=$2; shift ;;
	--label) need_arg "$@"; labels=${labels:+$labels,}$2; labels_given=1; shift ;;
	--labels) need_arg "$@"; labels=$2; labels_given=1; shift ;;
	--url) need_arg "$@"; url=$2; shift ;;
	--version) need_arg "$@"; version=$2; shift ;;
	--prefix) need_arg "$@"; prefix=$2; shift ;;
	--no-service) no_service=1 ;;
	--uninstall) action=uninstall ;;
	--purge) purge=1 ;;
	-h | --help) usage 0 ;;
	*) die "unknown option $1 (--help lists them)" ;;
	esac
	shift
done

case "$prefix" in
/*) ;;
*) die "--prefix must be an absolute path" ;;
esac
prefix=${prefix%/}
env_file=$etc_dir/agent.env
token_path=$etc_dir/join-token
unit=$unit_dir/ctxbench-agent.service

have_systemd() { [ -d /run/systemd/system ]; }

# The ids of processes running $prefix/bin/ctxbench-agent (however they were started: the unit, the
# printed start command, a container's supervisor).
# printed on one line, separated by spaces.
agent_pids() {
	found=""
	for p in /proc/[0-9]*; do
		exe=$(readlink "$p/exe" 2>/dev/null) || continue
		case $exe in
		# An agent started before an upgrade runs a deleted file of the swapped-out $prefix.old.
		"$prefix/bin/ctxbench-agent" | "$prefix/bin/ctxbench-agent (deleted)" | "$prefix.old/bin/ctxbench-agent (deleted)")
			found="$found${found:+ }${p#/proc/}"
			;;
		esac
	done
	printf '%s' "$found"
}

uninstall() {
	if have_systemd && [ -f "$unit" ]; then
		systemctl disable --now ctxbench-agent.service >/dev/null 2>&1 || true
	fi
	rm -f "$unit"
	if have_systemd; then systemctl daemon-reload >/dev/null 2>&1 || true; fi
	# Without systemd (or started by hand) an agent may still run: stop it, as the unit would have.
	pids=$(agent_pids)
	if [ -n "$pids" ]; then
		# shellcheck disable=SC2086 # one pid a word
		kill -TERM $pids 2>/dev/null || true
		n=0
		while [ -n "$(agent_pids)" ] && [ "$n" -lt 30 ]; do
			sleep 1
			n=$((n + 1))
		done
		left=$(agent_pids)
		[ -z "$left" ] || die "the agent still runs after SIGTERM and 30 s (pid $left): stop it, then run --uninstall again"
		say "stopped the running agent (pid $pids)"
	fi
	rm -rf "$prefix" "$etc_dir"
	if [ "$purge" -eq 1 ]; then
		rm -rf "$state_dir"
		if id "$user" >/dev/null 2>&1; then
			if ! { userdel "$user" >"$etc_dir.userdel" 2>&1 || deluser "$user" >>"$etc_dir.userdel" 2>&1; }; then
				why=$(tr '\n' ' ' <"$etc_dir.userdel")
				rm -f "$etc_dir.userdel"
				die "removed the agent and its state dir, but not the user $user: ${why:-userdel failed}"
			fi
			rm -f "$etc_dir.userdel"
		fi
		say "removed the agent, its state dir and the user $user"
	else
		say "removed the agent; its identity stays in $state_dir (--purge removes it)"
	fi
}

if [ "$action" = uninstall ]; then
	uninstall
	exit 0
fi
[ "$purge" -eq 0 ] || die "--purge goes with --uninstall"

# An upgrade keeps what the first install was told.
env_value() { [ -f "$env_file" ] && sed -n "s/^$1=//p" "$env_file" | tail -n 1; }
[ -n "$server" ] || server=$(env_value CTXBENCH_AGENT_SERVER || true)
[ -n "$ca_fingerprint" ] || ca_fingerprint=$(env_value CTXBENCH_AGENT_CA_FINGERPRINT || true)
[ -n "$insecure" ] || insecure=$(env_value CTXBENCH_AGENT_INSECURE || true)
[ -n "$name" ] || name=$(env_value CTXBENCH_AGENT_NAME || true)
[ "$labels_given" -eq 1 ] || labels=$(env_value CTXBENCH_AGENT_LABELS || true)
[ -n "$server" ] || die "--server HOST:PORT is required (the gRPC address the install command names)"
# Every value below goes into agent.env, which root sources (the start command) and systemd reads: each
# is refused unless made of the characters its shape needs, checked with case first (grep reads lines,
# so "ok<newline>anything" would pass a grep), so the file never needs quoting.
only() { # VALUE ALLOWED-CHARACTERS MESSAGE
	case $1 in
	"" | *[!$2]*) die "$3" ;;
	esac
}
only "$server" ']A-Za-z0-9.:_[-' "--server: HOST:PORT (letters, digits, . - _ : and [ ] for IPv6)"
only "$prefix" 'A-Za-z0-9._/+-' "--prefix: an absolute path of letters, digits, . _ / + - only"
[ -z "$insecure" ] || [ "$insecure" = true ] || die "agent.env: CTXBENCH_AGENT_INSECURE must be true or absent"
[ -n "$url" ] || url=$DEFAULT_URL
case "$url" in
http://* | https://*) url=${url%/} ;;
*) die "no download URL: pass --url http(s)://SERVER (or CTXBENCH_URL)" ;;
esac
[ -z "$name" ] || only "$name" 'A-Za-z0-9._-' "--name: letters, digits, . _ - only"

if [ -n "$labels" ]; then
	# The agent checks lengths at start; the shape here keeps agent.env free of quoting (no spaces,
	# quotes or shell characters).
	# grep reads lines: the case refuses a newline (and every other character) first.
	lbl='[A-Za-z0-9]([A-Za-z0-9._/-]*[A-Za-z0-9])?'
	label_rule="--label: key=value, each of letters, digits, . _ / - (beginning and ending with a letter or digit)"
	case $labels in
	*[!A-Za-z0-9._/=,-]*) die "$label_rule" ;;
	esac
	printf '%s' "$labels" | grep -Eq "^$lbl=($lbl)?(,$lbl=($lbl)?)*\$" || die "$label_rule"
fi
if [ -n "$ca_fingerprint" ]; then
	fp_rule="--ca-fingerprint wants sha256:<64 hex digits>"
	case $ca_fingerprint in sha256:*) ;; *) die "$fp_rule" ;; esac
	only "${ca_fingerprint#sha256:}" '0-9a-fA-F' "$fp_rule"
	[ "${#ca_fingerprint}" -eq 71 ] || die "$fp_rule"
fi

if [ -n "$join_token" ] && [ -n "$join_token_file" ]; then
	die "give --join-token or --join-token-file, not both"
fi
if [ "$join_token_file" = - ]; then
	IFS= read -r join_token || [ -n "$join_token" ] || die "no join token on stdin"
elif [ -n "$join_token_file" ]; then
	[ -r "$join_token_file" ] || die "cannot read $join_token_file"
	join_token=$(head -n 1 "$join_token_file")
fi
enrolled=0
[ -s "$state_dir/machine-credential" ] && enrolled=1
if [ -z "$join_token" ] && [ "$enrolled" -eq 0 ] && [ ! -s "$token_path" ]; then
	die "this host is not enrolled yet: pass --join-token (create one on the explorer's Add hosts page)"
fi

case "$(uname -m)" in
x86_64 | amd64) arch=amd64 ;;
aarch64 | arm64) arch=arm64 ;;
*) die "no bundle for architecture $(uname -m) (amd64 and arm64 are built)" ;;
esac

if [ "$no_service" -eq 0 ] && ! have_systemd; then
	# An upgrade of an install made with --no-service (agent.env, no unit) stays one: the explorer's
	# upgrade command names no mode.
	if [ ! -f "$env_file" ] || [ -f "$unit" ]; then
		die "systemd is not running as PID 1 here: rerun with --no-service (installs and prints how to start the agent)"
	fi
	no_service=1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

fetch() {
	if command -v curl >/dev/null 2>&1; then
		curl -fsSL --retry 3 -o "$2" "$1"
	elif command -v wget >/dev/null 2>&1; then
		wget -q -O "$2" "$1"
	else
		die "needs curl or wget"
	fi
}

case $PINNED_SUMS in
@*) # not served by a ctxbench server (a checkout's copy): the sums come from the same server as the bundle
	fetch "$url/dist/SHA256SUMS" "$tmp/SHA256SUMS" || die "cannot download $url/dist/SHA256SUMS"
	sums_from="$url/dist/SHA256SUMS (not pinned: this installer was not served by the server)"
	;;
*)
	printf '%s\n' "$PINNED_SUMS" >"$tmp/SHA256SUMS"
	sums_from="the sums pinned in this installer"
	;;
esac
if [ -n "$version" ]; then
	bundle="ctxbench-agent-$version-linux-$arch.tar.gz"
	grep -q "  $bundle\$" "$tmp/SHA256SUMS" || die "$url offers no $bundle"
else
	bundle=$(sed -n "s/^[0-9a-f]\{64\}  \(ctxbench-agent-.*-linux-$arch\.tar\.gz\)\$/\1/p" "$tmp/SHA256SUMS" | tail -n 1)
	[ -n "$bundle" ] || die "$url offers no bundle for linux-$arch"
fi
want=$(grep "  $bundle\$" "$tmp/SHA256SUMS" | cut -d' ' -f1)
fetch "$url/dist/$bundle" "$tmp/$bundle" || die "cannot download $url/dist/$bundle"
got=$(sha256sum "$tmp/$bundle" | cut -d' ' -f1)
[ "$got" = "$want" ] || die "$bundle: sha256 $got, $sums_from say $want: not installing"
say "downloaded $bundle (sha256 ok, against $sums_from)"

mkdir -p "$tmp/x"
tar -xzf "$tmp/$bundle" -C "$tmp/x"
top="$tmp/x/${bundle%.tar.gz}"
[ -x "$top/bin/ctxbench-agent" ] || die "$bundle has no bin/ctxbench-agent"
new_version=$(cat "$top/VERSION")
old_version=""
[ -f "$prefix/VERSION" ] && old_version=$(cat "$prefix/VERSION")
running=$(agent_pids)

# The user and the state dir (identity, machine credential, spool): kept across upgrades.
if ! id "$user" >/dev/null 2>&1; then
	nologin=/usr/sbin/nologin
	[ -x "$nologin" ] || nologin=/bin/false
	if command -v useradd >/dev/null 2>&1; then
		useradd --system --user-group --home-dir "$state_dir" --no-create-home --shell "$nologin" "$user"
	else
		adduser -S -D -H -h "$state_dir" -s "$nologin" "$user" # busybox
	fi
	say "created system user $user"
fi
mkdir -p "$state_dir"
chown "$user:" "$state_dir" 2>/dev/null || chown "$user" "$state_dir"
chmod 0700 "$state_dir"

# Swap the install dir whole: a half-copied tree is never what runs.
mkdir -p "$(dirname "$prefix")"
rm -rf "$prefix.new" "$prefix.old"
mv "$top" "$prefix.new"
chown -R 0:0 "$prefix.new"
chmod 0755 "$prefix.new"
[ -e "$prefix" ] && mv "$prefix" "$prefix.old"
mv "$prefix.new" "$prefix"
rm -rf "$prefix.old"

mkdir -p "$etc_dir"
chmod 0755 "$etc_dir"
if [ -n "$join_token" ]; then
	(umask 077 && printf '%s\n' "$join_token" >"$token_path.tmp")
	chown "$user:" "$token_path.tmp" 2>/dev/null || chown "$user" "$token_path.tmp"
	mv -f "$token_path.tmp" "$token_path"
fi
(
	umask 077
	{
		echo "# Written by install-agent.sh; read by ctxbench-agent.service (EnvironmentFile)."
		echo "CTXBENCH_AGENT_SERVER=$server"
		echo "CTXBENCH_AGENT_JOIN_TOKEN_FILE=$token_path"
		[ -z "$ca_fingerprint" ] || echo "CTXBENCH_AGENT_CA_FINGERPRINT=$ca_fingerprint"
		[ "$insecure" != true ] || echo "CTXBENCH_AGENT_INSECURE=true"
		[ -z "$name" ] || echo "CTXBENCH_AGENT_NAME=$name"
		[ -z "$labels" ] || echo "CTXBENCH_AGENT_LABELS=$labels"
		echo "CTXBENCH_AGENT_STATE_DIR=$state_dir"
		echo "CTXBENCH_AGENT_KERNELS=$prefix/kernels"
	} >"$env_file.tmp"
)
mv -f "$env_file.tmp" "$env_file"

start_cmd="sh -c 'set -a; . $env_file; exec setpriv --reuid=$user --regid=$user --init-groups $prefix/bin/ctxbench-agent'"
if [ "$no_service" -eq 1 ]; then
	if [ -n "$old_version" ]; then
		say "upgraded ctxbench-agent from $old_version to $new_version in $prefix (no systemd unit)"
	else
		say "installed ctxbench-agent $new_version into $prefix (no systemd unit)"
	fi
	if [ -n "$running" ]; then
		say "the agent still running (pid $running) runs ${old_version:-the old version} from the replaced files: stop it and start it again with:"
	elif [ -n "$old_version" ]; then
		say "start the agent (as root; it drops to user $user and keeps its identity):"
	else
		say "start the agent (as root; it drops to user $user and enrolls on its first start):"
	fi
	echo "  $start_cmd"
else
	sed "s|/opt/ctxbench|$prefix|g" "$prefix/share/ctxbench-agent.service" >"$unit.tmp"
	mv -f "$unit.tmp" "$unit"
	systemctl daemon-reload
	systemctl enable ctxbench-agent.service >/dev/null 2>&1
	systemctl restart ctxbench-agent.service
	if [ -n "$old_version" ]; then
		say "upgraded ctxbench-agent from $old_version to $new_version in $prefix and restarted ctxbench-agent.service"
	else
		say "installed ctxbench-agent $new_version into $prefix and started ctxbench-agent.service"
	fi
	say "logs: journalctl -u ctxbench-agent -f"
fi
say "the host appears on the explorer's Add hosts page ($url) once the agent has connected"
