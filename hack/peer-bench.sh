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
# Usage: peer-bench.sh [--pods 10,30,100,110] [--steady 30s] [--rounds 1] [--timeout 5m] [--nodekit-env K=V,...] [--only kubelet|nodekit] [--keep]
# (--timeout: the longest wait for all pods to run, or to stop; 500 pods
# on a loaded 2-core machine need about 20m.) Each agent's log stays in
# $NODEKIT_TEST_DIR/work.
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
pods=10,30,100,110 steady=30s rounds=1 timeout=5m env= only= keep=
while [ "$#" -gt 0 ]; do
	case $1 in
	--pods) pods=$2; shift 2 ;;
	--steady) steady=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--nodekit-env) env=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	*) die "usage: $0 [--pods LIST] [--steady DURATION] [--rounds N] [--timeout DURATION] [--nodekit-env K=V,...] [--only kubelet|nodekit] [--keep]" ;;
	esac
done

bin_dir=$NODEKIT_TEST_DIR/bin
build_agents() {
	bash "$here/conformance/build.sh" bins
	mkdir -p "$bin_dir"
	(cd "$repo_root" && go build -o "$bin_dir/nodekit" ./cmd/nodekit && go build -o "$bin_dir/peerbench" ./test/peerbench)
}
phase "agents (nodekit from this checkout, the kubelet v$KUBE_VERSION: cached after the first build)" build_agents
if [ -z "$keep" ]; then
	trap 'bash "$here/containerd-down.sh" >/dev/null 2>&1 || true' EXIT
fi
phase "private containerd for the benchmark ($NODEKIT_TEST_DIR)" bash "$here/containerd-up.sh"
# shellcheck source=conformance/agent.sh
. "$here/conformance/agent.sh"
cgroup_root_create
work=$NODEKIT_TEST_DIR/work
mkdir -p "$work"
results=$NODEKIT_TEST_DIR/results-$(date +%Y%m%d-%H%M%S).md
phase "peer benchmark, pods $pods" "$bin_dir/peerbench" --kubelet "$CONF_KUBELET_BIN" --nodekit "$bin_dir/nodekit" \
	--endpoint "unix://$CD_SOCK" --image "$BUSYBOX_IMAGE" --cgroup-root "/$CGROUP_PARENT" --work "$work" \
	--pods "$pods" --steady "$steady" --rounds "$rounds" --timeout "$timeout" --nodekit-env "$env" --only "$only" >"$results"
cat "$results"
log "table written to $results"
