# shellcheck shell=bash disable=SC2034 # settings for the scripts that source it
# Settings of the conformance lab (hack/conformance.sh). It is a lab of its
# own: every directory, port, bridge, subnet and cgroup differs from the shared
# e2e lab's (hack/lib.sh defaults), so a conformance run never touches it.
# Each setting can be overridden from the environment; the defaults are
# exported before hack/lib.sh is sourced, so the reused hack/ scripts
# (containerd-up.sh, control-plane-up.sh, ...) see the same values.
conf_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
hack_dir=$(cd "$conf_here/.." && pwd)
repo_root=$(cd "$hack_dir/.." && pwd)

export NODEKIT_TEST_DIR=${NODEKIT_TEST_DIR:-/var/lib/nodekit-conformance}
export CNI_NETWORK=${CNI_NETWORK:-nodekit-conformance}
export CNI_BRIDGE=${CNI_BRIDGE:-nkconf0}
export CNI_SUBNET=${CNI_SUBNET:-10.217.0.0/24}
export CGROUP_PARENT=${CGROUP_PARENT:-nodekit-conformance}
export CP_ETCD_CLIENT_URL=${CP_ETCD_CLIENT_URL:-https://127.0.0.1:23917}
export CP_ETCD_PEER_URL=${CP_ETCD_PEER_URL:-https://127.0.0.1:23918}
export CP_APISERVER_PORT=${CP_APISERVER_PORT:-6917}
export CP_SERVICE_CIDR=${CP_SERVICE_CIDR:-10.218.0.0/24}
export NODEKIT_REGISTRY_PORT=${NODEKIT_REGISTRY_PORT:-5917}
export NODEKIT_AUTH_REGISTRY_PORT=${NODEKIT_AUTH_REGISTRY_PORT:-5918}

# shellcheck source=../lib.sh
. "$hack_dir/lib.sh"

# Ports of the components hack/lib.sh does not start (all on 127.0.0.1).
CONF_KCM_PORT=${CONF_KCM_PORT:-10917}
CONF_SCHED_PORT=${CONF_SCHED_PORT:-10918}
# The agent's ports: the API server reaches them through the node IP (the
# bridge address) and one iptables REDIRECT rule to 127.0.0.1.
CONF_AGENT_PORT=${CONF_AGENT_PORT:-10950}
CONF_AGENT_RO_PORT=${CONF_AGENT_RO_PORT:-10955}
CONF_AGENT_HEALTHZ_PORT=${CONF_AGENT_HEALTHZ_PORT:-10948}
CONF_NODE_NAME=${CONF_NODE_NAME:-conformance-node}

# Pinned in hack/conformance/tools/go.mod; the cache dir is named after it so
# a version bump rebuilds.
CONF_TOOLS_DIR="$conf_here/tools"
CONF_BIN_DIR="$NODEKIT_CACHE/bin/conformance-$KUBE_VERSION"
CONF_E2E_BIN="$CONF_BIN_DIR/e2e.test"
CONF_GINKGO_BIN="$CONF_BIN_DIR/ginkgo"
CONF_KCM_BIN="$CONF_BIN_DIR/kube-controller-manager"
CONF_SCHED_BIN="$CONF_BIN_DIR/kube-scheduler"
CONF_KUBELET_BIN="$CONF_BIN_DIR/kubelet"
CONF_AGNHOST_BIN="$CONF_BIN_DIR/agnhost"
CONF_IMAGE_DIR="$NODEKIT_CACHE/images/conformance-$KUBE_VERSION"

# The first address of the pod subnet goes on the bridge and is the node IP.
conf_node_ip() {
	local net=${CNI_SUBNET%/*}
	printf '%s.1\n' "${net%.*}"
}
CONF_NODE_IP=$(conf_node_ip)
CONF_DIR="$NODEKIT_TEST_DIR/conformance"

clog() { printf '[conformance] %s\n' "$*" >&2; }
CONF_NNP_BIN="$CONF_BIN_DIR/nnp"

# The comment marks the iptables rules of this lab, so clearing them never
# touches another rule.
CONF_IPT_COMMENT="nodekit-conformance:$NODEKIT_TEST_DIR"

# conf_pids prints the pids of processes one of whose arguments starts with
# $CONF_DIR/ (the agent, scheduler and controller manager this lab started).
conf_pids() {
	local p a
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		[ "$p" = "$$" ] && continue
		cmdline_args "$p"
		[ "${#ARGS[@]}" -gt 1 ] || continue
		case "${ARGS[0]##*/}" in bash | sh | sudo | timeout | nice) continue ;; esac
		for a in "${ARGS[@]:1}"; do
			case "$a" in
			"$CONF_DIR"/* | *="$CONF_DIR"/*) echo "$p"; break ;;
			esac
		done
	done
	return 0
}

# conf_stop_procs stops them: TERM, up to 20 s, then KILL.
conf_stop_procs() {
	local pids=() deadline=$((SECONDS + 20)) p alive
	mapfile -t pids < <(conf_pids)
	[ "${#pids[@]}" -gt 0 ] || return 0
	clog "stopping ${pids[*]}"
	kill -TERM "${pids[@]}" 2>/dev/null || true
	while :; do
		alive=
		for p in "${pids[@]}"; do [ -d "/proc/$p" ] && alive=1; done
		[ -z "$alive" ] && return 0
		if [ "$SECONDS" -ge "$deadline" ]; then
			kill -KILL "${pids[@]}" 2>/dev/null || true
			sleep 1
			return 0
		fi
		sleep 0.2
	done
}

conf_iptables_clear() {
	local rules rule
	command -v iptables >/dev/null || return 0
	rules=$(iptables -w -t nat -S OUTPUT 2>/dev/null) || return 0
	while IFS= read -r rule; do
		[[ "$rule" == *"$CONF_IPT_COMMENT"* ]] || continue
		# -S prints "-A OUTPUT ..."; delete the same rule.
		eval "iptables -w -t nat -D ${rule#-A }" || die "cannot delete iptables rule: $rule"
	done <<<"$rules"
}
