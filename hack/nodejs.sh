#!/usr/bin/env bash
# Installs Debian's nodejs when node is missing and prints its path. AgentV's composite example runs its
# aggregator script with node, so internal/cli/check's TestAgentVExamples needs it; `make test-unit` runs this first,
# so a fresh CI machine gets node the way hack/chromium.sh gets the browser.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v node >/dev/null || apt_install nodejs
command -v node || die "nodejs was installed but node is not on PATH"
