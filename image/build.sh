#!/usr/bin/env bash
# Builds the container image of xblcall mock, daemonless, into an image
# tarball (docker load / podman load / crane push take it):
#
#   bash image/build.sh [OUT.tar] [TAG]     # default xblcall-mock.tar, xblcall-mock:latest
#
# The image holds one static binary (/usr/local/bin/xblcall) and an empty
# /ca the image's user owns (for --ca-out on a volume), runs as user 65532
# (not root), serves plain HTTP on 8080 (the
# services, the CONNECT proxy, the live page at /_fgrl/) and HTTPS on 8443,
# and exposes both. The same binary serves xblcall proxy (--entrypoint
# /usr/local/bin/xblcall, then proxy --addr 0.0.0.0:3128 --access-token
# ...). crane (go-containerregistry) assembles it: a layer on
# the empty base, then the config, through a registry that crane serves on
# loopback for the few seconds the build takes; nothing leaves the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-xblcall-mock.tar}")
tag=${2:-xblcall-mock:latest}
export PATH="$(go env GOPATH)/bin:$PATH"
if ! command -v crane >/dev/null || ! crane version | grep -q '^v0.22.1$'; then
	echo "== installing crane v0.22.1 (go install: downloads and compiles go-containerregistry, a minute or two the first time)"
	go install github.com/google/go-containerregistry/cmd/crane@v0.22.1
fi
work=$(mktemp -d)
registry=
cleanup() {
	[ -z "$registry" ] || kill "$registry" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

echo "== compiling xblcall: static, linux/amd64, trimmed (the image's one binary)"
mkdir -p "$work/root/usr/local/bin"
CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -ldflags=-s -o "$work/root/usr/local/bin/xblcall" ./cmd/xblcall
mkdir -m 755 "$work/root/ca" # for --ca-out on a volume: the image's user owns it, so a new volume does too
# Modes as the image needs them whatever this machine's umask (027 would
# leave the binary and its directories 0750, root's: the image's user could
# not run it): directories 0755, the binary 0755.
tar --owner=0 --group=0 --numeric-owner --mode=u=rwX,go=rX --mtime=@0 --sort=name -C "$work/root" -cf "$work/layer.tar" usr
tar --owner=65532 --group=65532 --numeric-owner --mtime=@0 -C "$work/root" -rf "$work/layer.tar" ca

echo "== assembling the image: a layer on the empty base, its config, through a registry crane serves on loopback"
crane registry serve --address 127.0.0.1:0 >"$work/registry.log" 2>&1 &
registry=$!
for _ in $(seq 100); do
	port=$(grep -o 'port [0-9]*' "$work/registry.log" | grep -o '[0-9]*$' || true)
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || { cat "$work/registry.log"; echo "crane registry did not start" >&2; exit 1; }
ref=127.0.0.1:$port/xblcall-mock
crane append --oci-empty-base -f "$work/layer.tar" -t "$ref:layer" >/dev/null
crane mutate "$ref:layer" -t "$ref:latest" --set-platform linux/amd64 --user 65532:65532 \
	--entrypoint /usr/local/bin/xblcall,mock --cmd --addr,0.0.0.0:8080,--https,0.0.0.0:8443 \
	--exposed-ports 8080/tcp,8443/tcp -l org.opencontainers.image.title=xblcall-mock >/dev/null
echo "== writing the tarball, tagged $tag"
crane pull "$ref:latest" "$work/pulled.tar"
# The tarball names the image by the loopback registry's address: name it
# by the tag asked for, so that docker load and podman load give it that.
mkdir "$work/image"
tar -C "$work/image" -xf "$work/pulled.tar"
python3 - "$work/image/manifest.json" "$tag" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m[0]["RepoTags"] = [sys.argv[2]]
json.dump(m, open(sys.argv[1], "w"))
PY
tar --owner=0 --group=0 --numeric-owner -C "$work/image" -cf "$out.tmp" .
mv "$out.tmp" "$out"
echo "$out: $tag ($(crane digest "$ref:latest"))"
