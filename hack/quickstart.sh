#!/usr/bin/env bash
# Brings up everything nodekit needs on a fresh machine (Debian packages,
# a private containerd v2.4.2 built from the Go module proxy, two local
# images) and runs the agent on examples/manifests. Run as root. Ctrl-C stops
# the agent and leaves the pods running; run it again and it adopts them.
# hack/containerd-down.sh removes everything.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
need_root
cd "$here/.."
phase "private containerd (hack/containerd-up.sh; a cold build takes about 3 minutes)" bash "$here/containerd-up.sh"
# shellcheck disable=SC1091
. "$NODEKIT_TEST_DIR/env"
mkdir -p "$NODEKIT_CACHE/bin"
phase "agent build (go build -tags $NODEKIT_BUILD_TAGS ./cmd/nodekit)" go build -tags "$NODEKIT_BUILD_TAGS" -o "$NODEKIT_CACHE/bin/nodekit" ./cmd/nodekit
log "agent: pods on http://127.0.0.1:10255/pods, health on /healthz"
exec "$NODEKIT_CACHE/bin/nodekit" run \
	--manifests "${MANIFESTS:-examples/manifests}" \
	--runtime-endpoint "$NODEKIT_CRI_ENDPOINT" \
	--root-dir "$NODEKIT_TEST_DIR/agent" \
	--cgroup-root "$NODEKIT_CGROUP_PARENT" \
	--node-ip 127.0.0.1 "$@"
