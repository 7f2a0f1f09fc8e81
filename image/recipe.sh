#!/usr/bin/env bash
# Runs the README's container recipe as written (the block after "docker
# load -i xblcall-mock.tar", but for the line of the user's own my-tests):
# a network, the mock by the real host names as its aliases, the CA on a
# volume, a client in a second container reaching
# https://profile.xboxlive.com by name, and the clean-up. It loads the image
# tarball image/build.sh made into a dockerd of its own (Debian's docker.io,
# installed when missing), whose socket and data root live in a temporary
# directory, and stops it all at the end. It checks that the client printed
# the mock's gamertag and that the mock's log holds no --admin-token.
#
#   bash image/recipe.sh xblcall-mock.tar
#
# When dockerd cannot start here (its log says it was denied privileges
# for its mounts, cgroups or networks), it says why and exits 0: the recipe
# was not run. Any other failure exits 1, a dockerd that refused its own
# command line or never answered too.
set -euo pipefail
cd "$(dirname "$0")/.."
img=$(realpath "$1")
export PATH="$(go env GOPATH)/bin:$PATH"
go install ./cmd/xblcall # the recipe's lines call it on the host: this tree's, not one installed before

if ! command -v dockerd >/dev/null; then
	echo "installing docker.io (Debian's: dockerd, containerd, runc)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq docker.io >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq docker.io >/dev/null; }
fi
run=$(mktemp -d /tmp/fgrl-docker.XXXXXX)
export DOCKER_HOST=unix://$run/docker.sock
dockerd_pid=
cleanup() {
	docker rm -f xblmock >/dev/null 2>&1 || true
	docker network rm xbl >/dev/null 2>&1 || true
	docker volume rm xblca >/dev/null 2>&1 || true
	if [ -n "$dockerd_pid" ]; then
		kill "$dockerd_pid" 2>/dev/null || true
		for _ in $(seq 100); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.1; done
	fi
	# A dockerd that failed may leave mounts under $run: undo them first.
	awk -v run="$run" '$2 == run || index($2, run "/") == 1 {print $2}' /proc/mounts 2>/dev/null | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null || true; done
	rm -rf "$run" 2>/dev/null || true
}
trap cleanup EXIT

echo "starting dockerd (socket and data root in $run)"
dockerd --host "$DOCKER_HOST" --data-root "$run/root" --exec-root "$run/exec" --pidfile "$run/docker.pid" \
	>"$run/dockerd.log" 2>&1 &
dockerd_pid=$!
for _ in $(seq 300); do
	docker version >/dev/null 2>&1 && break
	kill -0 "$dockerd_pid" 2>/dev/null || break
	sleep 0.2
done
if ! docker version >/dev/null 2>&1; then
	# Only a machine's refusal is a reason to skip: the error dockerd ended
	# with (its last line, or a fatal one; not its routine lines:
	# containerd logs loading its cgroups plugin in every start) says it
	# was denied a privilege, a mount or its cgroups. Words that only name
	# a subsystem (cgroup, iptables) are no denial: dockerd's refusals of
	# its own options name them too. A dockerd that refused its command
	# line, or never answered, is a failure of the recipe.
	denied="operation not permitted|permission denied|read-only file system|failed to mount|must be run as root|needs to be started with root privileges|cgroups? (mountpoint does not exist|isn't mounted|is not mounted)|no cgroup mount found"
	fatal=$( (grep -iE 'failed to start daemon|error starting daemon|level=fatal' "$run/dockerd.log" || true; grep -v '^[[:space:]]*$' "$run/dockerd.log" | tail -n 1) || true)
	if kill -0 "$dockerd_pid" 2>/dev/null || ! grep -qiE "$denied" <<<"$fatal"; then
		echo "dockerd did not start, for no reason of this machine's privileges; its log ends:"
		tail -n 5 "$run/dockerd.log" | sed 's/^/  /'
		exit 1
	fi
	echo "SKIP: dockerd cannot start here (denied by this machine), the container recipe was not run; its log ends:"
	tail -n 5 "$run/dockerd.log" | sed 's/^/  /'
	exit 0
fi

echo "loading $img"
docker load -i "$img"
export ADMIN_TOKEN=recipe-secret-$RANDOM$RANDOM$RANDOM
block=$(python3 - README.md <<'PY'
import sys
s = open(sys.argv[1]).read()
s = s[s.index("docker load -i xblcall-mock.tar"):]
s = s[s.index("```sh") + 5:]
print(s[:s.index("```")].replace("\\\n", " "))
PY
)
out=$run/out
while IFS= read -r line; do
	case $line in "" | *my-tests*) continue ;; esac
	echo "+ $line"
	bash -c "$line" >"$out" 2>&1 || { cat "$out"; echo "the README's line failed: $line" >&2; exit 1; }
	cat "$out"
	case $line in *" call https://profile.xboxlive.com/"*)
		grep -q '"MockPlayer"' "$out" || { echo "the client in the second container printed no gamertag" >&2; exit 1; } ;;
	esac
	case $line in "until docker logs xblmock"*)
		if docker logs xblmock 2>&1 | grep -qF "$ADMIN_TOKEN"; then
			echo "the mock's log holds the --admin-token it was given" >&2
			exit 1
		fi ;;
	esac
done <<<"$block"
docker ps -a --format '{{.Names}}' | grep -qx xblmock && { echo "the recipe left xblmock running" >&2; exit 1; }
echo "the README's container recipe ran as written"
