#!/usr/bin/env bash
# Checks an image tarball that build.sh made: its config (user, entrypoint,
# ports) and that the binary in its layer runs (xblcall mock --hosts, and
# xblcall proxy on loopback), with no container runtime.
set -euo pipefail
img=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -C "$work" -xf "$img"
config=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["Config"])' "$work/manifest.json")
python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))[0]["RepoTags"]; assert t == [sys.argv[2]], t; print("tag", t[0])' "$work/manifest.json" "${2:-xblcall-mock:latest}"
python3 - "$work/$config" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["config"]
want = {"User": "65532:65532", "Entrypoint": ["/usr/local/bin/xblcall", "mock"]}
for k, v in want.items():
    assert c.get(k) == v, f"{k}: {c.get(k)!r}, want {v!r}"
assert set(c.get("ExposedPorts", {})) == {"8080/tcp", "8443/tcp"}, c.get("ExposedPorts")
print("config: user", c["User"], "entrypoint", " ".join(c["Entrypoint"]), "ports", " ".join(sorted(c["ExposedPorts"])))
PY
for layer in $(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))[0]["Layers"]))' "$work/manifest.json"); do
	python3 - "$work/$layer" <<'PY'
import sys, tarfile
members = {m.name.strip("./"): m for m in tarfile.open(sys.argv[1])}
owners = {n: m.uid for n, m in members.items()}
assert owners.get("ca") == 65532, f"/ca belongs to {owners.get('ca')}, want the image's user 65532"
assert owners.get("usr/local/bin/xblcall") == 0, owners
# The image's user (65532, not the owner) must reach and run the binary:
# every directory on its path searchable by others, the binary readable
# and executable by them.
for d in ("usr", "usr/local", "usr/local/bin"):
    assert d in members and members[d].mode & 0o001, f"/{d}: mode {oct(members[d].mode) if d in members else None}, the image's user cannot reach the binary"
assert members["usr/local/bin/xblcall"].mode & 0o005 == 0o005, f"/usr/local/bin/xblcall: mode {oct(members['usr/local/bin/xblcall'].mode)}, the image's user cannot run it"
PY
	tar -C "$work" -xf "$work/$layer"
done
# Static: an ELF file with no interpreter (PT_INTERP: the loader, which the
# image's empty base lacks) among its program headers; a static-PIE build
# has a PT_DYNAMIC of its own relocations and runs with no loader. Read
# here rather than by file(1), which a fresh machine may lack, or ldd,
# which exits 1 for a static binary.
python3 - "$work/usr/local/bin/xblcall" <<'PY'
import struct, sys
with open(sys.argv[1], "rb") as f:
    elf = f.read()
assert elf[:4] == b"\x7fELF" and elf[4] == 2 and elf[5] == 1, "not a 64-bit little-endian ELF file"
phoff, = struct.unpack_from("<Q", elf, 0x20)
phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
kinds = {struct.unpack_from("<I", elf, phoff + i * phentsize)[0] for i in range(phnum)}
assert 3 not in kinds, "a dynamically linked binary (it names a loader: PT_INTERP)"
PY
hosts=$("$work/usr/local/bin/xblcall" mock --hosts)
grep -q '^127.0.0.1 profile.xboxlive.com$' <<<"$hosts"
grep -q '^127.0.0.1 login.live.com$' <<<"$hosts"
echo "the image's binary runs: xblcall mock --hosts printed $(grep -c '^127' <<<"$hosts") hosts"
# The same binary is the proxy for other languages (README, "For code in
# other languages"): it starts on loopback and writes its CA for clients to
# trust, and off loopback it will not start without an access token.
"$work/usr/local/bin/xblcall" proxy --addr 127.0.0.1:0 --ca-out "$work/proxy-ca.pem" --log-format off >"$work/proxy.out" &
proxypid=$!
for _ in $(seq 100); do
	grep -q 'live page' "$work/proxy.out" && break
	sleep 0.1
done
kill "$proxypid"
wait "$proxypid" || true
grep -q 'live page' "$work/proxy.out"
grep -q 'BEGIN CERTIFICATE' "$work/proxy-ca.pem"
rc=0
"$work/usr/local/bin/xblcall" proxy --addr 0.0.0.0:0 >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ]
echo "the image's binary serves xblcall proxy: $(head -c 60 "$work/proxy.out")..."
