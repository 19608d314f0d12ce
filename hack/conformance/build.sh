#!/usr/bin/env bash
# Builds what the conformance run needs and is not built yet, into
# $CONF_BIN_DIR (one dir per Kubernetes version, so a second run starts in
# seconds): e2e.test, the ginkgo CLI (the version k8s.io/kubernetes pins),
# kube-controller-manager, kube-scheduler, the upstream kubelet (the reference
# agent) and agnhost (for the test images). kube-apiserver and etcd come from
# hack/build-control-plane.sh (hack/tools), which this script calls.
#
# The tools module hack/conformance/tools is separate from hack/tools so that
# CI's control-plane pins never move with the e2e suite's. Every build runs
# under `nice -n 19`: the machine is shared.
#
# Usage: build.sh [all|control-plane|e2e|bins|agnhost]...  (default: all)
set -euo pipefail
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

ldflags() {
	local minor=${KUBE_VERSION#*.} pkg flags=(-s -w)
	minor=${minor%%.*}
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		flags+=("-X $pkg.gitVersion=v$KUBE_VERSION" "-X $pkg.gitMajor=${KUBE_VERSION%%.*}"
			"-X $pkg.gitMinor=$minor" "-X $pkg.gitTreeState=clean")
	done
	echo "${flags[*]}"
}

check_pins() {
	local kube
	kube=$(cd "$CONF_TOOLS_DIR" && go list -m -f '{{.Version}}' k8s.io/kubernetes) ||
		die "cannot read k8s.io/kubernetes' version from $CONF_TOOLS_DIR/go.mod"
	[ "$kube" = "v$KUBE_VERSION" ] || die "$CONF_TOOLS_DIR/go.mod pins k8s.io/kubernetes $kube, hack/lib.sh wants v$KUBE_VERSION"
}

# gobuild OUTDIR ARGS... runs go in the tools module, niced, read-only go.mod.
gobuild() {
	(cd "$CONF_TOOLS_DIR" && GOFLAGS="-mod=readonly -buildvcs=false" nice -n 19 go "$@")
}

# install_to TMPFILE DEST moves a fresh build into the cache atomically.
install_to() { mkdir -p "$CONF_BIN_DIR" && mv -f "$1" "$2"; }

reports_version() {
	local out
	[ -x "$1" ] || return 1
	out=$("$1" --version 2>/dev/null) || return 1
	[ "$out" = "Kubernetes v$KUBE_VERSION" ]
}

build_e2e() {
	if [ -x "$CONF_E2E_BIN" ] && [ -f "$CONF_E2E_BIN.ok" ]; then return 0; fi
	clog "building e2e.test v$KUBE_VERSION (about 10 minutes on 2 cores, once)"
	local tmp t0=$SECONDS
	tmp=$(mktemp -d "$NODEKIT_CACHE/bin/.conf-e2e.XXXXXX")
	CGO_ENABLED=0 gobuild test -c -trimpath -ldflags "$(ldflags)" -o "$tmp/e2e.test" k8s.io/kubernetes/test/e2e ||
		{ rm -rf "$tmp"; die "building e2e.test failed"; }
	install_to "$tmp/e2e.test" "$CONF_E2E_BIN"
	rm -rf "$tmp"
	touch "$CONF_E2E_BIN.ok"
	clog "built e2e.test in $((SECONDS - t0)) s"
}

build_bins() {
	local need=()
	reports_version "$CONF_KCM_BIN" || need+=(k8s.io/kubernetes/cmd/kube-controller-manager)
	reports_version "$CONF_SCHED_BIN" || need+=(k8s.io/kubernetes/cmd/kube-scheduler)
	reports_version "$CONF_KUBELET_BIN" || need+=(k8s.io/kubernetes/cmd/kubelet)
	[ -x "$CONF_GINKGO_BIN" ] || need+=(github.com/onsi/ginkgo/v2/ginkgo)
	[ "${#need[@]}" -gt 0 ] || return 0
	clog "building ${need[*]##*/}"
	local tmp t0=$SECONDS f
	tmp=$(mktemp -d "$NODEKIT_CACHE/bin/.conf-bins.XXXXXX")
	CGO_ENABLED=0 gobuild build -trimpath -ldflags "$(ldflags)" -o "$tmp/" "${need[@]}" ||
		{ rm -rf "$tmp"; die "building ${need[*]} failed"; }
	for f in "$tmp"/*; do install_to "$f" "$CONF_BIN_DIR/${f##*/}"; done
	rm -rf "$tmp"
	clog "built ${need[*]##*/} in $((SECONDS - t0)) s"
}

# build_agnhost builds the two programs of the test images, static: agnhost
# and nonewprivs' nnp.
build_agnhost() {
	[ -x "$CONF_AGNHOST_BIN" ] && [ -x "$CONF_NNP_BIN" ] && return 0
	clog "building agnhost and nnp (static)"
	local tmp t0=$SECONDS
	tmp=$(mktemp -d "$NODEKIT_CACHE/bin/.conf-agnhost.XXXXXX")
	CGO_ENABLED=0 gobuild build -trimpath -ldflags "-s -w" -o "$tmp/" k8s.io/kubernetes/test/images/agnhost \
		k8s.io/kubernetes/test/images/nonewprivs || { rm -rf "$tmp"; die "building agnhost failed"; }
	install_to "$tmp/agnhost" "$CONF_AGNHOST_BIN"
	install_to "$tmp/nonewprivs" "$CONF_NNP_BIN"
	rm -rf "$tmp"
	clog "built agnhost and nnp in $((SECONDS - t0)) s"
}

build_control_plane() {
	# hack/build-control-plane.sh returns at once when the binaries exist.
	nice -n 19 "$hack_dir/build-control-plane.sh"
}

# locked TARGET FUNC runs FUNC holding a lock per target, so two runs (or two
# targets built at once) never build the same binary twice: the second waits
# and then finds it built.
locked() {
	(
		exec 7>"$NODEKIT_CACHE/bin/.conformance-$1.lock"
		flock 7
		"$2"
	)
}

main() {
	command -v go >/dev/null || die "go not found in PATH"
	mkdir -p "$NODEKIT_CACHE/bin"
	local what=("$@") w
	[ "${#what[@]}" -gt 0 ] || what=(all)
	for w in "${what[@]}"; do
		case "$w" in
		all) check_pins; build_control_plane; locked bins build_bins; locked agnhost build_agnhost; locked e2e build_e2e ;;
		control-plane) build_control_plane ;;
		e2e) check_pins; locked e2e build_e2e ;;
		bins) check_pins; locked bins build_bins ;;
		agnhost) check_pins; locked agnhost build_agnhost ;;
		*) die "unknown build target $w" ;;
		esac
	done
}
main "$@"; exit
