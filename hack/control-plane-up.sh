#!/usr/bin/env bash
# Starts a private Kubernetes control plane (etcd + kube-apiserver, no
# controller-manager or scheduler) on loopback for nodekit's end-to-end tests.
# Everything lives under $CP_DIR; the ports are fixed and uncommon.
#
#   1. build kube-apiserver and etcd into $KUBE_BIN_DIR (cached; a warm run
#      skips this);
#   2. run control-plane-down.sh, which clears what an earlier run left;
#   3. make throwaway certificates with openssl in $CP_PKI: a cluster CA (it
#      signs the apiserver's serving cert, the admin and node client certs),
#      a service-account key pair, a front-proxy CA and client certificate
#      for the aggregation layer, and a separate etcd CA (so no cluster
#      client certificate can talk to etcd directly);
#   4. start etcd on $CP_ETCD_CLIENT_URL (TLS, client certs required) and
#      kube-apiserver on $CP_APISERVER_URL, detached, logging to $CP_DIR,
#      with the aggregation layer configured (requestheader CA, proxy client
#      certificate, routing to endpoints since there is no kube-proxy);
#   5. wait (at most 60 s) until /readyz answers ok;
#   6. create what kube-controller-manager would: the default ServiceAccount
#      and the kube-root-ca.crt ConfigMap in namespace default;
#   7. write $CP_ADMIN_KUBECONFIG (system:masters) and $CP_ENV_FILE.
#
# Usage: control-plane-up.sh [--apiserver-only]
# --apiserver-only (re)starts only kube-apiserver, keeping etcd, its data and
# the certificates: with control-plane-down.sh --apiserver-only it simulates
# an apiserver outage. Node credentials: node-credentials.sh NODE OUTDIR.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=control-plane-lib.sh
. "$here/control-plane-lib.sh"

apiserver_only=
case "${1:-}" in
"") ;;
--apiserver-only) apiserver_only=1 ;;
*) die "usage: $0 [--apiserver-only]" ;;
esac

start=${EPOCHREALTIME/./}
# Built before taking the lock: a cold build takes minutes.
"$here/build-control-plane.sh"
cp_lock

fail_with_log() {
	log "last lines of $2:"
	tail -n 30 "$2" >&2 || true
	die "$1"
}

# make_front_proxy_pki makes what the aggregation layer needs: the
# front-proxy CA signs the client certificate the apiserver shows extension
# apiservers (metrics-server), which trust it through the requestheader
# settings.
make_front_proxy_pki() {
	new_ca "$CP_PKI/front-proxy-ca" nodekit-test-front-proxy-ca
	sign_cert "$CP_PKI/front-proxy-ca" "$CP_PKI/front-proxy-client" /CN=front-proxy-client "extendedKeyUsage = clientAuth"
}

make_pki() {
	mkdir -p "$CP_PKI"
	chmod 0700 "$CP_PKI"
	new_ca "$CP_PKI/ca" nodekit-test-ca
	# The first address of the service range is the kubernetes Service's.
	local svc_ip=${CP_SERVICE_CIDR%/*}
	svc_ip=${svc_ip%.*}.$((${svc_ip##*.} + 1))
	sign_cert "$CP_PKI/ca" "$CP_PKI/apiserver" /CN=kube-apiserver "extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, DNS:kubernetes, DNS:kubernetes.default, DNS:kubernetes.default.svc, DNS:kubernetes.default.svc.cluster.local, IP:127.0.0.1, IP:$svc_ip"
	sign_cert "$CP_PKI/ca" "$CP_PKI/admin" /O=system:masters/CN=nodekit-admin "extendedKeyUsage = clientAuth"
	# The apiserver's identity towards node APIs (logs, exec).
	sign_cert "$CP_PKI/ca" "$CP_PKI/apiserver-kubelet-client" \
		/O=system:masters/CN=kube-apiserver-kubelet-client "extendedKeyUsage = clientAuth"
	make_front_proxy_pki
	new_key "$CP_PKI/sa.key"
	openssl pkey -in "$CP_PKI/sa.key" -pubout -out "$CP_PKI/sa.pub" 2>/dev/null || die "openssl cannot write sa.pub"
	new_ca "$CP_PKI/etcd-ca" nodekit-test-etcd-ca
	# Server and peer certificate of the one etcd member.
	sign_cert "$CP_PKI/etcd-ca" "$CP_PKI/etcd-server" /CN=etcd "extendedKeyUsage = serverAuth, clientAuth
subjectAltName = DNS:localhost, IP:127.0.0.1"
	sign_cert "$CP_PKI/etcd-ca" "$CP_PKI/apiserver-etcd-client" /CN=kube-apiserver-etcd-client \
		"extendedKeyUsage = clientAuth"
}

# spawn LOG PIDFILE FINDER BIN ARGS... starts BIN detached and records its pid.
spawn() {
	local logf=$1 pidf=$2 finder=$3 pid
	shift 3
	[ -f "$logf" ] && mv -f "$logf" "$logf.prev"
	# setsid: its own session, so it outlives this script and its terminal.
	# 8>&- 9>&-: it must not hold the scripts' lock files open.
	setsid "$@" </dev/null >>"$logf" 2>&1 8>&- 9>&- &
	pid=$!
	# setsid forks only when it leads a process group; find the real pid.
	for _ in $(seq 50); do
		pid=$("$finder" | sed -n 1p)
		[ -n "$pid" ] && break
		sleep 0.1
	done
	[ -n "$pid" ] || fail_with_log "${1##*/} exited at once" "$logf"
	echo "$pid" >"$pidf"
	log "${1##*/} started (pid $pid, log $logf)"
}

start_etcd() {
	local pki=$CP_PKI
	spawn "$CP_ETCD_LOG" "$CP_ETCD_PID" private_etcd_pids "$ETCD_BIN" \
		--name=nodekit-test \
		--data-dir="$CP_ETCD_DATA" \
		--listen-client-urls="$CP_ETCD_CLIENT_URL" \
		--advertise-client-urls="$CP_ETCD_CLIENT_URL" \
		--listen-peer-urls="$CP_ETCD_PEER_URL" \
		--initial-advertise-peer-urls="$CP_ETCD_PEER_URL" \
		--initial-cluster="nodekit-test=$CP_ETCD_PEER_URL" \
		--initial-cluster-state=new \
		--cert-file="$pki/etcd-server.crt" --key-file="$pki/etcd-server.key" \
		--trusted-ca-file="$pki/etcd-ca.crt" --client-cert-auth=true \
		--peer-cert-file="$pki/etcd-server.crt" --peer-key-file="$pki/etcd-server.key" \
		--peer-trusted-ca-file="$pki/etcd-ca.crt" --peer-client-cert-auth=true \
		--unsafe-no-fsync=true \
		--log-level=warn
}

start_apiserver() {
	local pki=$CP_PKI extra_args=()
	# CP_APISERVER_EXTRA_ARGS: more flags, split on spaces (a lab that needs
	# e.g. --kubelet-preferred-address-types sets it).
	if [ -n "${CP_APISERVER_EXTRA_ARGS:-}" ]; then read -r -a extra_args <<<"$CP_APISERVER_EXTRA_ARGS"; fi
	spawn "$CP_APISERVER_LOG" "$CP_APISERVER_PID" private_apiserver_pids "$KUBE_APISERVER_BIN" \
		--advertise-address=127.0.0.1 \
		--bind-address=127.0.0.1 \
		--secure-port="$CP_APISERVER_PORT" \
		--cert-dir="$pki" \
		--tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
		--client-ca-file="$pki/ca.crt" \
		--etcd-servers="$CP_ETCD_CLIENT_URL" \
		--etcd-cafile="$pki/etcd-ca.crt" \
		--etcd-certfile="$pki/apiserver-etcd-client.crt" --etcd-keyfile="$pki/apiserver-etcd-client.key" \
		--enable-bootstrap-token-auth=true \
		--authorization-mode=Node,RBAC \
		--enable-admission-plugins=NodeRestriction \
		--allow-privileged=true \
		--service-account-issuer=https://kubernetes.default.svc.cluster.local \
		--service-account-key-file="$pki/sa.pub" \
		--service-account-signing-key-file="$pki/sa.key" \
		--service-cluster-ip-range="$CP_SERVICE_CIDR" \
		--endpoint-reconciler-type=none \
		--kubelet-client-certificate="$pki/apiserver-kubelet-client.crt" \
		--kubelet-client-key="$pki/apiserver-kubelet-client.key" \
		--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname \
		--requestheader-client-ca-file="$pki/front-proxy-ca.crt" \
		--requestheader-allowed-names=front-proxy-client \
		--requestheader-username-headers=X-Remote-User \
		--requestheader-group-headers=X-Remote-Group \
		--requestheader-extra-headers-prefix=X-Remote-Extra- \
		--proxy-client-cert-file="$pki/front-proxy-client.crt" --proxy-client-key-file="$pki/front-proxy-client.key" \
		--enable-aggregator-routing=true \
		--profiling=false \
		--v=1 \
		"${extra_args[@]}"
}

# api METHOD PATH [BODY] calls the apiserver as admin; prints the HTTP status
# and leaves the body in $CP_DIR/.api-body.
api() {
	local args=(--silent --show-error --max-time 5 --cacert "$CP_PKI/ca.crt"
		--cert "$CP_PKI/admin.crt" --key "$CP_PKI/admin.key"
		-o "$CP_DIR/.api-body" -w '%{http_code}' -X "$1")
	[ "$#" -ge 3 ] && args+=(-H 'Content-Type: application/json' --data-binary "$3")
	curl "${args[@]}" "$CP_APISERVER_URL$2" 2>/dev/null || echo 000
}

# wait_ready waits up to 60 s for /readyz to answer ok.
wait_ready() {
	local deadline=$((SECONDS + 60)) pid etcd
	pid=$(cat "$CP_APISERVER_PID")
	etcd=$(private_etcd_pids | sed -n 1p)
	until [ "$(api GET /readyz)" = 200 ]; do
		alive "$pid" || fail_with_log "kube-apiserver (pid $pid) exited" "$CP_APISERVER_LOG"
		alive "$etcd" || fail_with_log "etcd (pid $etcd) exited" "$CP_ETCD_LOG"
		[ "$SECONDS" -lt "$deadline" ] || fail_with_log "kube-apiserver is not ready after 60s" "$CP_APISERVER_LOG"
		sleep 0.2
	done
}

# ensure NAME PATH BODY creates an object in namespace default unless it
# exists; the namespace itself appears shortly after /readyz.
ensure() {
	local deadline=$((SECONDS + 20)) code
	while :; do
		code=$(api POST "$2" "$3")
		case "$code" in
		201 | 409) return 0 ;;
		esac
		[ "$SECONDS" -lt "$deadline" ] || die "cannot create $1 (HTTP $code): $(cat "$CP_DIR/.api-body" 2>/dev/null)"
		sleep 0.2
	done
}

bootstrap_objects() {
	ensure "ServiceAccount default/default" /api/v1/namespaces/default/serviceaccounts \
		'{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default"}}'
	local ca
	ca=$(awk '{ printf "%s\\n", $0 }' "$CP_PKI/ca.crt")
	ensure "ConfigMap default/kube-root-ca.crt" /api/v1/namespaces/default/configmaps \
		"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"kube-root-ca.crt\"},\"data\":{\"ca.crt\":\"$ca\"}}"
}

write_env() {
	local tmp="$CP_ENV_FILE.tmp"
	{
		echo "# Written by hack/control-plane-up.sh; source it: . $CP_ENV_FILE"
		printf 'export %s=%q\n' \
			NODEKIT_KUBECONFIG "$CP_ADMIN_KUBECONFIG" \
			NODEKIT_APISERVER "$CP_APISERVER_URL" \
			NODEKIT_KUBE_CA_FILE "$CP_PKI/ca.crt" \
			NODEKIT_KUBE_APISERVER_BIN "$KUBE_APISERVER_BIN" \
			NODEKIT_ETCD_BIN "$ETCD_BIN" \
			NODEKIT_KUBECTL "$KUBECTL_BIN" \
			NODEKIT_NODE_CREDENTIALS "$here/node-credentials.sh" \
			NODEKIT_CONTROL_PLANE_UP "$here/control-plane-up.sh" \
			NODEKIT_CONTROL_PLANE_DOWN "$here/control-plane-down.sh"
	} >"$tmp"
	mv -f "$tmp" "$CP_ENV_FILE"
}

# check_ports fails if another program already listens on one of our ports.
check_ports() {
	local port
	for port in "${CP_ETCD_CLIENT_URL##*:}" "${CP_ETCD_PEER_URL##*:}" "$CP_APISERVER_PORT"; do
		if (: <"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			die "127.0.0.1:$port is taken by another program (ss -ltnp | grep $port)"
		fi
	done
}

if [ -n "$apiserver_only" ]; then
	[ -n "$(private_etcd_pids)" ] || die "etcd is not running: run $0 without --apiserver-only"
	"$here/control-plane-down.sh" --apiserver-only
	# A control plane brought up before the aggregation layer was configured.
	[ -f "$CP_PKI/front-proxy-client.crt" ] || make_front_proxy_pki
	(: <"/dev/tcp/127.0.0.1/$CP_APISERVER_PORT") 2>/dev/null &&
		die "127.0.0.1:$CP_APISERVER_PORT is taken by another program"
	start_apiserver
	wait_ready
else
	"$here/control-plane-down.sh"
	check_ports
	mkdir -p "$CP_DIR"
	chmod 0755 "$CP_DIR"
	make_pki
	start_etcd
	start_apiserver
	wait_ready
	bootstrap_objects
	write_kubeconfig "$CP_ADMIN_KUBECONFIG" nodekit-admin "$CP_PKI/admin"
	write_env
fi
rm -f "$CP_DIR/.api-body"
elapsed_ms=$(((${EPOCHREALTIME/./} - start) / 1000))
log "kube-apiserver ready at $CP_APISERVER_URL in $((elapsed_ms / 1000)).$(printf '%03d' $((elapsed_ms % 1000)))s; use it with: . $CP_ENV_FILE"
