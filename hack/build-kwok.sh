#!/usr/bin/env bash
# Builds kwok v$KWOK_VERSION (the controller, cmd/kwok) from the Go module
# proxy into $KWOK_BIN, once, with the stages kwokctl gives the controller
# by default (node-initialize, node-heartbeat-with-lease, pod-ready,
# pod-complete, pod-delete) copied from the same module into
# $KWOK_STAGES; a second call finds them there, reporting the pinned
# version, and returns at once. test/clusterbench runs kwok beside
# nodekit's simulated nodes (docs/cluster-scale.md).
#
# It is built in its own tools module, hack/tools/kwok, whose go.mod pins
# it: kwok requires k8s.io modules at v0.36, which must not move hack/tools'
# pins of k8s.io/kubernetes v1.37.2.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

KWOK_VERSION=0.8.0
KWOK_BIN="$NODEKIT_CACHE/bin/kwok-$KWOK_VERSION/kwok"
KWOK_STAGES="$NODEKIT_CACHE/bin/kwok-$KWOK_VERSION/stages"
tools_dir="$here/tools/kwok"
# The default stages, as paths in kwok's module.
stage_files=(
	kustomize/stage/node/fast/node-initialize.yaml
	kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml
	kustomize/stage/pod/fast/pod-ready.yaml
	kustomize/stage/pod/fast/pod-complete.yaml
	kustomize/stage/pod/fast/pod-delete.yaml
)

# binary_current reports whether $KWOK_BIN is there and says it is
# v$KWOK_VERSION ("kwok version v0.8.0 go1.26.8 (linux/amd64)").
binary_current() {
	[ -x "$KWOK_BIN" ] || return 1
	local out
	out=$("$KWOK_BIN" --version 2>/dev/null) || return 1
	case "$out" in
	"kwok version v$KWOK_VERSION "*) return 0 ;;
	esac
	return 1
}

stages_present() {
	local f
	for f in "${stage_files[@]}"; do
		[ -s "$KWOK_STAGES/${f##*/}" ] || return 1
	done
}

install_stages() {
	local dir f
	dir=$(cd "$tools_dir" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok) ||
		die "cannot find kwok's module in the Go module cache (go mod download in $tools_dir)"
	mkdir -p "$KWOK_STAGES"
	for f in "${stage_files[@]}"; do
		[ -s "$dir/$f" ] || die "kwok v$KWOK_VERSION has no $f"
		cp "$dir/$f" "$KWOK_STAGES/"
	done
	log "kwok's default stages in $KWOK_STAGES"
}

if binary_current; then
	stages_present || install_stages
	log "kwok v$KWOK_VERSION ready in $KWOK_BIN"
	exit 0
fi
command -v go >/dev/null || die "go not found in PATH: install Go to build kwok"
pinned=$(cd "$tools_dir" && go list -m -f '{{.Version}}' sigs.k8s.io/kwok) ||
	die "cannot read kwok's version from $tools_dir/go.mod"
[ "$pinned" = "v$KWOK_VERSION" ] ||
	die "$tools_dir/go.mod pins kwok $pinned, this script wants v$KWOK_VERSION"
log "building kwok v$KWOK_VERSION (minutes with a cold Go build cache: 29 on 2 cores at load average 80-150; once)"
start=$SECONDS
mkdir -p "$NODEKIT_CACHE/bin"
tmp=$(mktemp -d "$NODEKIT_CACHE/bin/.kwok-build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# The version goes where kwok's release script puts it.
(cd "$tools_dir" && CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" go build -trimpath \
	-ldflags "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION" \
	-o "$tmp/kwok" sigs.k8s.io/kwok/cmd/kwok) ||
	die "building kwok failed"
mkdir -p "${KWOK_BIN%/*}"
mv -f "$tmp/kwok" "$KWOK_BIN"
binary_current || die "the built kwok does not report v$KWOK_VERSION"
install_stages
log "built kwok into $KWOK_BIN in $((SECONDS - start))s"
