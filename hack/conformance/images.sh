#!/usr/bin/env bash
# Builds the container images the [NodeConformance] specs use, by hand (no
# registry is reachable), as one-layer OCI archives in $CONF_IMAGE_DIR, and
# imports them into the lab containerd's k8s.io namespace under exactly the
# names k8s.io/kubernetes/test/utils/image/manifest.go gives them (the specs
# use imagePullPolicy IfNotPresent, so a present image is never pulled):
#
#   registry.k8s.io/e2e-test-images/agnhost:2.66.1 and :2.55
#       /agnhost (built from k8s.io/kubernetes/test/images/agnhost, static),
#       /agnhost-2 -> agnhost, busybox applets in /bin, Debian's bash and curl
#       with their libraries (lifecycle hooks and probes exec them),
#       /localhost.crt and .key (agnhost's porter pair: https hooks), the
#       user-defined-in-image user (1000) and group (50000) of the upstream
#       image; ENTRYPOINT /agnhost, CMD pause.
#   registry.k8s.io/e2e-test-images/busybox:1.37.0-2
#       Debian's busybox-static with its applets (1.35: its sh drops
#       environment names that are not shell identifiers, see
#       docs/conformance.md).
#   registry.k8s.io/e2e-test-images/nonewprivs:1.4
#       busybox plus /usr/local/bin/nnp, setuid root (prints its euid).
#   registry.k8s.io/e2e-test-images/nonroot:1.5
#       busybox, USER 1234.
#   registry.k8s.io/pause:3.10.2
#       the static pause of hack/images/pause.c.
#
# Not provided: glibc-dns-testing, nginx, and the volume/storage images (the
# specs that need them fail or are outside the focus; docs/conformance.md).
#
# Usage: images.sh [build|import]...   (default: build import)
set -euo pipefail
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

need_root

# shellcheck source=../oci-lib.sh
. "$hack_dir/oci-lib.sh"
E2E=registry.k8s.io/e2e-test-images
AGNHOST_NAMES=("$E2E/agnhost:2.66.1" "$E2E/agnhost:2.55")
BUSYBOX_NAME=$E2E/busybox:1.37.0-2
NONEWPRIVS_NAME=$E2E/nonewprivs:1.4
NONROOT_NAME=$E2E/nonroot:1.5
PAUSE_NAME=registry.k8s.io/pause:3.10.2

# add_dynamic ROOTFS BINARY DEST copies a dynamically linked host binary to
# ROOTFS/DEST with every library ldd names, at the same paths.
add_dynamic() {
	local r=$1 bin=$2 dest=$3 lib libs
	rm -f "$r$dest"
	install -D -m 0755 "$bin" "$r$dest"
	libs=$(ldd "$bin" | awk '/=> \//{print $3} /^\t\//{print $1}') || die "ldd $bin failed"
	for lib in $libs; do
		[ -e "$r$lib" ] && continue
		install -D -m 0755 "$(readlink -f "$lib")" "$r$lib"
	done
}

key_of() { (cat "$0" "$OCI_LIB" "$@" | sha256sum | cut -d' ' -f1); }

build_one() {
	local name=$1 key=$2
	shift 2
	local out="$CONF_IMAGE_DIR/$name.oci.tar" rootfs
	up_to_date "$out" "$key" && return 0
	rootfs=$(mktemp -d "$CONF_IMAGE_DIR/.rootfs.XXXXXX")
	busybox_rootfs "$rootfs"
	mkdir -p "$rootfs/usr/local/bin"
	"rootfs_$name" "$rootfs"
	oci_archive "$out" "$rootfs" "$("config_$name")" "hack/conformance/images.sh $name" "$@"
	clog "built $* ($out)"
	rm -rf "$rootfs"
	printf '%s\n' "$key" >"$out.key"
}

rootfs_agnhost() {
	local r=$1
	install -m 0755 "$CONF_AGNHOST_BIN" "$r/agnhost"
	ln -s agnhost "$r/agnhost-2"
	add_dynamic "$r" /bin/bash /bin/bash
	add_dynamic "$r" /usr/bin/curl /bin/curl
	mkdir -p "$r/uploads"
	# The serving pair of the upstream image (netexec --tls-cert-file
	# /localhost.crt: the https lifecycle hook specs).
	install -m 0644 "$(agnhost_src)/porter/localhost.crt" "$r/localhost.crt"
	install -m 0644 "$(agnhost_src)/porter/localhost.key" "$r/localhost.key"
	echo 'user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh' >>"$r/etc/passwd"
	printf '%s\n' 'user-defined-in-image:x:1000:' 'group-defined-in-image:x:50000:user-defined-in-image' >>"$r/etc/group"
	mkdir -p "$r/home/user-defined-in-image"
}
# agnhost_src prints the directory of agnhost's sources in the module cache.
agnhost_src() {
	(cd "$CONF_TOOLS_DIR" && go list -mod=readonly -f '{{.Dir}}' k8s.io/kubernetes/test/images/agnhost) ||
		die "cannot find agnhost's sources"
}
config_agnhost() { printf '{"Env":["%s"],"Entrypoint":["/agnhost"],"Cmd":["pause"],"WorkingDir":"/"}' "$path_env"; }
rootfs_busybox() { :; }
config_busybox() { printf '{"Env":["%s"],"Cmd":["sh"],"WorkingDir":"/"}' "$path_env"; }
rootfs_nonewprivs() { install -m 4755 "$CONF_NNP_BIN" "$1/usr/local/bin/nnp"; }
config_nonewprivs() { printf '{"Env":["%s"],"Cmd":["nnp"],"WorkingDir":"/"}' "$path_env"; }
rootfs_nonroot() { :; }
config_nonroot() { printf '{"Env":["%s"],"Cmd":["sh"],"User":"1234","WorkingDir":"/"}' "$path_env"; }
rootfs_pause() {
	rm -rf "${1:?}"/*
	gcc -static -O2 -s -o "$1/pause" "$hack_dir/images/pause.c" || die "compiling hack/images/pause.c failed"
}
config_pause() { printf '{"Env":["%s"],"Entrypoint":["/pause"],"WorkingDir":"/"}' "$path_env"; }

build() {
	[ -x "$CONF_AGNHOST_BIN" ] && [ -x "$CONF_NNP_BIN" ] || die "agnhost or nnp not built: run hack/conformance/build.sh agnhost"
	mkdir -p "$CONF_IMAGE_DIR"
	rm -rf "$CONF_IMAGE_DIR"/.build.* "$CONF_IMAGE_DIR"/.rootfs.*
	build_one agnhost "$(key_of "$CONF_AGNHOST_BIN" /bin/busybox /bin/bash /usr/bin/curl "$(agnhost_src)/porter/localhost.crt")" "${AGNHOST_NAMES[@]}"
	build_one busybox "$(key_of /bin/busybox)" "$BUSYBOX_NAME"
	build_one nonewprivs "$(key_of /bin/busybox "$CONF_NNP_BIN")" "$NONEWPRIVS_NAME"
	build_one nonroot "$(key_of /bin/busybox)" "$NONROOT_NAME"
	build_one pause "$(key_of "$hack_dir/images/pause.c")" "$PAUSE_NAME"
}

import() {
	local ctr=("$CTR_BIN" --address "$CD_SOCK" --namespace "$CD_NAMESPACE") crictl=("$CRICTL_BIN" --config "$CRICTL_CONFIG")
	local img out n names
	for img in agnhost busybox nonewprivs nonroot pause; do
		case $img in
		agnhost) names=("${AGNHOST_NAMES[@]}") ;;
		busybox) names=("$BUSYBOX_NAME") ;;
		nonewprivs) names=("$NONEWPRIVS_NAME") ;;
		nonroot) names=("$NONROOT_NAME") ;;
		pause) names=("$PAUSE_NAME") ;;
		esac
		local missing=
		for n in "${names[@]}"; do "${crictl[@]}" inspecti "$n" >/dev/null 2>&1 || missing=1; done
		[ -n "$missing" ] || continue
		out=$("${ctr[@]}" images import "$CONF_IMAGE_DIR/$img.oci.tar" 2>&1) || { printf '%s\n' "$out" >&2; die "importing $img failed"; }
		clog "imported ${names[*]}"
	done
	local deadline=$((SECONDS + 20))
	for n in "${AGNHOST_NAMES[@]}" "$BUSYBOX_NAME" "$NONEWPRIVS_NAME" "$NONROOT_NAME" "$PAUSE_NAME"; do
		until "${crictl[@]}" inspecti "$n" >/dev/null 2>&1; do
			[ "$SECONDS" -lt "$deadline" ] || die "CRI does not list $n after import"
			sleep 0.2
		done
	done
}

what=("$@")
[ "${#what[@]}" -gt 0 ] || what=(build import)
for w in "${what[@]}"; do
	case "$w" in
	build) build ;;
	import) import ;;
	*) die "usage: $0 [build|import]..." ;;
	esac
done
