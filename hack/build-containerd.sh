#!/usr/bin/env bash
# Builds containerd v$CONTAINERD_VERSION (daemon, runc shim, ctr) and crictl
# from the Go module proxy into $NODEKIT_CACHE, once. A second call finds the
# binaries there and returns at once.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

need_go() {
	command -v go >/dev/null || die "go not found in PATH: install Go (see go.mod) to build containerd and crictl"
}

build_containerd() {
	if [ -x "$BIN_DIR/containerd" ] && [ -x "$BIN_DIR/containerd-shim-runc-v2" ] && [ -x "$BIN_DIR/ctr" ]; then
		return
	fi
	need_go
	log "building containerd v$CONTAINERD_VERSION (about 2 minutes on 2 cores)"
	mkdir -p "$BIN_DIR"
	local tmp
	tmp=$(mktemp -d)
	GOBIN="$tmp" GOFLAGS=-buildvcs=false go install \
		-ldflags "-X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION" \
		"github.com/containerd/containerd/v2/cmd/containerd@v$CONTAINERD_VERSION" \
		"github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@v$CONTAINERD_VERSION" \
		"github.com/containerd/containerd/v2/cmd/ctr@v$CONTAINERD_VERSION"
	mv "$tmp"/* "$BIN_DIR/"
	rmdir "$tmp"
}

build_crictl() {
	[ -x "$CRICTL_BIN" ] && return
	need_go
	log "building crictl v$CRICTL_VERSION"
	local tmp
	tmp=$(mktemp -d)
	GOBIN="$tmp" GOFLAGS=-buildvcs=false go install "sigs.k8s.io/cri-tools/cmd/crictl@v$CRICTL_VERSION"
	mkdir -p "$(dirname "$CRICTL_BIN")"
	mv "$tmp/crictl" "$CRICTL_BIN"
	rmdir "$tmp"
}

build_containerd &
cd_pid=$!
build_crictl &
cr_pid=$!
wait "$cd_pid" || die "containerd build failed"
wait "$cr_pid" || die "crictl build failed"
log "binaries ready in $NODEKIT_CACHE/bin"
