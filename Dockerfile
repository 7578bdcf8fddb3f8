# Fetch itself: the image that runs `fetch serve` (see compose.yaml).
#
# Build (from the repository root). The binary is built outside the image —
# no registry is needed for a Go toolchain image — and linked statically,
# since SQLite needs cgo, so that it runs on any base:
#   CGO_ENABLED=1 go build -trimpath -tags 'osusergo netgo sqlite_omit_load_extension' \
#       -ldflags '-linkmode external -extldflags -static' -o build/fetch ./cmd/fetch
#   docker build -t fetch:latest .
#
# Build arguments:
#   BASE   the base image, Debian-based (apt-get): CA certificates, git and
#          tini are installed unless it has them. debian:bookworm-slim by
#          default; fetch-base:bookworm (scripts/kennel-base.sh) where no
#          registry is reachable (CI, tests).
#   FETCH  path of the fetch binary in the build context.
#
# Fetch talks to the Docker engine to run the kennel: compose.yaml gives it
# the socket (and the socket's group). The kennel never gets it.
ARG BASE=debian:bookworm-slim
FROM ${BASE}

ARG FETCH=build/fetch

RUN set -eu; \
    missing=""; \
    for p in ca-certificates git tini; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done; \
    if [ -n "$missing" ]; then \
      apt-get update; \
      DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing; \
      rm -rf /var/lib/apt/lists/*; \
    fi

# The same uid/gid as the kennel's user, so that both can write the
# workspaces.
RUN groupadd --gid 10001 fetch && \
    useradd --uid 10001 --gid 10001 --home-dir /home/fetch --create-home --shell /usr/sbin/nologin fetch && \
    install -d -o 10001 -g 10001 -m 0700 /data

COPY ${FETCH} /usr/local/bin/fetch
RUN chmod 0755 /usr/local/bin/fetch && /usr/local/bin/fetch version

USER 10001:10001
ENV HOME=/home/fetch FETCH_DATA_DIR=/data
VOLUME ["/data"]
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/fetch"]
CMD ["serve"]
