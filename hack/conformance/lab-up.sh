#!/usr/bin/env bash
# Brings up the conformance lab, one node, every piece private to it (see
# lib.sh for the directories, ports, bridge and subnet):
#
#   1. lab-down.sh: clear what an earlier run left;
#   2. containerd (hack/containerd-up.sh --fresh with this lab's overrides),
#      then the CNI bridge created by hand with the first address of the pod
#      subnet, before any pod: that address is the node IP (the upstream
#      kubelet refuses a loopback one), and the host reaches pods through it;
#   3. the test images (images.sh import);
#   4. etcd and kube-apiserver (hack/control-plane-up.sh; the API server
#      prefers the node's InternalIP when it calls the node), then
#      kube-controller-manager and kube-scheduler on loopback;
#   5. node credentials (hack/node-credentials.sh) and one iptables nat OUTPUT
#      REDIRECT rule per agent port, NODE_IP:PORT -> 127.0.0.1:PORT, so the API
#      server reaches the agent (logs, exec) at its daemonEndpoints port;
#   6. the agent under test (agent.sh), then wait until the Node is Ready.
#
# Usage: lab-up.sh AGENT   (AGENT: "kubelet" for the upstream kubelet, or the
# path of a nodekit binary)
set -euo pipefail
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
need_root

[ "$#" -eq 1 ] || die "usage: $0 kubelet|NODEKIT_BINARY"
agent=$1

KUBECTL=(kubectl --kubeconfig "$CP_ADMIN_KUBECONFIG")

# spawn_bg LOG BIN ARGS... starts BIN detached (own session, no lock fds).
spawn_bg() {
	local logf=$1
	shift
	[ -f "$logf" ] && mv -f "$logf" "$logf.prev"
	setsid "$@" </dev/null >>"$logf" 2>&1 8>&- 9>&- &
	echo $! >"$logf.pid"
}

bridge_up() {
	ip link show "$CNI_BRIDGE" >/dev/null 2>&1 || ip link add "$CNI_BRIDGE" type bridge ||
		die "cannot create bridge $CNI_BRIDGE"
	ip addr replace "$CONF_NODE_IP/${CNI_SUBNET#*/}" dev "$CNI_BRIDGE"
	ip link set "$CNI_BRIDGE" up
}

start_kcm() {
	local pki=$CP_PKI
	spawn_bg "$CONF_DIR/kube-controller-manager.log" "$CONF_KCM_BIN" \
		--kubeconfig="$CONF_DIR/admin.kubeconfig" \
		--authentication-kubeconfig="$CONF_DIR/admin.kubeconfig" \
		--authorization-kubeconfig="$CONF_DIR/admin.kubeconfig" \
		--bind-address=127.0.0.1 --secure-port="$CONF_KCM_PORT" \
		--cert-dir="$CONF_DIR/kcm-certs" \
		--service-account-private-key-file="$pki/sa.key" \
		--root-ca-file="$pki/ca.crt" \
		--cluster-signing-cert-file="$pki/ca.crt" --cluster-signing-key-file="$pki/ca.key" \
		--service-cluster-ip-range="$CP_SERVICE_CIDR" \
		--use-service-account-credentials=true \
		--leader-elect=false \
		--controllers='*' \
		--v=1
}

start_scheduler() {
	spawn_bg "$CONF_DIR/kube-scheduler.log" "$CONF_SCHED_BIN" \
		--kubeconfig="$CONF_DIR/admin.kubeconfig" \
		--authentication-kubeconfig="$CONF_DIR/admin.kubeconfig" \
		--authorization-kubeconfig="$CONF_DIR/admin.kubeconfig" \
		--bind-address=127.0.0.1 --secure-port="$CONF_SCHED_PORT" \
		--leader-elect=false \
		--v=1
}

iptables_redirect() {
	local port
	for port in "$@"; do
		iptables -w -t nat -A OUTPUT -d "$CONF_NODE_IP/32" -p tcp --dport "$port" \
			-m comment --comment "$CONF_IPT_COMMENT" -j REDIRECT ||
			die "cannot add the iptables REDIRECT rule for $CONF_NODE_IP:$port"
	done
}

wait_node_ready() {
	local deadline=$((SECONDS + 180)) st
	while :; do
		st=$("${KUBECTL[@]}" get node "$CONF_NODE_NAME" \
			-o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) || st=
		[ "$st" = True ] && return 0
		if [ "$SECONDS" -ge "$deadline" ]; then
			tail -n 40 "$CONF_DIR/agent.log" >&2 || true
			die "node $CONF_NODE_NAME is not Ready after 180 s (Ready=$st); agent log: $CONF_DIR/agent.log"
		fi
		sleep 1
	done
}

# wait_sa waits until the controller manager made namespace default's
# ServiceAccount token machinery work (kube-root-ca.crt published).
wait_kcm() {
	local deadline=$((SECONDS + 120))
	until "${KUBECTL[@]}" -n kube-system get configmap kube-root-ca.crt >/dev/null 2>&1 &&
		"${KUBECTL[@]}" -n kube-system get serviceaccount default >/dev/null 2>&1; do
		[ "$SECONDS" -lt "$deadline" ] || { tail -n 30 "$CONF_DIR/kube-controller-manager.log" >&2; die "kube-controller-manager did not publish kube-root-ca.crt in 120 s"; }
		sleep 1
	done
}

main() {
	local t0=$SECONDS ports
	"$conf_here/lab-down.sh"
	mkdir -p "$CONF_DIR"
	phase "containerd" "$hack_dir/containerd-up.sh" --fresh
	bridge_up
	phase "images" "$conf_here/images.sh" import
	CP_APISERVER_EXTRA_ARGS="--kubelet-preferred-address-types=InternalIP,Hostname" \
		phase "control plane" "$hack_dir/control-plane-up.sh"
	cp "$CP_ADMIN_KUBECONFIG" "$CONF_DIR/admin.kubeconfig"
	start_kcm
	start_scheduler
	"$hack_dir/node-credentials.sh" "$CONF_NODE_NAME" "$CONF_DIR/node" >/dev/null
	# shellcheck source=agent.sh
	. "$conf_here/agent.sh"
	ports=$(agent_ports "$agent")
	# shellcheck disable=SC2086 # a list of port numbers
	iptables_redirect $ports
	phase "controller manager" wait_kcm
	agent_start "$agent"
	phase "node Ready" wait_node_ready
	clog "lab up in $((SECONDS - t0)) s: node $CONF_NODE_NAME ($CONF_NODE_IP), agent $agent, admin kubeconfig $CONF_DIR/admin.kubeconfig"
}
main "$@"; exit
