#!/usr/bin/env bash
# Builds the image of a second Docker engine for tests (internal/testkit
# RemoteEngine): dockerd and sshd from Debian bookworm packages, made with
# mmdebstrap, for machines without an image registry.
# Usage: scripts/remote-engine.sh [IMAGE]  (default fetch-remote-engine:bookworm)
# Installs mmdebstrap with apt-get when it is missing (needs root).
#
# The container runs /usr/local/bin/fetch-engine under tini: it starts sshd
# (keys only, user fetch in the docker group) and then dockerd with TLS on
# tcp://0.0.0.0:2376 and the unix socket. It reads its keys and certificates
# from /etc/fetch-engine, which the test puts there before starting it:
#   ca.pem server-cert.pem server-key.pem   dockerd's TLS (--tlsverify)
#   ssh_host_key authorized_keys            sshd's host key and the user key
# Arguments given to the container are passed on to dockerd.
set -euo pipefail
image=${1:-fetch-remote-engine:bookworm}
# Test packages run in parallel and may all find the image missing: one
# builds it while the others wait.
exec 9>"${TMPDIR:-/tmp}/fetch-remote-engine.lock"
flock 9
# The image is labelled with this script's hash: a changed script rebuilds it.
sum=$(sha256sum "$0" | cut -c1-16)
have=$(docker image inspect --format '{{ index .Config.Labels "fetch.remote-engine.script" }}' "$image" 2>/dev/null || true)
if [ "$have" = "$sum" ]; then
  echo "remote-engine: $image already present"
  exit 0
fi
if ! command -v mmdebstrap >/dev/null 2>&1; then
  echo "remote-engine: installing mmdebstrap"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/fetch-engine" <<'EOF'
#!/bin/sh
# Starts sshd, then dockerd in the foreground (tini forwards signals to it).
set -eu
d=/etc/fetch-engine
for f in ca.pem server-cert.pem server-key.pem ssh_host_key authorized_keys; do
  [ -s "$d/$f" ] || { echo "fetch-engine: $d/$f is missing" >&2; exit 1; }
done
# Without --privileged the cgroup hierarchies are mounted read-only (and
# "mount -o remount,rw" answers "busy"): remount each as a read-write bind
# (needs CAP_SYS_ADMIN, no AppArmor profile). dockerd's containers then nest
# under this container's cgroups.
for m in $(awk '$3 ~ /^cgroup2?$/ && $2 ~ /^\/sys\/fs\/cgroup/ {print $2}' /proc/self/mounts); do
  mount -o remount,bind,rw "$m" || echo "fetch-engine: cannot make $m writable" >&2
done
# A restart after a stop: leftovers of the previous dockerd.
rm -f /var/run/docker.pid /var/run/docker/containerd/containerd.pid
mkdir -p /run/sshd
/usr/sbin/sshd -e \
  -o HostKey="$d/ssh_host_key" \
  -o AuthorizedKeysFile="$d/authorized_keys" \
  -o PasswordAuthentication=no -o KbdInteractiveAuthentication=no \
  -o PermitRootLogin=no -o AllowUsers=fetch -o UsePAM=no
exec dockerd \
  --host=unix:///var/run/docker.sock --host=tcp://0.0.0.0:2376 \
  --tlsverify --tlscacert="$d/ca.pem" --tlscert="$d/server-cert.pem" --tlskey="$d/server-key.pem" \
  "$@"
EOF
echo "remote-engine: building $image with mmdebstrap"
start=$(date +%s)
mmdebstrap --quiet --variant=minbase \
  --include=docker.io,containerd,runc,openssh-server,iptables,ca-certificates,tini,procps,kmod,e2fsprogs,xz-utils,pigz,iproute2 \
  --customize-hook="copy-in $work/fetch-engine /usr/local/bin" \
  --customize-hook='chmod 755 "$1/usr/local/bin/fetch-engine"' \
  --customize-hook='rm -f "$1"/etc/ssh/ssh_host_*' \
  --customize-hook='chroot "$1" useradd --create-home --shell /bin/bash --groups docker fetch' \
  --customize-hook='chroot "$1" usermod --password "*" fetch' \
  --customize-hook='mkdir -p "$1/etc/fetch-engine"' \
  bookworm - |
  docker import \
    --change 'ENTRYPOINT ["/usr/bin/tini", "-g", "--", "/usr/local/bin/fetch-engine"]' \
    --change 'CMD []' \
    --change 'EXPOSE 22 2376' \
    --change "LABEL fetch.remote-engine.script=$sum" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    - "$image" >/dev/null
echo "remote-engine: built $image in $(($(date +%s) - start))s"
