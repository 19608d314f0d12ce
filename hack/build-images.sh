#!/usr/bin/env bash
# Builds the two container images the tests need, by hand and without a
# registry, as OCI image archives in $IMAGE_DIR:
#
#   $PAUSE_ARCHIVE    $PAUSE_IMAGE    a static pause binary (images/pause.c)
#   $BUSYBOX_ARCHIVE  $BUSYBOX_IMAGE  Debian's busybox-static with its applets
#
# The archive layout is hack/oci-lib.sh's. An archive is rebuilt only when it
# is missing or its inputs (this script, oci-lib.sh, pause.c, the busybox
# binary) changed.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

need_root

# shellcheck source=oci-lib.sh
. "$here/oci-lib.sh"

# Applets the tests rely on; the image gets every applet busybox has.
required_applets=(sh sleep cat echo ls id wc touch mkdir rm env grep true false kill ps
	date test head tail printf nc wget httpd hostname ip mount)

build_pause() {
	local key rootfs
	key=$(cat "$here/build-images.sh" "$OCI_LIB" "$here/images/pause.c" | sha256sum | cut -d' ' -f1)
	up_to_date "$PAUSE_ARCHIVE" "$key" && return
	command -v gcc >/dev/null || die "gcc not found: run hack/install-deps.sh"
	rootfs=$(mktemp -d "$IMAGE_DIR/.pause.XXXXXX")
	gcc -static -O2 -s -Wall -Wextra -o "$rootfs/pause" "$here/images/pause.c" ||
		die "compiling images/pause.c failed (is libc6-dev installed?)"
	chmod 0755 "$rootfs" "$rootfs/pause"
	oci_archive "$PAUSE_ARCHIVE" "$rootfs" \
		'{"Env":["'"$path_env"'"],"Entrypoint":["/pause"],"WorkingDir":"/"}' \
		"gcc -static hack/images/pause.c" "$PAUSE_IMAGE"
	log "built $PAUSE_IMAGE ($PAUSE_ARCHIVE)"
	rm -rf "$rootfs"
	printf '%s\n' "$key" >"$PAUSE_ARCHIVE.key"
}

build_busybox() {
	local key rootfs version
	[ -x /bin/busybox ] || die "/bin/busybox not found: run hack/install-deps.sh (busybox-static)"
	local applets
	applets=$(/bin/busybox --list) || die "/bin/busybox --list failed"
	grep -qx sh <<<"$applets" || die "/bin/busybox has no shell: is it busybox-static?"
	key=$( (cat "$here/build-images.sh" "$OCI_LIB" && sha256sum /bin/busybox) | sha256sum | cut -d' ' -f1)
	up_to_date "$BUSYBOX_ARCHIVE" "$key" && return
	version=$(dpkg-query -W -f='${Version}' busybox-static 2>/dev/null || echo unknown)
	rootfs=$(mktemp -d "$IMAGE_DIR/.busybox.XXXXXX")
	busybox_rootfs "$rootfs"
	local a
	for a in "${required_applets[@]}"; do
		[ -L "$rootfs/bin/$a" ] || die "/bin/busybox has no applet $a"
	done
	oci_archive "$BUSYBOX_ARCHIVE" "$rootfs" \
		'{"Env":["'"$path_env"'"],"Cmd":["sh"],"WorkingDir":"/"}' \
		"Debian busybox-static $version with applet symlinks" "$BUSYBOX_IMAGE"
	log "built $BUSYBOX_IMAGE ($BUSYBOX_ARCHIVE)"
	rm -rf "$rootfs"
	printf '%s\n' "$key" >"$BUSYBOX_ARCHIVE.key"
}

mkdir -p "$IMAGE_DIR"
# Leftovers of an interrupted build.
rm -rf "$IMAGE_DIR"/.build.* "$IMAGE_DIR"/.pause.* "$IMAGE_DIR"/.busybox.*
build_pause
build_busybox
log "images ready in $IMAGE_DIR"
