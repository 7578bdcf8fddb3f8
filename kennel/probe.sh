# The kennel probe (see Probe): run by sh in a kennel container, as the
# kennel's user, in the workspace; "$@" are the program names to look for.
# It prints one KEY=VALUE line per fact and never fails itself. Nothing of
# the arguments is ever evaluated: they are only quoted operands.
echo "uid=$(id -u)"
echo "gid=$(id -g)"
while IFS=: read -r key value; do
  case "$key" in
    CapEff) echo "capeff=$(echo $value)" ;;
    NoNewPrivs) echo "nonewprivs=$(echo $value)" ;;
  esac
done < /proc/self/status
if (: > /.fetch-probe) 2>/dev/null; then rm -f /.fetch-probe; echo "rootfs=rw"; else echo "rootfs=ro"; fi
for s in /var/run/docker.sock /run/docker.sock; do
  if [ -e "$s" ]; then echo "docker_socket=$s"; fi
done
for f in /sys/fs/cgroup/memory.max /sys/fs/cgroup/memory/memory.limit_in_bytes; do
  if [ -r "$f" ]; then echo "memory=$(cat "$f")"; break; fi
done
for f in /sys/fs/cgroup/pids.max /sys/fs/cgroup/pids/pids.max; do
  if [ -r "$f" ]; then echo "pids=$(cat "$f")"; break; fi
done
probe="$PWD/.fetch-probe-$$"
if err=$( { echo probe > "$probe"; } 2>&1 ); then
  rm -f "$probe"
  echo "workspace=writable"
else
  echo "workspace_error=$(echo "$err" | head -n 1)"
fi
for p in "$@"; do
  if path=$(command -v "$p"); then
    version=$(timeout 20 "$path" --version </dev/null 2>&1 | head -n 1)
    echo "program=$p	$path	$version"
  else
    echo "missing=$p"
  fi
done
