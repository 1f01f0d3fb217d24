#!/usr/bin/env bash
# Installs Debian's chromium when it is missing (the report's browser tests drive it headless through chromedp)
# and prints its path.
#
#   hack/chromium.sh        prints the browser's path (installs the chromium package the first time)
#
# `make test-unit` runs it, so a fresh CI machine gets the browser the way hack/cluster/host.sh gets containerd:
# apt-get, with the package lists updated only when the first install attempt fails. apt-get waits up to five
# minutes for the dpkg lock another install holds. Tests find the browser through EVALRUN_CHROMIUM.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

find_chromium() {
  local c
  for c in chromium chromium-browser; do
    if command -v "$c" >/dev/null; then
      command -v "$c"
      return 0
    fi
  done
  return 1
}

if find_chromium; then
  exit 0
fi
apt_install chromium
find_chromium || die "chromium was installed but is not on PATH"
