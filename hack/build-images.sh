#!/usr/bin/env bash
# Builds the two container images the tests need, by hand and without a
# registry, as OCI image archives in $IMAGE_DIR:
#
#   $PAUSE_ARCHIVE    $PAUSE_IMAGE    a static pause binary (images/pause.c)
#   $BUSYBOX_ARCHIVE  $BUSYBOX_IMAGE  Debian's busybox-static with its applets
#
# Each archive holds oci-layout, index.json and blobs/sha256/{layer tar, config
# JSON, manifest JSON}. The index carries io.containerd.image.name (the full
# name, which `ctr images import` uses as the image name) and
# org.opencontainers.image.ref.name (the tag, as the OCI layout spec says).
# Layers are uncompressed tars with fixed owners, order and mtimes, so the same
# inputs give the same digests. An archive is rebuilt only when it is missing
# or its inputs (this script, pause.c, the busybox binary) changed.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

need_root

case "$(uname -m)" in
x86_64) arch=amd64 ;;
aarch64) arch=arm64 ;;
*) die "unsupported machine $(uname -m): only amd64 and arm64 images are built" ;;
esac

epoch=1970-01-01T00:00:00Z
path_env=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# Applets the tests rely on; the image gets every applet busybox has.
required_applets=(sh sleep cat echo ls id wc touch mkdir rm env grep true false kill ps
	date test head tail printf nc wget httpd hostname ip mount)

digest_of() { sha256sum "$1" | cut -d' ' -f1; }
size_of() { stat -c %s "$1"; }

# reproducible_tar OUT DIR ENTRY... writes a tar of DIR's ENTRYs that depends
# only on their names, modes and contents.
reproducible_tar() {
	local out=$1 dir=$2
	shift 2
	tar --create --file "$out" --directory "$dir" --sort=name --format=gnu \
		--owner=0 --group=0 --numeric-owner --mtime=@0 "$@"
}

# add_blob OCIDIR FILE moves FILE into OCIDIR's blob store and prints its digest.
add_blob() {
	local d
	d=$(digest_of "$2")
	mv "$2" "$1/blobs/sha256/$d"
	printf '%s' "$d"
}

# oci_archive OUT NAME ROOTFS CONFIG_JSON_BODY HISTORY writes an OCI archive
# for the single-layer image NAME whose root file system is ROOTFS. The config
# body is the JSON object for the image's "config" field.
oci_archive() {
	local out=$1 name=$2 rootfs=$3 body=$4 history=$5
	local work oci layer diff cfg cfg_d man man_d
	work=$(mktemp -d "$IMAGE_DIR/.build.XXXXXX")
	oci="$work/oci"
	mkdir -p "$oci/blobs/sha256"

	layer="$work/layer.tar"
	# shellcheck disable=SC2046 # entry names have no spaces
	reproducible_tar "$layer" "$rootfs" $(cd "$rootfs" && ls -A)
	diff=$(digest_of "$layer")
	local layer_size
	layer_size=$(size_of "$layer")
	add_blob "$oci" "$layer" >/dev/null

	cfg="$work/config.json"
	printf '{"created":"%s","architecture":"%s","os":"linux","config":%s,"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created":"%s","created_by":"%s"}]}' \
		"$epoch" "$arch" "$body" "$diff" "$epoch" "$history" >"$cfg"
	local cfg_size
	cfg_size=$(size_of "$cfg")
	cfg_d=$(add_blob "$oci" "$cfg")

	man="$work/manifest.json"
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
		"$cfg_d" "$cfg_size" "$diff" "$layer_size" >"$man"
	local man_size
	man_size=$(size_of "$man")
	man_d=$(add_blob "$oci" "$man")

	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"},"platform":{"architecture":"%s","os":"linux"}}]}' \
		"$man_d" "$man_size" "$name" "${name##*:}" "$arch" >"$oci/index.json"
	printf '{"imageLayoutVersion":"1.0.0"}' >"$oci/oci-layout"
	chmod -R u=rwX,go=rX "$oci"

	reproducible_tar "$work/archive.tar" "$oci" oci-layout index.json blobs
	mv "$work/archive.tar" "$out"
	rm -rf "$work"
	log "built $name ($out, manifest sha256:$man_d)"
}

# up_to_date ARCHIVE KEY reports whether ARCHIVE exists and was built from KEY.
up_to_date() {
	[ -s "$1" ] && [ -f "$1.key" ] && [ "$(cat "$1.key")" = "$2" ]
}

build_pause() {
	local key rootfs
	key=$(cat "$here/build-images.sh" "$here/images/pause.c" | sha256sum | cut -d' ' -f1)
	up_to_date "$PAUSE_ARCHIVE" "$key" && return
	command -v gcc >/dev/null || die "gcc not found: run hack/install-deps.sh"
	rootfs=$(mktemp -d "$IMAGE_DIR/.pause.XXXXXX")
	gcc -static -O2 -s -Wall -Wextra -o "$rootfs/pause" "$here/images/pause.c" ||
		die "compiling images/pause.c failed (is libc6-dev installed?)"
	chmod 0755 "$rootfs" "$rootfs/pause"
	oci_archive "$PAUSE_ARCHIVE" "$PAUSE_IMAGE" "$rootfs" \
		'{"Env":["'"$path_env"'"],"Entrypoint":["/pause"],"WorkingDir":"/"}' \
		"gcc -static hack/images/pause.c"
	rm -rf "$rootfs"
	printf '%s\n' "$key" >"$PAUSE_ARCHIVE.key"
}

# busybox_rootfs DIR fills DIR with a merged-/usr tree: busybox and one symlink
# per applet in /bin, /sbin and /usr/{bin,sbin} pointing at /bin, a root and a
# nobody user, and the usual empty directories.
busybox_rootfs() {
	local r=$1 a
	mkdir -p "$r"/{bin,dev,etc,home,proc,root,run,sys,tmp,usr,var/tmp}
	install -m 0755 /bin/busybox "$r/bin/busybox"
	for a in $(/bin/busybox --list); do
		[ "$a" = busybox ] || ln -s busybox "$r/bin/$a"
	done
	for a in "${required_applets[@]}"; do
		[ -L "$r/bin/$a" ] || die "/bin/busybox has no applet $a"
	done
	ln -s bin "$r/sbin"
	ln -s ../bin "$r/usr/bin"
	ln -s ../bin "$r/usr/sbin"
	printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' \
		'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' >"$r/etc/passwd"
	printf '%s\n' 'root:x:0:' 'nobody:x:65534:' >"$r/etc/group"
	chmod 0755 "$r" "$r"/{bin,dev,etc,home,proc,run,sys,usr,var}
	chmod 0644 "$r/etc/passwd" "$r/etc/group"
	chmod 0700 "$r/root"
	chmod 1777 "$r/tmp" "$r/var/tmp"
}

build_busybox() {
	local key rootfs version
	[ -x /bin/busybox ] || die "/bin/busybox not found: run hack/install-deps.sh (busybox-static)"
	local applets
	applets=$(/bin/busybox --list) || die "/bin/busybox --list failed"
	grep -qx sh <<<"$applets" || die "/bin/busybox has no shell: is it busybox-static?"
	key=$( (cat "$here/build-images.sh" && sha256sum /bin/busybox) | sha256sum | cut -d' ' -f1)
	up_to_date "$BUSYBOX_ARCHIVE" "$key" && return
	version=$(dpkg-query -W -f='${Version}' busybox-static 2>/dev/null || echo unknown)
	rootfs=$(mktemp -d "$IMAGE_DIR/.busybox.XXXXXX")
	busybox_rootfs "$rootfs"
	oci_archive "$BUSYBOX_ARCHIVE" "$BUSYBOX_IMAGE" "$rootfs" \
		'{"Env":["'"$path_env"'"],"Cmd":["sh"],"WorkingDir":"/"}' \
		"Debian busybox-static $version with applet symlinks"
	rm -rf "$rootfs"
	printf '%s\n' "$key" >"$BUSYBOX_ARCHIVE.key"
}

mkdir -p "$IMAGE_DIR"
# Leftovers of an interrupted build.
rm -rf "$IMAGE_DIR"/.build.* "$IMAGE_DIR"/.pause.* "$IMAGE_DIR"/.busybox.*
build_pause
build_busybox
log "images ready in $IMAGE_DIR"
