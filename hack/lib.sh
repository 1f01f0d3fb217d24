# hack/lib.sh: what every hack/ script shares. Source it first:
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# It sets ROOT (the repository) and cds there, and defines log and die (prefixed with the script's name),
# k8s_version (the Kubernetes release the module builds against), build_pinned_tool (a tool built once from a
# wrapper module under hack/ and cached under bin/) and render (a configuration template with named ${VARS}).

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
LOG_PREFIX="${LOG_PREFIX:-$(basename "$0" .sh)}"

log() { printf '%s: %s\n' "$LOG_PREFIX" "$*" >&2; }
die() { printf '%s: error: %s\n' "$LOG_PREFIX" "$*" >&2; exit 1; }

# k8s_version prints the Kubernetes release derived from go.mod: k8s.io/api v0.Y.Z -> v1.Y.Z (K8S_VERSION, when
# set, wins).
k8s_version() {
  if [ -n "${K8S_VERSION:-}" ]; then
    echo "$K8S_VERSION"
    return
  fi
  local api
  api="$(cd "$ROOT" && go list -m -f '{{.Version}}' k8s.io/api)"
  echo "v1.${api#v0.}"
}

# k8s_bin prints the folder of the Kubernetes binaries (hack/k8s-binaries.sh builds them there).
k8s_bin() { echo "$ROOT/bin/k8s/$(k8s_version)"; }

# pinned_version MODULE_DIR MODULE prints the version of MODULE that the wrapper module in MODULE_DIR pins.
# apt_install PKG...: installs Debian packages (no recommends), updating the package lists only when the first
# attempt fails; waits up to five minutes for a dpkg lock another install holds. Dies naming the packages.
apt_install() {
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  command -v apt-get >/dev/null || die "$* missing and there is no apt-get to install them"
  local apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 -y -q)
  log "installing $*"
  "${apt[@]}" install --no-install-recommends "$@" >/dev/null ||
    { "${apt[@]}" update >/dev/null && "${apt[@]}" install --no-install-recommends "$@" >/dev/null; } ||
    die "apt-get install $* failed"
}

pinned_version() { (cd "$ROOT/$1" && go list -m -f '{{.Version}}' "$2"); }

# build_pinned_tool MODULE_DIR PACKAGE BIN builds PACKAGE, pinned by the wrapper module MODULE_DIR (outside the
# project's main module: its tools.go imports PACKAGE, its go.sum verifies the whole dependency graph), into BIN
# unless BIN is already there: static, stripped, niced. BUILD_TAGS, when set, are passed to go build -tags. It
# prints BIN. One build of BIN at a time: a caller finding another build of it under way (BIN.lock held, e.g. by
# make test's background build, hack/e2e-tools.sh) waits for it and uses its result (or builds it, if it failed).
build_pinned_tool() {
  local dir="$1" pkg="$2" bin="$3" start lock
  if [ -x "$bin" ]; then
    echo "$bin"
    return
  fi
  mkdir -p "$(dirname "$bin")"
  exec {lock}>"$bin.lock"
  if ! flock -n "$lock"; then
    log "waiting for the build of $(basename "$bin") under way"
    flock "$lock"
  fi
  if [ -x "$bin" ]; then
    exec {lock}>&-
    echo "$bin"
    return
  fi
  start=$(date +%s)
  log "building $pkg ($(basename "$bin"), static, CGO_ENABLED=0)"
  # GOFLAGS is reset so a caller's flags (-mod=vendor and the like) cannot reach the module; -mod=readonly makes a
  # stale go.sum an error instead of a silent rewrite.
  (cd "$ROOT/$dir" && CGO_ENABLED=0 GOFLAGS=-mod=readonly nice -n 10 go build -trimpath -tags "${BUILD_TAGS:-}" -ldflags "-s -w" -o "$bin.tmp" "$pkg")
  mv "$bin.tmp" "$bin"
  exec {lock}>&-
  log "built $bin in $(($(date +%s) - start))s ($(du -h "$bin" | cut -f1))"
  echo "$bin"
}

# render TEMPLATE NAME...: prints TEMPLATE with every ${NAME} replaced by the value of the shell variable NAME, for
# the NAMEs given and nothing else: no other $, backquote or backslash is expanded, so a template is the file it
# writes, byte for byte, except for those placeholders. A NAME that is unset, or a ${NAME} left in the output that
# the caller did not name, is an error (a template and its writer cannot drift apart silently).
render() {
  local tmpl="$1" text rest name; shift
  [ -f "$tmpl" ] || die "render: no template $tmpl"
  IFS= read -r -d '' text < "$tmpl" || true
  rest="$text"
  for name in "$@"; do
    [ -n "${!name+set}" ] || die "render $tmpl: $name is not set"
    rest="${rest//"\${$name}"/}"
  done
  # Checked on the template, not the output: a value may itself contain "${...}".
  if [[ "$rest" =~ \$\{[A-Za-z_][A-Za-z0-9_]*\} ]]; then
    die "render $tmpl: ${BASH_REMATCH[0]} is not among the names given ($*)"
  fi
  for name in "$@"; do
    # Quoted pattern and replacement: the value is inserted as is (no glob, no & of patsub_replacement).
    text="${text//"\${$name}"/"${!name}"}"
  done
  printf '%s' "$text"
}
