# shellcheck shell=bash
# OCI image helpers shared by hack/build-images.sh (the e2e images) and
# hack/conformance/images.sh (the conformance images). Both build images by
# hand, without a registry, as one-layer OCI archives: oci-layout, index.json
# and blobs/sha256/{layer tar, config JSON, manifest JSON}. The index carries
# io.containerd.image.name (the full name, which `ctr images import` uses as
# the image name) and org.opencontainers.image.ref.name (the tag, as the OCI
# layout spec says). Layers are uncompressed tars with fixed owners, order and
# mtimes, so the same inputs give the same digests. Source it after lib.sh.

case "$(uname -m)" in
x86_64) arch=amd64 ;;
aarch64) arch=arm64 ;;
*) die "unsupported machine $(uname -m): only amd64 and arm64 images are built" ;;
esac
epoch=1970-01-01T00:00:00Z
path_env=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# OCI_LIB is this file: a build key that covers the image layout includes it.
OCI_LIB=${BASH_SOURCE[0]}

digest_of() { sha256sum "$1" | cut -d' ' -f1; }
size_of() { stat -c %s "$1"; }

# up_to_date ARCHIVE KEY reports whether ARCHIVE exists and was built from KEY.
up_to_date() { [ -s "$1" ] && [ -f "$1.key" ] && [ "$(cat "$1.key")" = "$2" ]; }

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

# oci_archive OUT ROOTFS CONFIG_BODY HISTORY NAME... writes the OCI archive
# OUT of the single-layer image whose root file system is ROOTFS, named once
# per NAME in its index (so one import creates every name). CONFIG_BODY is
# the JSON object of the image config's "config" field. Its work directory
# is a .build.* beside OUT (callers remove leftovers of interrupted builds).
oci_archive() {
	local out=$1 rootfs=$2 body=$3 history=$4
	shift 4
	local work oci layer diff cfg cfg_d man man_d layer_size cfg_size man_size entries=() n
	work=$(mktemp -d "$(dirname "$out")/.build.XXXXXX")
	oci="$work/oci"
	mkdir -p "$oci/blobs/sha256"
	layer="$work/layer.tar"
	# shellcheck disable=SC2046 # entry names have no spaces
	reproducible_tar "$layer" "$rootfs" $(cd "$rootfs" && ls -A)
	diff=$(digest_of "$layer")
	layer_size=$(size_of "$layer")
	add_blob "$oci" "$layer" >/dev/null
	cfg="$work/config.json"
	printf '{"created":"%s","architecture":"%s","os":"linux","config":%s,"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created":"%s","created_by":"%s"}]}' \
		"$epoch" "$arch" "$body" "$diff" "$epoch" "$history" >"$cfg"
	cfg_size=$(size_of "$cfg")
	cfg_d=$(add_blob "$oci" "$cfg")
	man="$work/manifest.json"
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
		"$cfg_d" "$cfg_size" "$diff" "$layer_size" >"$man"
	man_size=$(size_of "$man")
	man_d=$(add_blob "$oci" "$man")
	for n in "$@"; do
		entries+=("$(printf '{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"},"platform":{"architecture":"%s","os":"linux"}}' \
			"$man_d" "$man_size" "$n" "${n##*:}" "$arch")")
	done
	local IFS=,
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[%s]}' "${entries[*]}" >"$oci/index.json"
	unset IFS
	printf '{"imageLayoutVersion":"1.0.0"}' >"$oci/oci-layout"
	chmod -R u=rwX,go=rX "$oci"
	reproducible_tar "$work/archive.tar" "$oci" oci-layout index.json blobs
	mv "$work/archive.tar" "$out"
	rm -rf "$work"
}

# busybox_rootfs DIR fills DIR with a merged-/usr tree: Debian's
# busybox-static and one symlink per applet in /bin (/sbin and /usr/{bin,sbin}
# point at it), a root and a nobody user, and the usual empty directories.
busybox_rootfs() {
	local r=$1 a
	mkdir -p "$r"/{bin,dev,etc,home,proc,root,run,sys,tmp,usr,var/tmp}
	install -m 0755 /bin/busybox "$r/bin/busybox"
	for a in $(/bin/busybox --list); do
		[ "$a" = busybox ] || ln -s busybox "$r/bin/$a"
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
