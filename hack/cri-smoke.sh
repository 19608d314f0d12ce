#!/usr/bin/env bash
# Checks the private containerd started by containerd-up.sh through CRI with
# crictl: runs a pod sandbox under /$CGROUP_PARENT, starts a busybox container
# in it, checks it runs with an address on $CNI_SUBNET, runs `id -u` in it,
# then stops and removes both. Leaves nothing behind, also on failure.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

need_root
[ -f "$NODEKIT_ENV_FILE" ] || die "$NODEKIT_ENV_FILE not found: run hack/containerd-up.sh first"
# shellcheck source=/dev/null
. "$NODEKIT_ENV_FILE"

crictl() { "$NODEKIT_CRICTL" "$@" 2>/dev/null; }
field() { crictl "$1" -o go-template --template "$3" "$2"; }

work=$(mktemp -d /tmp/nodekit-smoke.XXXXXX)
pod=
cleanup() {
	[ -n "$pod" ] && { crictl stopp "$pod" >/dev/null || true; crictl rmp -f "$pod" >/dev/null || true; }
	rm -rf "$work"
}
trap cleanup EXIT

uid=smoke-$$-$RANDOM
cat >"$work/pod.json" <<EOF
{
  "metadata": {"name": "smoke", "namespace": "nodekit-smoke", "uid": "$uid", "attempt": 0},
  "log_directory": "$work/logs",
  "linux": {"cgroup_parent": "$NODEKIT_CGROUP_PARENT/$uid"}
}
EOF
cat >"$work/ctr.json" <<EOF
{
  "metadata": {"name": "sleeper"},
  "image": {"image": "$NODEKIT_TEST_IMAGE"},
  "command": ["sh", "-c", "trap \"exit 0\" TERM; sleep 3600 & wait"],
  "log_path": "sleeper.log"
}
EOF
mkdir -p "$work/logs"

pod=$(crictl runp "$work/pod.json") || die "crictl runp failed (see $CD_LOG)"
ctr=$(crictl create "$pod" "$work/ctr.json" "$work/pod.json") || die "crictl create failed"
crictl start "$ctr" >/dev/null || die "crictl start failed"

state=$(field inspect "$ctr" '{{.status.state}}')
[ "$state" = CONTAINER_RUNNING ] || die "container state is $state, want CONTAINER_RUNNING"
ip=$(field inspectp "$pod" '{{.status.network.ip}}')
prefix=${CNI_SUBNET%.*}.
[[ "$ip" == "$prefix"* ]] || die "pod IP is '$ip', want one on $CNI_SUBNET"
cg=$(field inspect "$ctr" '{{.info.runtimeSpec.linux.cgroupsPath}}')
[[ "$cg" == "$NODEKIT_CGROUP_PARENT/$uid/"* ]] || die "container cgroup is $cg, want one under $NODEKIT_CGROUP_PARENT/$uid"
out=$(crictl exec "$ctr" id -u) || die "crictl exec failed"
[ "$out" = 0 ] || die "id -u printed '$out', want 0"

t0=$(date +%s%N)
crictl stop --timeout 10 "$ctr" >/dev/null || die "crictl stop failed"
ms=$((($(date +%s%N) - t0) / 1000000))
code=$(field inspect "$ctr" '{{.status.exitCode}}')
[ "$code" = 0 ] || die "container exit code is $code after stop, want 0 (TERM trapped)"
crictl rm "$ctr" >/dev/null || die "crictl rm failed"
crictl stopp "$pod" >/dev/null || die "crictl stopp failed"
crictl rmp "$pod" >/dev/null || die "crictl rmp failed"
pod=
log "CRI smoke test passed: pod IP $ip, cgroup $cg, id -u = $out, stop took ${ms}ms"
