# shellcheck shell=bash
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
NODEKIT_TEST_DIR=${NODEKIT_TEST_DIR:-/var/lib/nodekit-test}

BIN_DIR="$NODEKIT_CACHE/bin/containerd-$CONTAINERD_VERSION"
CRICTL_BIN="$NODEKIT_CACHE/bin/crictl-$CRICTL_VERSION/crictl"
IMAGE_DIR="$NODEKIT_CACHE/images"

CD_ROOT="$NODEKIT_TEST_DIR/root"
CD_STATE="$NODEKIT_TEST_DIR/state"
CD_SOCK="$NODEKIT_TEST_DIR/containerd.sock"
CD_CONFIG="$NODEKIT_TEST_DIR/config.toml"
CD_LOG="$NODEKIT_TEST_DIR/containerd.log"
CD_PID="$NODEKIT_TEST_DIR/containerd.pid"
CNI_CONF_DIR="$NODEKIT_TEST_DIR/cni/net.d"
CNI_DATA_DIR="$NODEKIT_TEST_DIR/cni/data"
CNI_BRIDGE=nkbr0
CNI_SUBNET=10.250.0.0/24
# Pods run under this cgroupfs parent; the stop script removes it.
CGROUP_PARENT=nodekit-test

# Image names the tests use; imported with a fixed tag so IfNotPresent works.
PAUSE_IMAGE=localhost/nodekit/pause:1
BUSYBOX_IMAGE=localhost/nodekit/busybox:1

log() { printf '[hack] %s\n' "$*" >&2; }
die() { printf '[hack] error: %s\n' "$*" >&2; exit 1; }

need_root() {
	[ "$(id -u)" = 0 ] || die "$0 must run as root (containerd needs it)"
}
