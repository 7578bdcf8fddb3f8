#!/usr/bin/env bash
# Builds the local base image for Dockerfile.kennel from Debian packages, for machines
# without an image registry. Usage: scripts/kennel-base.sh [IMAGE]  (default fetch-base:bookworm)
# Installs mmdebstrap with apt-get when it is missing (needs root).
set -euo pipefail
image=${1:-fetch-base:bookworm}
if docker image inspect "$image" >/dev/null 2>&1; then
  echo "kennel-base: $image already present"
  exit 0
fi
# Test packages run in parallel and may all find the image missing: one
# builds it while the others wait. The lock is per user: another user's
# lock file is not writable here.
exec 9>"${TMPDIR:-/tmp}/fetch-kennel-base.$(id -u).lock"
flock 9
if docker image inspect "$image" >/dev/null 2>&1; then
  echo "kennel-base: $image already present"
  exit 0
fi
if ! command -v mmdebstrap >/dev/null 2>&1; then
  echo "kennel-base: installing mmdebstrap"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null
fi
echo "kennel-base: building $image with mmdebstrap"
mmdebstrap --quiet --variant=minbase --include=git,ca-certificates,tini,procps bookworm - | docker import - "$image" >/dev/null
echo "kennel-base: built $image"
