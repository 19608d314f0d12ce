#!/usr/bin/env bash
# The peer benchmark (docs/benchmarks.md, "nodekit beside the kubelet"):
# nodekit and the upstream kubelet v$KUBE_VERSION run one after the other,
# each standalone on the same private containerd with the same N static
# pods, and test/peerbench prints start CPU, steady CPU, RSS, time to all
# Running and teardown time, with nodekit's as ratios of the kubelet's.
#
# It builds what is missing (the nodekit binary from this checkout; the
# kubelet through hack/conformance/build.sh, cached), starts a containerd of
# its own (its own directory, bridge, subnet and cgroup parent: it never
# touches the e2e or conformance labs) and stops it at the end. Root is
# needed. About 1.5 minutes per agent and pod count with the default 30 s
# steady window.
#
# Usage: peer-bench.sh [--pods 10,30,100,110] [--steady 30s] [--rounds 1] [--timeout 5m] [--scrape-every 15s]
#                      [--nodekit-env K=V,...] [--nodekit-flags --flag=V,...] [--only kubelet|nodekit] [--first kubelet|nodekit]
#                      [--touched] [--keep]
# (--timeout: the longest wait for all pods to run, or to stop; 500 pods
# on a loaded 2-core machine need about 20m. --scrape-every: the period of
# the metrics-server-like GET of each agent's /metrics/resource during the
# steady window, 0 for none.) Each agent's log stays in
# $NODEKIT_TEST_DIR/work.
#
# --touched runs both agents from copies on a loop-mounted ext4 whose
# readahead is 0, each binary dropped from the page cache before it
# starts: the kernel's fault-around (64 KiB) then finds no neighbour of a
# faulted page in the page cache, so each agent's file-backed RSS is the
# pages it touched, as with /sys/kernel/debug/fault_around_bytes at 4096
# (which kernel lockdown may forbid).
set -euo pipefail
export NODEKIT_TEST_DIR=${NODEKIT_TEST_DIR:-/var/lib/nodekit-peerbench}
export CNI_NETWORK=${CNI_NETWORK:-nodekit-peerbench}
export CNI_BRIDGE=${CNI_BRIDGE:-nkpb0}
# A /22: room for 500 pods (--pods 500).
export CNI_SUBNET=${CNI_SUBNET:-10.212.0.0/22}
export CGROUP_PARENT=${CGROUP_PARENT:-nodekit-peerbench}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=conformance/lib.sh
. "$here/conformance/lib.sh"

need_root
pods=10,30,100,110 steady=30s rounds=1 timeout=5m scrape=15s env= flags= only= first=kubelet touched= keep=
while [ "$#" -gt 0 ]; do
	case $1 in
	--pods) pods=$2; shift 2 ;;
	--steady) steady=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--nodekit-env) env=$2; shift 2 ;;
	--nodekit-flags) flags=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	--first) first=$2; shift 2 ;;
	--scrape-every) scrape=$2; shift 2 ;;
	--touched) touched=1; shift ;;
	--keep) keep=1; shift ;;
	*) die "usage: $0 [--pods LIST] [--steady DURATION] [--rounds N] [--timeout DURATION] [--scrape-every DURATION] [--nodekit-env K=V,...] [--nodekit-flags --flag=V,...] [--only kubelet|nodekit] [--first kubelet|nodekit] [--touched] [--keep]" ;;
	esac
done

bin_dir=$NODEKIT_TEST_DIR/bin
build_agents() {
	bash "$here/conformance/build.sh" bins
	mkdir -p "$bin_dir"
	# nodekit is built as the kubelet is (hack/conformance/build.sh):
	# static, without cgo (else it maps libc and ld.so, which the kubelet
	# does not), with -trimpath.
	(cd "$repo_root" && CGO_ENABLED=0 go build -trimpath -tags "$NODEKIT_BUILD_TAGS" -o "$bin_dir/nodekit" ./cmd/nodekit && go build -o "$bin_dir/peerbench" ./test/peerbench)
}
phase "agents (nodekit from this checkout, the kubelet v$KUBE_VERSION: cached after the first build)" build_agents
touched_dir=$NODEKIT_TEST_DIR/touched touched_loop=
cleanup() {
	if [ -n "$touched_loop" ]; then
		umount "$touched_dir" 2>/dev/null || true
		losetup -d "$touched_loop" 2>/dev/null || true
	fi
	if [ -z "$keep" ]; then
		bash "$here/containerd-down.sh" >/dev/null 2>&1 || true
	fi
}
trap cleanup EXIT
kubelet_bin=$CONF_KUBELET_BIN nodekit_bin=$bin_dir/nodekit drop=()
# Copies of both binaries on an ext4 of their own, mounted read-only from
# a loop device with readahead 0 (see --touched above).
touched_binaries() {
	local img=$NODEKIT_TEST_DIR/touched.img
	mkdir -p "$touched_dir"
	umount "$touched_dir" 2>/dev/null || true
	rm -f "$img"
	truncate -s 512M "$img"
	mkfs.ext4 -q -F "$img"
	touched_loop=$(losetup --find --show "$img")
	mount "$touched_loop" "$touched_dir"
	cp "$CONF_KUBELET_BIN" "$bin_dir/nodekit" "$touched_dir/"
	umount "$touched_dir"
	echo 0 >"/sys/block/${touched_loop#/dev/}/queue/read_ahead_kb"
	mount -o ro "$touched_loop" "$touched_dir"
	kubelet_bin=$touched_dir/kubelet nodekit_bin=$touched_dir/nodekit drop=(--drop-binary-cache)
}
phase "private containerd for the benchmark ($NODEKIT_TEST_DIR)" bash "$here/containerd-up.sh"
# After containerd-up.sh, which cleans $NODEKIT_TEST_DIR.
if [ -n "$touched" ]; then
	# Called directly, not through phase, so that set -e stops at a
	# failing step.
	log "binaries on $touched_dir (a loop device without readahead)"
	touched_binaries
fi
# shellcheck source=conformance/agent.sh
. "$here/conformance/agent.sh"
cgroup_root_create
work=$NODEKIT_TEST_DIR/work
mkdir -p "$work"
results=$NODEKIT_TEST_DIR/results-$(date +%Y%m%d-%H%M%S).md
# A failed /metrics/resource scrape fails the run after the table (which
# shows it) is written.
rc=0
phase "peer benchmark, pods $pods" "$bin_dir/peerbench" --kubelet "$kubelet_bin" --nodekit "$nodekit_bin" "${drop[@]}" \
	--endpoint "unix://$CD_SOCK" --image "$BUSYBOX_IMAGE" --cgroup-root "/$CGROUP_PARENT" --work "$work" \
	--pods "$pods" --steady "$steady" --rounds "$rounds" --timeout "$timeout" --scrape-every "$scrape" \
	--nodekit-env "$env" --nodekit-flags "$flags" --only "$only" --first "$first" >"$results" || rc=$?
cat "$results"
log "table written to $results"
exit "$rc"
