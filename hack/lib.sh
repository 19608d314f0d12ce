# shellcheck shell=bash disable=SC2034 # settings for the scripts that source it
# Common settings for the hack/ scripts. Every path, socket and port is private
# to nodekit so that a test run never collides with another containerd.
#
# NODEKIT_CACHE holds built binaries and images between runs (a second run
# starts in seconds); NODEKIT_TEST_DIR holds the private containerd's root,
# state, socket, CNI config and logs.

set -euo pipefail

CONTAINERD_VERSION=${CONTAINERD_VERSION:-2.4.2}
CRICTL_VERSION=${CRICTL_VERSION:-1.37.0}

NODEKIT_CACHE=${NODEKIT_CACHE:-/var/cache/nodekit}
# The build tags nodekit's binary is built with. grpcnotrace leaves out
# grpc's golang.org/x/net/trace, which nodekit never uses: its html/template
# makes reflective method calls, and with one of those reachable the linker
# keeps every exported method of every type used through an interface
# (about 20 MiB of the binary's mapped sections; docs/benchmarks.md).
# hack/check-binary.sh checks that no such call is left.
NODEKIT_BUILD_TAGS=${NODEKIT_BUILD_TAGS-grpcnotrace}
NODEKIT_TEST_DIR=${NODEKIT_TEST_DIR:-/var/lib/nodekit-test}

BIN_DIR="$NODEKIT_CACHE/bin/containerd-$CONTAINERD_VERSION"
CRICTL_BIN="$NODEKIT_CACHE/bin/crictl-$CRICTL_VERSION/crictl"
IMAGE_DIR="$NODEKIT_CACHE/images"

case "$NODEKIT_TEST_DIR" in
/?*/?*) ;;
*) printf '[hack] error: NODEKIT_TEST_DIR=%s must be an absolute path at least two levels deep\n' "$NODEKIT_TEST_DIR" >&2; exit 1 ;;
esac
NODEKIT_TEST_DIR=${NODEKIT_TEST_DIR%/}

CD_ROOT="$NODEKIT_TEST_DIR/root"
CD_STATE="$NODEKIT_TEST_DIR/state"
CD_SOCK="$NODEKIT_TEST_DIR/containerd.sock"
CD_CONFIG="$NODEKIT_TEST_DIR/config.toml"
CD_LOG="$NODEKIT_TEST_DIR/containerd.log"
CD_PID="$NODEKIT_TEST_DIR/containerd.pid"
CD_TTRPC_SOCK="$NODEKIT_TEST_DIR/containerd.sock.ttrpc"
# Shims put their sockets here (path plus 65 characters must fit in 107).
CD_SHIM_SOCK_DIR="$NODEKIT_TEST_DIR/s"
CD_TMP="$NODEKIT_TEST_DIR/tmp"
CD_NAMESPACE=k8s.io
RUNC_ROOT="$NODEKIT_TEST_DIR/runc"
CTR_BIN="$BIN_DIR/ctr"
CRICTL_CONFIG="$NODEKIT_TEST_DIR/crictl.yaml"
NODEKIT_ENV_FILE="$NODEKIT_TEST_DIR/env"
CNI_CONF_DIR="$NODEKIT_TEST_DIR/cni/net.d"
CNI_DATA_DIR="$NODEKIT_TEST_DIR/cni/data"
CNI_BIN_DIR=/usr/lib/cni
# libcni keeps its result cache here (containerd offers no setting for it);
# entries are named after the network, so the stop script removes only ours.
CNI_CACHE_DIR=/var/lib/cni
CNI_NETWORK=${CNI_NETWORK:-nodekit-test}
CNI_BRIDGE=${CNI_BRIDGE:-nkbr0}
CNI_SUBNET=${CNI_SUBNET:-10.250.0.0/24}
# Pods run under this cgroupfs parent; the stop script removes it.
CGROUP_PARENT=${CGROUP_PARENT:-nodekit-test}

# Image names the tests use; imported with a fixed tag so IfNotPresent works.
PAUSE_IMAGE=localhost/nodekit/pause:1
BUSYBOX_IMAGE=localhost/nodekit/busybox:1
PAUSE_ARCHIVE="$IMAGE_DIR/pause.oci.tar"
BUSYBOX_ARCHIVE="$IMAGE_DIR/busybox.oci.tar"

log() { printf '[hack] %s\n' "$*" >&2; }
die() { printf '[hack] error: %s\n' "$*" >&2; exit 1; }

# phase NAME CMD... runs CMD with a line when it starts and one when it ends,
# with the seconds it took, so a long phase is never minutes of silence.
phase() {
	local name=$1 t0=$SECONDS rc=0
	shift
	log "$name: started"
	"$@" || rc=$?
	if [ "$rc" -ne 0 ]; then
		log "$name: FAILED after $((SECONDS - t0)) s (exit $rc)"
		return "$rc"
	fi
	log "$name: done in $((SECONDS - t0)) s"
}

need_root() {
	[ "$(id -u)" = 0 ] || die "$0 must run as root (containerd needs it)"
}

# cmdline_args PID fills the array ARGS with the argv of process PID (empty if
# it is gone or a kernel thread).
cmdline_args() {
	ARGS=()
	[ -r "/proc/$1/cmdline" ] || return 0
	mapfile -d '' -t ARGS <"/proc/$1/cmdline" 2>/dev/null || ARGS=()
}

# has_flag NAME VALUE reports whether ARGS holds the flag NAME (with one or two
# dashes) set to VALUE, as "-NAME VALUE" or "-NAME=VALUE".
has_flag() {
	local i n=${#ARGS[@]}
	for ((i = 1; i < n; i++)); do
		case "${ARGS[i]}" in
		"-$1" | "--$1") [ $((i + 1)) -lt "$n" ] && [ "${ARGS[i + 1]}" = "$2" ] && return 0 ;;
		"-$1=$2" | "--$1=$2") return 0 ;;
		esac
	done
	return 1
}

# private_containerd_pids prints the pids of containerd daemons started with
# this project's config file; other containerds on the machine never match.
private_containerd_pids() {
	local p
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		cmdline_args "$p"
		if [ "${#ARGS[@]}" -gt 0 ] && [ "${ARGS[0]##*/}" = containerd ] &&
			{ has_flag config "$CD_CONFIG" || has_flag c "$CD_CONFIG"; }; then
			echo "$p"
		fi
	done
	return 0
}

# take_lock serialises the up and down scripts on one NODEKIT_TEST_DIR; a
# script called by one that holds the lock inherits it.
take_lock() {
	[ -n "${NODEKIT_HACK_LOCKED:-}" ] && return
	mkdir -p "$NODEKIT_TEST_DIR"
	exec 9>"$NODEKIT_TEST_DIR/.lock"
	flock -w 300 9 || die "another hack script holds $NODEKIT_TEST_DIR/.lock for 5 minutes"
	export NODEKIT_HACK_LOCKED=1
}

# ---- Kubernetes control plane (control-plane-up.sh, control-plane-down.sh) ----
# The versions are pinned in hack/tools/go.mod; build-control-plane.sh checks
# that these match it. Both binaries go to one cache dir named after
# Kubernetes' version.
KUBE_VERSION=1.37.2
ETCD_VERSION=3.7.3
KUBE_BIN_DIR="$NODEKIT_CACHE/bin/kube-$KUBE_VERSION"
KUBE_APISERVER_BIN="$KUBE_BIN_DIR/kube-apiserver"
ETCD_BIN="$KUBE_BIN_DIR/etcd"
KUBECTL_BIN="$KUBE_BIN_DIR/kubectl"
# kube-controller-manager runs only its CSR signer, in the e2e tests of
# bootstrap and certificate rotation (test/e2e/bootstrap_helpers_test.go).
KUBE_CONTROLLER_MANAGER_BIN="$KUBE_BIN_DIR/kube-controller-manager"

# Everything of a run lives under CP_DIR: certificates, etcd's data, logs, pid
# files, kubeconfigs and the env file tests source.
CP_DIR="$NODEKIT_TEST_DIR/control-plane"
CP_PKI="$CP_DIR/pki"
CP_ETCD_DATA="$CP_DIR/etcd-data"
CP_ETCD_LOG="$CP_DIR/etcd.log"
CP_ETCD_PID="$CP_DIR/etcd.pid"
CP_APISERVER_LOG="$CP_DIR/kube-apiserver.log"
CP_APISERVER_PID="$CP_DIR/kube-apiserver.pid"
CP_ADMIN_KUBECONFIG="$CP_DIR/admin.kubeconfig"
CP_ENV_FILE="$CP_DIR/env"
# A second, independent lab (another NODEKIT_TEST_DIR) overrides the network,
# cgroup and port settings below through the environment.
# Loopback only, on uncommon fixed ports (etcd's defaults are 2379/2380, the
# apiserver's 6443) so a real cluster on the machine never collides.
CP_ETCD_CLIENT_URL=${CP_ETCD_CLIENT_URL:-https://127.0.0.1:23790}
CP_ETCD_PEER_URL=${CP_ETCD_PEER_URL:-https://127.0.0.1:23800}
CP_APISERVER_PORT=${CP_APISERVER_PORT:-6444}
CP_APISERVER_URL="https://127.0.0.1:$CP_APISERVER_PORT"
CP_SERVICE_CIDR=${CP_SERVICE_CIDR:-10.251.0.0/24}

# ---- metrics-server (build-metrics-server.sh, metrics-server-up.sh) ----
# Pinned in hack/tools/metrics-server/go.mod; v0.9.x supports Kubernetes 1.34+.
METRICS_SERVER_VERSION=0.9.0
METRICS_SERVER_BIN="$NODEKIT_CACHE/bin/metrics-server-$METRICS_SERVER_VERSION/metrics-server"
# metrics-server listens on an address of its own bridge: the aggregator
# reaches it through Endpoints, which may not hold a loopback address.
METRICS_SERVER_BRIDGE=${METRICS_SERVER_BRIDGE:-nkms0}
METRICS_SERVER_ADDRESS=${METRICS_SERVER_ADDRESS:-10.254.0.1}
METRICS_SERVER_PORT=${METRICS_SERVER_PORT:-4443}
# The API server refuses to proxy to a loopback node address and the
# metrics-server scrapes nodes at their InternalIP: test nodes take this
# address (on the same bridge), and one iptables rule redirects connections
# to it onto loopback, where the agents listen.
NODEKIT_NODE_ADDRESS=${NODEKIT_NODE_ADDRESS:-10.254.0.2}
