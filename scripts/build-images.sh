#!/usr/bin/env bash
# Builds Fetch's images on a base image, without needing a registry:
# fetch-kennel (Dockerfile.kennel: the sandbox, with the coding CLIs you
# name) and fetch (Dockerfile: Fetch itself, for Docker Compose).
usage() {
  cat <<'EOF'
Usage: scripts/build-images.sh [--cli LIST] [--kennel-only] [--kennel-image NAME] [--dry-run] [TAG]

Builds fetch-kennel:TAG (the sandbox the coding CLIs run in) and, unless
--kennel-only, fetch:TAG (Fetch itself, for compose.yaml). TAG is latest
by default.

  --cli LIST           the coding CLIs to install in the kennel, comma
                       separated: claude, codex, gemini, copilot, opencode,
                       qwen, aider (each at the version Fetch is tested with,
                       from npm or PyPI), or NAME=FILE to install the local
                       executable FILE under the CLI's name NAME (also
                       cursor-agent=FILE, or cursor=FILE: the cursor
                       harness runs cursor-agent). A task needs its CLI in
                       the kennel.
  --kennel-only        build only the kennel image (enough for fetch chat,
                       fetch serve and fetch task run outside Compose)
  --kennel-image NAME  name the kennel image NAME instead of fetch-kennel:TAG
                       (then set FETCH_KENNEL_IMAGE=NAME)
  --dry-run            check the arguments and say what would be built;
                       build nothing

CLIs from npm (all but aider) need https://registry.npmjs.org reachable,
aider needs https://pypi.org: without them, give the executable with
NAME=FILE. A failed build leaves no container and no untagged image.

Environment:
  BASE   the base image of both, Debian-based (default fetch-base:bookworm,
         built here from Debian packages by scripts/kennel-base.sh when
         missing, which needs root for apt-get the first time; with a
         registry, BASE=debian:bookworm-slim works too). Gemini and Qwen
         need Node >= 20, Copilot >= 22: use e.g. BASE=node:22-bookworm-slim.
  CLIS   the same as --cli, space or comma separated (--cli wins)

Examples:
  scripts/build-images.sh --kennel-only --cli claude
  scripts/build-images.sh --cli claude,codex
  scripts/build-images.sh --kennel-only --cli claude=$HOME/bin/claude
EOF
}
set -euo pipefail
cd "$(dirname "$0")/.."

clis=${CLIS:-}
kennel_only=
kennel_image=
dry_run=
tag=
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help|help) usage; exit 0 ;;
    --cli) [ $# -ge 2 ] || { echo "build-images: --cli needs a list, e.g. --cli claude,codex" >&2; exit 2; }
           clis=$2; shift 2 ;;
    --cli=*) clis=${1#--cli=}; shift ;;
    --kennel-only) kennel_only=1; shift ;;
    --dry-run) dry_run=1; shift ;;
    --kennel-image) [ $# -ge 2 ] || { echo "build-images: --kennel-image needs a name" >&2; exit 2; }
                    kennel_image=$2; shift 2 ;;
    --kennel-image=*) kennel_image=${1#--kennel-image=}; shift ;;
    -*) echo "build-images: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) [ -z "$tag" ] || { echo "build-images: one TAG only (got $tag and $1)" >&2; exit 2; }
       tag=$1; shift ;;
  esac
done
tag=${tag:-latest}
kennel_image=${kennel_image:-fetch-kennel:$tag}
base=${BASE:-fetch-base:bookworm}

# The CLIs: names for the package managers, NAME=FILE copied from here.
packaged=""
files=build/clis
if [ -z "$dry_run" ]; then
  rm -rf "$files"
  mkdir -p "$files"
  touch "$files/.keep"
fi
# cursor is the harness's name (--harness cursor), cursor-agent its CLI's:
# either names the CLI here.
named=""
for c in ${clis//,/ }; do
  case "$c" in
    cursor) c=cursor-agent ;;
    cursor=*) c="cursor-agent=${c#cursor=}" ;;
  esac
  named="$named $c"
done
clis=${named# }
for c in ${clis//,/ }; do
  name=${c%%=*}
  case "$name" in
    claude|codex|gemini|copilot|opencode|qwen|aider|cursor-agent) ;;
    *) echo "build-images: unknown CLI '$name' (known: claude codex gemini copilot opencode qwen aider cursor-agent, also called cursor)" >&2; exit 2 ;;
  esac
  if [ "$c" != "$name" ]; then
    file=${c#*=}
    if [ ! -f "$file" ] || [ ! -x "$file" ]; then
      echo "build-images: $name=$file: not an executable file" >&2; exit 2
    fi
    [ -n "$dry_run" ] || cp "$file" "$files/$name"
  elif [ "$name" = cursor-agent ]; then
    echo "build-images: cursor-agent (the cursor harness's CLI) has no package Fetch installs; give its executable: --cli cursor-agent=FILE (its installer: curl https://cursor.com/install -fsS | bash)" >&2; exit 2
  else
    packaged="$packaged $name"
  fi
done

installed=$(printf '%s' "${clis//,/ }" | sed 's/=[^ ]*//g')
if [ -n "$dry_run" ]; then
  echo "build-images: would build $kennel_image on $base, with CLIs: ${installed:-none}${kennel_only:+ (kennel only)}"
  [ -n "$kennel_only" ] || echo "build-images: would build fetch:$tag on $base"
  exit 0
fi

# reachable URL WHAT CLIS: the package index the build installs CLIS from
# answers, or the build stops here, before it starts, with what to do.
reachable() {
  command -v curl >/dev/null 2>&1 || return 0
  curl -fsS --max-time 20 -o /dev/null "$1" 2>/dev/null && return 0
  local hint=
  for n in $3; do hint="$hint,$n=FILE"; done
  echo "build-images: $2 ($1) could not be reached from here, so $3 cannot be installed from it; give each CLI's executable instead: --cli ${hint#,} (e.g. --cli claude=\$(command -v claude))" >&2
  exit 1
}
npm_clis=
pypi_clis=
for name in $packaged; do
  case "$name" in
    aider) pypi_clis="$pypi_clis $name" ;;
    *) npm_clis="$npm_clis $name" ;;
  esac
done
[ -z "$npm_clis" ] || reachable https://registry.npmjs.org/-/ping "npm's registry" "${npm_clis# }"
[ -z "$pypi_clis" ] || reachable https://pypi.org/simple/aider-chat/ "PyPI" "${pypi_clis# }"

# build FILE IMAGE ARGS...: docker build, its output kept in build/FILE.log.
# A failed build leaves nothing behind: --force-rm removes its containers
# and the untagged images its steps made are removed (with the untagged
# parents they alone held); its last lines and our own say what failed.
build() {
  local dockerfile=$1 image=$2 log=build/$1.log
  shift 2
  if docker build --force-rm -f "$dockerfile" "$@" -t "$image" . >"$log" 2>&1; then
    return 0
  fi
  local made
  # The images a step made: not a FROM's base, not a step's cached image;
  # of those, the last, if still untagged, holds the others.
  made=$(awk '/^Step [0-9]+\/[0-9]+ : FROM / || /^ ---> Using cache/ {skip=1; next}
              /^ ---> [0-9a-f]+$/ {if (!skip) print $2; skip=0; next} {skip=0}' "$log" | tail -n 1)
  if [ -n "$made" ] && [ "$(docker image inspect -f '{{len .RepoTags}}' "$made" 2>/dev/null)" = 0 ]; then
    docker rmi "$made" >/dev/null 2>&1 || true
  fi
  tail -n 20 "$log" >&2
  echo "build-images: building $image from $dockerfile failed (the whole output is in $log)" >&2
  exit 1
}

if [ "$base" = fetch-base:bookworm ]; then
  scripts/kennel-base.sh "$base"
fi
CGO_ENABLED=0 go build -trimpath -o build/fetch-shim ./cmd/fetch-shim
build Dockerfile.kennel "$kennel_image" --build-arg BASE="$base" --build-arg CLIS="${packaged# }"
# The kennel starts and has its shim and the CLIs asked for.
docker run --rm --network none --entrypoint /usr/local/bin/fetch-shim "$kennel_image" ps --state /nonexistent >/dev/null
for c in ${clis//,/ }; do
  name=${c%%=*}
  docker run --rm --network none --entrypoint /bin/sh "$kennel_image" -c 'command -v "$1" >/dev/null' sh "$name" ||
    { echo "build-images: $name is missing from $kennel_image" >&2; exit 1; }
done
echo "build-images: $kennel_image on $base, with CLIs: ${installed:-none}"

if [ -z "$kennel_only" ]; then
  CGO_ENABLED=1 go build -trimpath -tags 'osusergo netgo sqlite_omit_load_extension' \
    -ldflags '-linkmode external -extldflags -static' -o build/fetch ./cmd/fetch
  build Dockerfile "fetch:$tag" --build-arg BASE="$base"
  docker run --rm "fetch:$tag" version
  echo "build-images: fetch:$tag on $base"
fi
