#!/usr/bin/env bash
# Refreshes internal/redact/rules/gitleaks.toml from a gitleaks release
# through the Go module proxy, and prints the checksum and version to put in
# internal/redact/redact.go (GitleaksVersion, gitleaksSHA256).
# Usage: scripts/update-gitleaks-rules.sh v8.30.1
set -euo pipefail
version=${1:?usage: $0 VERSION (for example v8.30.1)}
cd "$(dirname "$0")/.."
dir=$(go mod download -json "github.com/zricethezav/gitleaks/v8@${version}" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
[ -n "$dir" ] || { echo "could not download gitleaks ${version}" >&2; exit 1; }
install -m 0644 "$dir/config/gitleaks.toml" internal/redact/rules/gitleaks.toml
install -m 0644 "$dir/LICENSE" internal/redact/rules/LICENSE.gitleaks
echo "GitleaksVersion = \"${version}\""
echo "gitleaksSHA256  = \"$(sha256sum internal/redact/rules/gitleaks.toml | cut -d' ' -f1)\""
