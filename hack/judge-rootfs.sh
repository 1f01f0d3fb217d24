#!/usr/bin/env bash
# Builds the judge image's root file system from Debian packages and npm's bun package, without Docker, and prints
# its directory. hack/images.sh packs it (imagepack --rootfs) as localhost/evalrun/judge:<tag>, the image the
# manager runs code_judge scripts in when spec.judging.image is unset (docs/judging.md#the-judge-image).
#
#   hack/judge-rootfs.sh        -> bin/images/judge-rootfs/<key>/root
#
# What it holds: sh (dash, also at /bin/sh), coreutils, grep, sed, diffutils, findutils, and busybox's applets for
# every other common command (awk, setsid, ps, xxd, ...: linked only where Debian's packages left no such command);
# python3 (3.11, with the
# standard library); node (Debian's nodejs 18); bun (npm's @oven/bun-linux-x64, pinned below with its integrity);
# uv (a shim, hack/judge-image/uv: `uv run script.py [args]` runs python3; uv itself is not packaged here).
#
# The packages come from this machine's apt (Debian 12): each is the highest version a repository serves
# (`apt-cache madison`: never a package only installed locally, such as another vendor's nodejs), fetched with
# `apt-get download` and unpacked with `dpkg-deb -x` (no maintainer scripts run; the few links they would make
# are made here). The result is cached under bin/images/judge-rootfs/ keyed by every package's version, bun's
# version and this script and the shim: a new Debian security update gives a new key (and a new image digest).
# Before printing, each tool is run once in the tree (chroot, when this runs as root): a missing library fails here,
# not in a judge container.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Every package unpacked into the tree. Libraries are listed by hand (not apt's dependency closure, which would pull
# in dpkg, perl and debconf for maintainer scripts that never run here); the run check below catches a missing one.
PACKAGES=(
  libc6 libgcc-s1 libstdc++6 zlib1g libssl3
  dash busybox-static coreutils libacl1 libattr1 libgmp10 libselinux1 libpcre2-8-0 grep sed diffutils findutils
  python3-minimal python3.11-minimal libpython3.11-minimal libpython3.11-stdlib libexpat1 libffi8 libbz2-1.0
  liblzma5 libsqlite3-0 libuuid1 libcrypt1 libncursesw6 libtinfo6 libreadline8 media-types
  nodejs libnode108 libbrotli1 libc-ares2 libicu72 libnghttp2-14 libuv1 node-acorn node-xtend
  node-cjs-module-lexer node-undici node-busboy
)
BUN_PACKAGE=@oven/bun-linux-x64
BUN_VERSION=1.4.5
BUN_INTEGRITY=sha512-IWX9BELoGHAUtMonkeSaNaZwXzRk+oDw6Mk+HBFXd3KHYIBNBsIGRupMZPcgNoDbJpLu6gAJjIoIVPZtt1aJ1g==
UV_SHIM="$ROOT/hack/judge-image/uv"

command -v apt-cache >/dev/null || die "the judge image is built from Debian packages: apt-cache is missing"
command -v dpkg-deb >/dev/null || die "dpkg-deb is missing"
command -v npm >/dev/null || die "npm is missing (hack/nodejs.sh installs nodejs; npm fetches bun's package)"

# resolve: pins (PKG=VERSION, each the highest version a repository serves) and missing (PKG apt knows none of).
resolve() {
  local table p v
  table="$(apt-cache madison "${PACKAGES[@]}" 2>/dev/null | awk -F'|' '{gsub(/ /, "", $1); gsub(/ /, "", $2); if (!seen[$1]++) print $1 "=" $2}')"
  pins=()
  missing=()
  for p in "${PACKAGES[@]}"; do
    v="$(printf '%s\n' "$table" | awk -v p="$p" 'index($0, p "=") == 1 {print substr($0, length(p) + 2)}')"
    if [ -n "$v" ]; then pins+=("$p=$v"); else missing+=("$p"); fi
  done
}
resolve
if [ ${#missing[@]} -gt 0 ]; then
  log "apt knows no version of ${missing[*]}: updating the package lists"
  apt-get update -q >/dev/null || die "apt-get update failed"
  resolve
  [ ${#missing[@]} -eq 0 ] || die "no repository serves ${missing[*]} (Debian 12 packages are expected)"
fi

key="$( { printf '%s\n' "${pins[@]}" "$BUN_PACKAGE@$BUN_VERSION $BUN_INTEGRITY"; cat "${BASH_SOURCE[0]}" "$UV_SHIM"; } |
  sha256sum | cut -c1-16)"
CACHE="$ROOT/bin/images/judge-rootfs"
DIR="$CACHE/$key"
if [ -f "$DIR/done" ]; then
  echo "$DIR/root"
  exit 0
fi

log "building the judge image's root file system ($key)"
rm -rf "$DIR.tmp"
mkdir -p "$DIR.tmp/debs" "$DIR.tmp/root" "$DIR.tmp/npm"
# apt's sandbox user cannot write under bin/: download unsandboxed (the files are checked against apt's lists).
(cd "$DIR.tmp/debs" && apt-get download -q -o APT::Sandbox::User=root "${pins[@]}" >/dev/null) ||
  die "apt-get download of the judge image's packages failed"
for deb in "$DIR.tmp"/debs/*.deb; do
  dpkg-deb -x "$deb" "$DIR.tmp/root"
done
R="$DIR.tmp/root"
# What maintainer scripts or the usrmerge package would have made.
ln -sf dash "$R/bin/sh"
[ -e "$R/usr/bin/python3" ] || die "python3-minimal gave no /usr/bin/python3"
[ -e "$R/usr/bin/node" ] || ln -s nodejs "$R/usr/bin/node"
# busybox-static installs /bin/busybox only; link its applets that no Debian package above provides.
for a in $("$R/bin/busybox" --list); do
  case "$a" in busybox | sh | ash | hush) continue ;; esac
  found=0
  for d in bin usr/bin sbin usr/sbin usr/local/bin; do
    if [ -e "$R/$d/$a" ] || [ -L "$R/$d/$a" ]; then found=1; break; fi
  done
  [ "$found" = 1 ] || ln -s busybox "$R/bin/$a"
done
# Documentation, manuals and locales are of no use to a judge.
rm -rf "$R/usr/share/doc" "$R/usr/share/man" "$R/usr/share/info" "$R/usr/share/lintian" "$R/usr/share/locale"

# bun, from npm's registry: the tarball's integrity is checked against the pinned one.
(cd "$DIR.tmp/npm" && npm pack --silent --json "$BUN_PACKAGE@$BUN_VERSION" >pack.json) || die "npm pack $BUN_PACKAGE@$BUN_VERSION failed"
got="$(sed -n 's/.*"integrity": *"\([^"]*\)".*/\1/p' "$DIR.tmp/npm/pack.json" | head -n 1)"
[ "$got" = "$BUN_INTEGRITY" ] || die "$BUN_PACKAGE@$BUN_VERSION has integrity '$got', want $BUN_INTEGRITY"
tar -xzf "$DIR.tmp"/npm/*.tgz -C "$DIR.tmp/npm" package/bin/bun
mkdir -p "$R/usr/local/bin"
install -m 0755 "$DIR.tmp/npm/package/bin/bun" "$R/usr/local/bin/bun"
ln -s bun "$R/usr/local/bin/bunx"
install -m 0755 "$UV_SHIM" "$R/usr/local/bin/uv"

# Run each tool once inside the tree.
if [ "$(id -u)" -eq 0 ] && command -v chroot >/dev/null; then
  mkdir -p "$R/tmp"
  chmod 1777 "$R/tmp"
  CHROOT="$(command -v chroot)"
  in_root() { env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/tmp "$CHROOT" "$R" "$@"; }
  [ "$(in_root /bin/sh -c 'echo ok')" = ok ] || die "sh does not run in the judge root file system"
  in_root python3 -c 'import json, difflib, re, subprocess, sqlite3; print(json.dumps({"score": 1}))' >/dev/null ||
    die "python3 does not run in the judge root file system"
  in_root node -e 'process.stdout.write(JSON.stringify({score: 1}))' >/dev/null || die "node does not run in the judge root file system"
  in_root bun --version >/dev/null || die "bun does not run in the judge root file system"
  printf 'print("uv ok")\n' >"$R/tmp/check.py"
  [ "$(in_root uv run /tmp/check.py)" = "uv ok" ] || die "the uv shim does not run a Python script"
  in_root sh -c 'awk "BEGIN { exit 0 }" && setsid true && echo x | xxd' >/dev/null ||
    die "busybox's applets do not run in the judge root file system"
  in_root sh -c 'ls / | sort | head -n 1 && grep -c uv /tmp/check.py && sed -n 1p /tmp/check.py && diff /tmp/check.py /tmp/check.py && find /tmp -name check.py' >/dev/null ||
    die "coreutils, grep, sed, diff or find do not run in the judge root file system"
  rm -f "$R/tmp/check.py"
else
  log "not root: the tools are not run in the tree here (the e2e test runs them in the judge container)"
fi
rm -rf "$R/tmp"
printf '%s\n' "${pins[@]}" "$BUN_PACKAGE@$BUN_VERSION" >"$DIR.tmp/packages.txt"
rm -rf "$DIR.tmp/debs" "$DIR.tmp/npm" "$DIR"
mv "$DIR.tmp" "$DIR"
touch "$DIR/done"
# Older keys are of no further use.
find "$CACHE" -mindepth 1 -maxdepth 1 -type d ! -name "$key" -exec rm -rf {} +
echo "$DIR/root"
