#!/usr/bin/env bash
# Fetches bun at the judge image's pin (hack/judge-rootfs.sh: npm's @oven/bun-linux-x64, its integrity checked) into
# bin/bun/VERSION once, and prints its path. AgentV 4.42's document-extraction example grades with `bun run`, so
# internal/cli/check's TestAgentV442Parity needs it, as hack/agentv442-oracle.sh did to record it; `make test-unit`
# runs this first.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

eval "$(grep -E '^BUN_(PACKAGE|VERSION|INTEGRITY)=' "$ROOT/hack/judge-rootfs.sh")"
BUN="$ROOT/bin/bun/$BUN_VERSION/bun"
if [ ! -x "$BUN" ]; then
  command -v npm >/dev/null || die "npm is missing (hack/nodejs.sh installs nodejs)"
  log "fetching $BUN_PACKAGE@$BUN_VERSION"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent --json "$BUN_PACKAGE@$BUN_VERSION" >pack.json) || die "npm pack $BUN_PACKAGE@$BUN_VERSION failed"
  got="$(sed -n 's/.*"integrity": *"\([^"]*\)".*/\1/p' "$tmp/pack.json" | head -n 1)"
  [ "$got" = "$BUN_INTEGRITY" ] || die "$BUN_PACKAGE@$BUN_VERSION has integrity '$got', want $BUN_INTEGRITY"
  tar -xzf "$tmp"/*.tgz -C "$tmp" package/bin/bun
  mkdir -p "$(dirname "$BUN")"
  install -m 0755 "$tmp/package/bin/bun" "$BUN"
fi
echo "$BUN"
