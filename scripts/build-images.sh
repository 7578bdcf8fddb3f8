#!/usr/bin/env bash
# Builds Fetch's two images on a locally made base, without a registry:
# fetch (Dockerfile) and fetch-kennel (Dockerfile.kennel, no coding CLIs
# unless CLIS is set). The binaries are built here first: fetch statically
# linked (SQLite needs cgo), fetch-shim without cgo.
# Usage: scripts/build-images.sh [TAG]   (default latest)
#   BASE  base image for both (default fetch-base:bookworm, made by
#         scripts/kennel-base.sh when missing)
#   CLIS  coding CLIs for the kennel, e.g. "claude codex" (default none)
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${1:-latest}
base=${BASE:-fetch-base:bookworm}
if [ "$base" = fetch-base:bookworm ]; then
  scripts/kennel-base.sh "$base"
fi
mkdir -p build
CGO_ENABLED=1 go build -trimpath -tags 'osusergo netgo sqlite_omit_load_extension' \
  -ldflags '-linkmode external -extldflags -static' -o build/fetch ./cmd/fetch
CGO_ENABLED=0 go build -trimpath -o build/fetch-shim ./cmd/fetch-shim
docker build -q -f Dockerfile --build-arg BASE="$base" -t "fetch:$tag" . >/dev/null
docker build -q -f Dockerfile.kennel --build-arg BASE="$base" --build-arg CLIS="${CLIS:-}" -t "fetch-kennel:$tag" . >/dev/null
# The images start: fetch answers, the kennel has its shim.
docker run --rm "fetch:$tag" version
docker run --rm --network none "fetch-kennel:$tag" fetch-shim ps --state /nonexistent >/dev/null
echo "build-images: fetch:$tag and fetch-kennel:$tag on $base"
