#!/usr/bin/env bash
# Builds metrics-server v$METRICS_SERVER_VERSION from the Go module proxy into
# $METRICS_SERVER_BIN, once; a second call finds it there, reporting the
# pinned version, and returns at once.
#
# It is built in its own tools module, hack/tools/metrics-server, whose go.mod
# pins it: metrics-server requires k8s.io modules at v0.36, which must not
# move hack/tools' pins of k8s.io/kubernetes v1.37.2.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

tools_dir="$here/tools/metrics-server"

binary_current() {
	[ -x "$METRICS_SERVER_BIN" ] || return 1
	local out
	out=$("$METRICS_SERVER_BIN" --version 2>/dev/null) || return 1
	[ "$out" = "v$METRICS_SERVER_VERSION" ]
}

if binary_current; then
	log "metrics-server v$METRICS_SERVER_VERSION ready in $METRICS_SERVER_BIN"
	exit 0
fi
command -v go >/dev/null || die "go not found in PATH: install Go to build metrics-server"
pinned=$(cd "$tools_dir" && go list -m -f '{{.Version}}' sigs.k8s.io/metrics-server) ||
	die "cannot read metrics-server's version from $tools_dir/go.mod"
[ "$pinned" = "v$METRICS_SERVER_VERSION" ] ||
	die "$tools_dir/go.mod pins metrics-server $pinned, lib.sh wants v$METRICS_SERVER_VERSION"
log "building metrics-server v$METRICS_SERVER_VERSION (2 to 4 minutes on 2 cores with a cold Go build cache, once)"
start=$SECONDS
mkdir -p "$NODEKIT_CACHE/bin"
tmp=$(mktemp -d "$NODEKIT_CACHE/bin/.metrics-server-build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# The version goes where metrics-server's Makefile puts it (client-go's).
(cd "$tools_dir" && CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" go build -trimpath \
	-ldflags "-s -w -X k8s.io/client-go/pkg/version.gitVersion=v$METRICS_SERVER_VERSION" \
	-o "$tmp/metrics-server" sigs.k8s.io/metrics-server/cmd/metrics-server) ||
	die "building metrics-server failed"
mkdir -p "${METRICS_SERVER_BIN%/*}"
mv -f "$tmp/metrics-server" "$METRICS_SERVER_BIN"
binary_current || die "the built metrics-server does not report v$METRICS_SERVER_VERSION"
log "built metrics-server into $METRICS_SERVER_BIN in $((SECONDS - start))s"
