#!/usr/bin/env bash
# Runs a real metrics-server (built by build-metrics-server.sh) as a process
# beside the private control plane, and registers it with the aggregation
# layer as the APIService v1beta1.metrics.k8s.io, so that `kubectl top` goes
# the whole real way: kubectl -> kube-apiserver -> metrics-server ->
# the node agent's /metrics/resource.
#
#   1. build metrics-server into $NODEKIT_CACHE (cached);
#   2. give the bridge $METRICS_SERVER_BRIDGE the address
#      $METRICS_SERVER_ADDRESS/32: the aggregator (with
#      --enable-aggregator-routing, there is no kube-proxy) dials the
#      Service's endpoint, and Endpoints may not hold a loopback address;
#      and the node address $NODEKIT_NODE_ADDRESS/32, with an iptables rule
#      that redirects connections to it onto loopback: a test node reports
#      it as its InternalIP (the API server will not proxy to loopback), and
#      its agent keeps listening on 127.0.0.1;
#   3. start metrics-server on $METRICS_SERVER_ADDRESS:$METRICS_SERVER_PORT
#      (a self-signed serving certificate; the admin kubeconfig for the API
#      and for delegated authn/authz), scraping each node's InternalIP on the
#      port the node advertises, with --kubelet-insecure-tls, every 15 s;
#   4. create the Service kube-system/metrics-server (no selector), its
#      EndpointSlice (what the aggregator resolves in v1.37), and the
#      APIService;
#   5. wait (at most 90 s) until the aggregator reports it Available, and
#      write $CP_DIR/metrics-server/env.
#
# Needs control-plane-up.sh first (it configures the aggregation layer).
# METRICS_SERVER_EXTRA_ARGS adds flags. Stop with metrics-server-down.sh.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=control-plane-lib.sh
. "$here/control-plane-lib.sh"
# shellcheck source=metrics-server-lib.sh
. "$here/metrics-server-lib.sh"

need_root
"$here/build-metrics-server.sh"
[ -f "$CP_ENV_FILE" ] || die "no control plane under $CP_DIR: run control-plane-up.sh first"
[ -f "$CP_PKI/front-proxy-client.crt" ] ||
	die "the control plane under $CP_DIR has no aggregation layer: rerun control-plane-up.sh"
cp_lock
"$here/metrics-server-down.sh"

mkdir -p "$MS_DIR"
echo "$METRICS_SERVER_BRIDGE" >"$MS_BRIDGE_FILE"
if ! ip link show "$METRICS_SERVER_BRIDGE" >/dev/null 2>&1; then
	ip link add "$METRICS_SERVER_BRIDGE" type bridge || die "cannot create bridge $METRICS_SERVER_BRIDGE"
fi
ip addr replace "$METRICS_SERVER_ADDRESS/32" dev "$METRICS_SERVER_BRIDGE" ||
	die "cannot give $METRICS_SERVER_BRIDGE the address $METRICS_SERVER_ADDRESS"
ip addr replace "$NODEKIT_NODE_ADDRESS/32" dev "$METRICS_SERVER_BRIDGE" ||
	die "cannot give $METRICS_SERVER_BRIDGE the node address $NODEKIT_NODE_ADDRESS"
ip link set "$METRICS_SERVER_BRIDGE" up
node_redirect_rule -A || die "cannot add the iptables rule redirecting $NODEKIT_NODE_ADDRESS to loopback"

mkdir -p "$MS_DIR/certs"
[ -f "$MS_LOG" ] && mv -f "$MS_LOG" "$MS_LOG.prev"
read -r -a extra <<<"${METRICS_SERVER_EXTRA_ARGS:-}"
# setsid: its own session, so it outlives this script; 8>&- 9>&-: it must not
# hold the scripts' lock files open.
setsid "$METRICS_SERVER_BIN" \
	--kubeconfig="$CP_ADMIN_KUBECONFIG" \
	--authentication-kubeconfig="$CP_ADMIN_KUBECONFIG" \
	--authorization-kubeconfig="$CP_ADMIN_KUBECONFIG" \
	--bind-address="$METRICS_SERVER_ADDRESS" \
	--secure-port="$METRICS_SERVER_PORT" \
	--cert-dir="$MS_DIR/certs" \
	--kubelet-insecure-tls \
	--kubelet-preferred-address-types=InternalIP \
	--kubelet-use-node-status-port \
	--metric-resolution=15s \
	--v=1 "${extra[@]}" </dev/null >>"$MS_LOG" 2>&1 8>&- 9>&- &
pid=
for _ in $(seq 50); do
	pid=$(private_metrics_server_pids | sed -n 1p)
	[ -n "$pid" ] && break
	sleep 0.1
done
[ -n "$pid" ] || { tail -n 30 "$MS_LOG" >&2; die "metrics-server exited at once (log $MS_LOG)"; }
echo "$pid" >"$MS_PID"
log "metrics-server started (pid $pid, log $MS_LOG)"

ms_kubectl apply -f - >/dev/null <<YAML || die "cannot register metrics-server with the aggregator"
apiVersion: v1
kind: Service
metadata: {name: metrics-server, namespace: kube-system, labels: {app.kubernetes.io/managed-by: nodekit-hack}}
spec:
  ports: [{name: https, port: 443, protocol: TCP, targetPort: $METRICS_SERVER_PORT}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: metrics-server-nodekit
  namespace: kube-system
  labels: {kubernetes.io/service-name: metrics-server, endpointslice.kubernetes.io/managed-by: nodekit-hack}
addressType: IPv4
endpoints: [{addresses: ["$METRICS_SERVER_ADDRESS"], conditions: {ready: true}}]
ports: [{name: https, port: $METRICS_SERVER_PORT, protocol: TCP}]
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta1.metrics.k8s.io, labels: {app.kubernetes.io/managed-by: nodekit-hack}}
spec:
  group: metrics.k8s.io
  version: v1beta1
  service: {name: metrics-server, namespace: kube-system, port: 443}
  insecureSkipTLSVerify: true
  groupPriorityMinimum: 100
  versionPriority: 100
YAML

deadline=$((SECONDS + 90))
until [ "$(ms_kubectl get apiservice v1beta1.metrics.k8s.io -o 'jsonpath={.status.conditions[?(@.type=="Available")].status}' 2>/dev/null)" = True ]; do
	alive "$pid" || { tail -n 30 "$MS_LOG" >&2; die "metrics-server (pid $pid) exited"; }
	if [ "$SECONDS" -ge "$deadline" ]; then
		ms_kubectl get apiservice v1beta1.metrics.k8s.io -o yaml >&2 || true
		tail -n 30 "$MS_LOG" >&2
		die "the APIService v1beta1.metrics.k8s.io is not Available after 90s"
	fi
	sleep 0.5
done
{
	echo "# Written by hack/metrics-server-up.sh; source it: . $MS_ENV_FILE"
	printf 'export %s=%q\n' \
		NODEKIT_METRICS_SERVER "https://$METRICS_SERVER_ADDRESS:$METRICS_SERVER_PORT" \
		NODEKIT_METRICS_SERVER_VERSION "v$METRICS_SERVER_VERSION" \
		NODEKIT_NODE_ADDRESS "$NODEKIT_NODE_ADDRESS"
} >"$MS_ENV_FILE.tmp"
mv -f "$MS_ENV_FILE.tmp" "$MS_ENV_FILE"
log "metrics-server v$METRICS_SERVER_VERSION available as metrics.k8s.io/v1beta1; use it with: . $MS_ENV_FILE"
