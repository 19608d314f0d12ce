#!/usr/bin/env bash
# Stops the private control plane started by control-plane-up.sh and removes
# its state: kube-apiserver, then etcd (TERM, then KILL after 15 s), then
# etcd's data, the certificates, kubeconfigs, pid and env files. The logs stay
# in $CP_DIR for a look after a failed test.
#
# Only our processes are touched: those named in the pid files and those whose
# command line names our private paths (etcd with --data-dir=$CP_ETCD_DATA,
# kube-apiserver with --tls-cert-file=$CP_PKI/apiserver.crt), which also finds
# them when a pid file is gone. Exits 0 when nothing was running.
#
# Usage: control-plane-down.sh [--apiserver-only]
# --apiserver-only stops only kube-apiserver and keeps etcd, its data and the
# certificates; control-plane-up.sh --apiserver-only starts it again.
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

cp_lock
# metrics-server first, while the API server can still unregister it.
[ -n "$apiserver_only" ] || bash "$here/metrics-server-down.sh"

# ours FINDER PIDFILE prints the pids to stop: the pid file's (if FINDER
# confirms it) and any other FINDER lists.
ours() {
	{ pid_file_pid "$2" "$1"; "$1"; } | sort -u
}

mapfile -t pids < <(ours private_apiserver_pids "$CP_APISERVER_PID")
stop_pids kube-apiserver "${pids[@]}"
rm -f "$CP_APISERVER_PID"
[ -n "$apiserver_only" ] && exit 0

mapfile -t pids < <(ours private_etcd_pids "$CP_ETCD_PID")
stop_pids etcd "${pids[@]}"
rm -f "$CP_ETCD_PID"

[ -z "$(private_apiserver_pids)$(private_etcd_pids)" ] || die "our etcd or kube-apiserver still runs"
if [ -d "$CP_DIR" ]; then
	rm -rf --one-file-system "$CP_ETCD_DATA" "$CP_PKI" "$CP_ADMIN_KUBECONFIG" "$CP_ENV_FILE" \
		"$CP_ENV_FILE.tmp" "$CP_DIR/.api-body"
	log "private control plane stopped and cleaned ($CP_DIR)"
fi
