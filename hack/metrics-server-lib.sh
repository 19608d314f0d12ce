# shellcheck shell=bash
# Helpers shared by metrics-server-up.sh and metrics-server-down.sh (sourced
# after lib.sh and control-plane-lib.sh).
MS_DIR="$CP_DIR/metrics-server"
MS_LOG="$MS_DIR/metrics-server.log"
MS_PID="$MS_DIR/metrics-server.pid"
MS_ENV_FILE="$MS_DIR/env"
# MS_BRIDGE_FILE names the bridge metrics-server-up.sh made for this
# control plane: metrics-server-down.sh removes that one only, so stopping a
# lab that never ran metrics-server leaves another lab's bridge alone.
MS_BRIDGE_FILE="$MS_DIR/bridge"

# private_metrics_server_pids prints the pids of metrics-servers keeping
# their certificates in $MS_DIR/certs; no other metrics-server matches.
private_metrics_server_pids() {
	local p
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		cmdline_args "$p"
		if [ "${#ARGS[@]}" -gt 0 ] && [ "${ARGS[0]##*/}" = metrics-server ] &&
			has_flag cert-dir "$MS_DIR/certs"; then
			echo "$p"
		fi
	done
	return 0
}

# ms_kubectl runs kubectl ($KUBECTL, else the one in PATH) as the control
# plane's admin.
ms_kubectl() {
	"${KUBECTL:-kubectl}" --kubeconfig "$CP_ADMIN_KUBECONFIG" --request-timeout 10s "$@"
}

# node_redirect_rule ACTION adds (-A) or deletes (-D) the nat OUTPUT rule
# that sends connections to $NODEKIT_NODE_ADDRESS to loopback, same port.
node_redirect_rule() {
	iptables -t nat "$1" OUTPUT -d "$NODEKIT_NODE_ADDRESS/32" -p tcp \
		-m comment --comment "nodekit-node-address:$NODEKIT_TEST_DIR" -j REDIRECT
}
