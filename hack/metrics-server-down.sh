#!/usr/bin/env bash
# Stops the metrics-server of metrics-server-up.sh and unregisters it: the
# APIService first (an unavailable aggregated API makes API discovery fail
# for every client), then its Service and EndpointSlice, the node
# address's iptables rule and the bridge metrics-server-up.sh recorded in
# $MS_BRIDGE_FILE (no other). Safe to run when nothing is up.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=control-plane-lib.sh
. "$here/control-plane-lib.sh"
# shellcheck source=metrics-server-lib.sh
. "$here/metrics-server-lib.sh"

need_root
cp_lock
if [ -f "$CP_ADMIN_KUBECONFIG" ] && [ -n "$(private_apiserver_pids)" ]; then
	ms_kubectl delete --ignore-not-found apiservice v1beta1.metrics.k8s.io >/dev/null ||
		log "cannot delete the APIService v1beta1.metrics.k8s.io"
	ms_kubectl -n kube-system delete --ignore-not-found service/metrics-server \
		endpointslice.discovery.k8s.io/metrics-server-nodekit >/dev/null || log "cannot delete metrics-server's Service"
fi
mapfile -t pids < <(private_metrics_server_pids)
stop_pids metrics-server "${pids[@]}"
rm -f "$MS_PID" "$MS_ENV_FILE"
while node_redirect_rule -D 2>/dev/null; do :; done
if [ -f "$MS_BRIDGE_FILE" ]; then
	bridge=$(cat "$MS_BRIDGE_FILE")
	if [ -n "$bridge" ] && ip link show "$bridge" >/dev/null 2>&1; then
		ip link del "$bridge" || log "cannot remove bridge $bridge"
	fi
	rm -f "$MS_BRIDGE_FILE"
fi
