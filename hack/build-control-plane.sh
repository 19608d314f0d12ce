#!/usr/bin/env bash
# Builds kube-apiserver v$KUBE_VERSION, etcd v$ETCD_VERSION, kubectl
# v$KUBE_VERSION (for the e2e tests: logs, exec, port-forward through the API
# server) and kube-controller-manager v$KUBE_VERSION (its CSR signer, for the
# e2e tests of bootstrap and certificate rotation) from the Go module proxy
# into $KUBE_BIN_DIR, once. A second call
# finds binaries there that report the right versions and returns at once;
# only what is missing or stale is built.
#
# `go install k8s.io/kubernetes/cmd/kube-apiserver@v...` is refused (that
# module, like etcd's server module, has replace directives), so both are
# built inside the tools module hack/tools, whose go.mod pins them.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

tools_dir="$here/tools"

# kubectl_current reports whether kubectl exists and reports the pinned
# version.
kubectl_current() {
	[ -x "$KUBECTL_BIN" ] || return 1
	local out
	out=$("$KUBECTL_BIN" version --client 2>/dev/null) || return 1
	grep -qx "Client Version: v$KUBE_VERSION" <<<"$out"
}

# kcm_current reports whether kube-controller-manager exists and reports
# the pinned version.
kcm_current() {
	[ -x "$KUBE_CONTROLLER_MANAGER_BIN" ] || return 1
	[ "$("$KUBE_CONTROLLER_MANAGER_BIN" --version 2>/dev/null)" = "Kubernetes v$KUBE_VERSION" ]
}

# binaries_current reports whether kube-apiserver and etcd exist and report
# the pinned versions.
binaries_current() {
	[ -x "$KUBE_APISERVER_BIN" ] && [ -x "$ETCD_BIN" ] || return 1
	[ "$("$KUBE_APISERVER_BIN" --version 2>/dev/null)" = "Kubernetes v$KUBE_VERSION" ] || return 1
	# Capture first: a pipe into grep -q under pipefail fails at random
	# (grep exits at the first match and the writer gets SIGPIPE).
	local etcd_out
	etcd_out=$("$ETCD_BIN" --version 2>/dev/null) || return 1
	grep -qx "etcd Version: $ETCD_VERSION" <<<"$etcd_out"
}

# check_pins fails unless hack/tools/go.mod pins the versions lib.sh names.
check_pins() {
	local kube etcd
	kube=$(cd "$tools_dir" && go list -m -f '{{.Version}}' k8s.io/kubernetes) ||
		die "cannot read k8s.io/kubernetes' version from $tools_dir/go.mod"
	etcd=$(cd "$tools_dir" && go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3) ||
		die "cannot read etcd's version from $tools_dir/go.mod"
	[ "$kube" = "v$KUBE_VERSION" ] || die "$tools_dir/go.mod pins k8s.io/kubernetes $kube, lib.sh wants v$KUBE_VERSION"
	[ "$etcd" = "v$ETCD_VERSION" ] || die "$tools_dir/go.mod pins etcd $etcd, lib.sh wants v$ETCD_VERSION"
}

# ldflags sets the version kube-apiserver reports (else v0.0.0-master), in
# both places Kubernetes keeps it (etcd's version is a constant in its
# source), and strips the symbol and DWARF tables as upstream's release builds
# do (170 MB of kube-apiserver become about 120 MB).
ldflags() {
	local minor=${KUBE_VERSION#*.} pkg flags=(-s -w)
	minor=${minor%%.*}
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		flags+=("-X $pkg.gitVersion=v$KUBE_VERSION" "-X $pkg.gitMajor=${KUBE_VERSION%%.*}"
			"-X $pkg.gitMinor=$minor" "-X $pkg.gitTreeState=clean")
	done
	echo "${flags[*]}"
}

build_kubectl() {
	log "building kubectl v$KUBE_VERSION (2 to 5 minutes on 2 cores once the control plane is built, once)"
	local start=$SECONDS tmp
	mkdir -p "$NODEKIT_CACHE/bin" "$KUBE_BIN_DIR"
	tmp=$(mktemp -d "$NODEKIT_CACHE/bin/.kubectl-build.XXXXXX")
	(cd "$tools_dir" && CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" go build -trimpath \
		-ldflags "$(ldflags)" -o "$tmp/kubectl" k8s.io/kubernetes/cmd/kubectl) || {
		rm -rf "$tmp"
		die "building kubectl failed"
	}
	mv -f "$tmp/kubectl" "$KUBECTL_BIN"
	rm -rf "$tmp"
	kubectl_current || die "the built kubectl does not report v$KUBE_VERSION"
	log "built kubectl into $KUBE_BIN_DIR in $((SECONDS - start))s"
}

build_kcm() {
	log "building kube-controller-manager v$KUBE_VERSION (2 to 4 minutes on 2 cores once the control plane is built, once)"
	local start=$SECONDS tmp
	mkdir -p "$NODEKIT_CACHE/bin" "$KUBE_BIN_DIR"
	tmp=$(mktemp -d "$NODEKIT_CACHE/bin/.kcm-build.XXXXXX")
	(cd "$tools_dir" && CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" go build -trimpath \
		-ldflags "$(ldflags)" -o "$tmp/kube-controller-manager" k8s.io/kubernetes/cmd/kube-controller-manager) || {
		rm -rf "$tmp"
		die "building kube-controller-manager failed"
	}
	mv -f "$tmp/kube-controller-manager" "$KUBE_CONTROLLER_MANAGER_BIN"
	rm -rf "$tmp"
	kcm_current || die "the built kube-controller-manager does not report v$KUBE_VERSION"
	log "built kube-controller-manager into $KUBE_BIN_DIR in $((SECONDS - start))s"
}

# build_extras builds kubectl and kube-controller-manager where missing or
# stale.
build_extras() {
	kubectl_current && kcm_current && return 0
	command -v go >/dev/null || die "go not found in PATH: install Go (see hack/tools/go.mod) to build kubectl and kube-controller-manager"
	check_pins
	kubectl_current || build_kubectl
	kcm_current || build_kcm
}

if binaries_current; then
	log "kube-apiserver v$KUBE_VERSION and etcd v$ETCD_VERSION ready in $KUBE_BIN_DIR"
	build_extras
	log "kubectl and kube-controller-manager v$KUBE_VERSION ready in $KUBE_BIN_DIR"
	exit 0
fi
command -v go >/dev/null || die "go not found in PATH: install Go (see hack/tools/go.mod) to build the control plane"
check_pins
log "building kube-apiserver v$KUBE_VERSION and etcd v$ETCD_VERSION (5 to 8 minutes on 2 cores with a cold Go build cache, once)"
start=$SECONDS
mkdir -p "$NODEKIT_CACHE/bin"
tmp=$(mktemp -d "$NODEKIT_CACHE/bin/.kube-build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# One go command for both, so shared packages compile once. CGO_ENABLED=0
# gives static binaries, as upstream's release builds; -mod=readonly keeps
# go.mod and go.sum as committed.
(cd "$tools_dir" && CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" go build -trimpath \
	-ldflags "$(ldflags)" -o "$tmp/" k8s.io/kubernetes/cmd/kube-apiserver go.etcd.io/etcd/server/v3) ||
	die "building the control plane failed"
# go names etcd's binary after its module path (go.etcd.io/etcd/server/v3).
mv "$tmp/server" "$tmp/etcd"
mkdir -p "$KUBE_BIN_DIR"
mv -f "$tmp/kube-apiserver" "$KUBE_APISERVER_BIN"
mv -f "$tmp/etcd" "$ETCD_BIN"
binaries_current || die "the built binaries do not report kube-apiserver v$KUBE_VERSION and etcd v$ETCD_VERSION"
log "built kube-apiserver and etcd into $KUBE_BIN_DIR in $((SECONDS - start))s"
build_extras
