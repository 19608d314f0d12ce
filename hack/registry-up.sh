#!/usr/bin/env bash
# Starts two loopback image registries for the image-pull end-to-end tests
# (see registry-lib.sh): Debian's docker-registry 2.8.2, fetched with
# `apt-get download` and extracted into the cache (never installed), one open
# on $REG_ADDR and one behind htpasswd authentication on $REG_AUTH_ADDR. It
# pushes a variant of the busybox test image (its own image ID, user 65534)
# to both as $REG_IMAGE_PATH through the private
# containerd (start hack/containerd-up.sh first), and writes $REG_ENV_FILE for
# the tests. A registry already running with our config is kept. Stop them
# with registry-down.sh.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=registry-lib.sh
. "$here/registry-lib.sh"

need_root
take_lock

# install_registry extracts the registry binary into the cache once.
install_registry() {
	[ -x "$REGISTRY_BIN" ] && return 0
	log "fetching docker-registry $REGISTRY_VERSION (Debian package, extracted only)"
	local tmp
	tmp=$(mktemp -d)
	chmod 755 "$tmp" # apt's sandbox user downloads into it
	(cd "$tmp" && apt-get download -qq docker-registry) || {
		apt-get update -qq && (cd "$tmp" && apt-get download -qq docker-registry)
	} || die "apt-get download docker-registry failed"
	mkdir -p "$REGISTRY_ROOT"
	dpkg-deb -x "$tmp"/docker-registry_*.deb "$REGISTRY_ROOT" || die "dpkg-deb -x failed"
	rm -rf "$tmp"
	[ -x "$REGISTRY_BIN" ] || die "$REGISTRY_BIN missing after extraction"
}

# install_htpasswd installs apache2-utils for htpasswd (bcrypt) if missing.
install_htpasswd() {
	command -v htpasswd >/dev/null && return 0
	log "installing apache2-utils (htpasswd)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq --no-install-recommends apache2-utils >/dev/null ||
		{ apt-get update -qq && apt-get install -y -qq --no-install-recommends apache2-utils >/dev/null; } ||
		die "apt-get install apache2-utils failed"
}

# write_config NAME ADDR [auth] writes $REG_DIR/NAME/config.yml.
write_config() {
	local name=$1 addr=$2 auth=${3:-}
	mkdir -p "$REG_DIR/$name/data"
	{
		printf 'version: 0.1\nlog:\n  level: warn\n  accesslog:\n    disabled: true\n'
		printf 'storage:\n  filesystem:\n    rootdirectory: %s\n  delete:\n    enabled: true\n' "$REG_DIR/$name/data"
		printf 'http:\n  addr: %s\n' "$addr"
		if [ -n "$auth" ]; then
			printf 'auth:\n  htpasswd:\n    realm: nodekit-test\n    path: %s\n' "$REG_HTPASSWD"
		fi
	} >"$REG_DIR/$name/config.yml"
}

# start NAME ADDR starts the registry of $REG_DIR/NAME unless it runs.
start() {
	local name=$1 addr=$2 pidfile="$REG_DIR/$1/registry.pid" pid
	pid=$(cat "$pidfile" 2>/dev/null || true)
	local running
	running=$(registry_pids)
	if [ -n "$pid" ] && grep -qx "$pid" <<<"$running"; then
		return 0
	fi
	# fd 9 is the hack lock (take_lock): the registry must not keep it.
	setsid "$REGISTRY_BIN" serve "$REG_DIR/$name/config.yml" >"$REG_DIR/$name/registry.log" 2>&1 </dev/null 9>&- &
	echo $! >"$pidfile"
	local deadline=$((SECONDS + 20))
	until curl -s -o /dev/null "http://$addr/v2/"; do
		[ "$SECONDS" -lt "$deadline" ] || die "registry $name did not answer on $addr; log: $(tail -5 "$REG_DIR/$name/registry.log")"
		sleep 0.1
	done
}

# build_variant writes $REG_DIR/variant.oci.tar: the busybox test image with
# its own config (user 65534, a label), hence its own image ID. Pulling it
# makes a separate image in the runtime, so that tests may remove what they
# pulled without touching $BUSYBOX_IMAGE (CRI RemoveImage drops every name
# of an image).
build_variant() {
	local work oci index man_d man cfg_d cfg new_cfg new_cfg_d new_man new_man_d
	work=$(mktemp -d "$REG_DIR/.variant.XXXXXX")
	oci="$work/oci"
	mkdir -p "$oci"
	tar -xf "$BUSYBOX_ARCHIVE" -C "$oci" || die "cannot read $BUSYBOX_ARCHIVE"
	index=$(cat "$oci/index.json")
	man_d=$(grep -o '"digest":"sha256:[0-9a-f]*"' <<<"$index" | sed -n 1p | cut -d: -f3 | tr -d '"')
	man="$oci/blobs/sha256/$man_d"
	cfg_d=$(grep -o '"config":{[^}]*}' "$man" | grep -o 'sha256:[0-9a-f]*' | cut -d: -f2)
	cfg="$oci/blobs/sha256/$cfg_d"
	new_cfg="$work/config.json"
	sed 's/"config":{/"config":{"User":"65534","Labels":{"io.nodekit.test":"registry"},/' "$cfg" >"$new_cfg"
	new_cfg_d=$(sha256sum "$new_cfg" | cut -d' ' -f1)
	mv "$new_cfg" "$oci/blobs/sha256/$new_cfg_d"
	new_man="$work/manifest.json"
	sed "s/\"digest\":\"sha256:$cfg_d\",\"size\":[0-9]*/\"digest\":\"sha256:$new_cfg_d\",\"size\":$(stat -c %s "$oci/blobs/sha256/$new_cfg_d")/" \
		"$man" >"$new_man"
	grep -q "$new_cfg_d" "$new_man" || die "cannot rewrite the variant's manifest"
	new_man_d=$(sha256sum "$new_man" | cut -d' ' -f1)
	mv "$new_man" "$oci/blobs/sha256/$new_man_d"
	rm -f "$man" "$cfg"
	sed -e "s/$man_d/$new_man_d/" -e "s/\"size\":[0-9]*/\"size\":$(stat -c %s "$oci/blobs/sha256/$new_man_d")/" \
		-e "s#$BUSYBOX_IMAGE#$REG_VARIANT_NAME#" <<<"$index" >"$oci/index.json"
	tar -cf "$REG_DIR/variant.oci.tar" -C "$oci" . || die "cannot write the variant image"
	rm -rf "$work"
}

# push_image pushes the variant test image to ADDR [USER:PASSWORD].
push_image() {
	local addr=$1 creds=${2:-} ref="$1/$REG_IMAGE_PATH"
	local ctr=("$CTR_BIN" -a "$CD_SOCK" -n "$REG_PUSH_NAMESPACE") log="$REG_DIR/push.log"
	"${ctr[@]}" images tag --force "$REG_VARIANT_NAME" "$ref" >>"$log" 2>&1 || die "tag $ref failed; see $log"
	local args=(--plain-http)
	[ -n "$creds" ] && args+=(-u "$creds")
	"${ctr[@]}" images push "${args[@]}" "$ref" >>"$log" 2>&1 || die "push of $ref failed; see $log"
	"${ctr[@]}" images rm "$ref" >>"$log" 2>&1 || true
}

install_registry
install_htpasswd
[ -S "$CD_SOCK" ] || die "the private containerd is not running: run hack/containerd-up.sh first"

mkdir -p "$REG_DIR"
if [ ! -s "$REG_PASSWORD_FILE" ]; then
	(umask 077 && head -c 18 /dev/urandom | base64 | tr -d '/+=' >"$REG_PASSWORD_FILE")
fi
password=$(cat "$REG_PASSWORD_FILE")
htpasswd -Bbc "$REG_HTPASSWD" "$REG_USER" "$password" >/dev/null 2>&1 || die "htpasswd failed"
write_config open "$REG_ADDR"
write_config auth "$REG_AUTH_ADDR" auth
start open "$REG_ADDR"
start auth "$REG_AUTH_ADDR"

build_variant
"$CTR_BIN" -a "$CD_SOCK" -n "$REG_PUSH_NAMESPACE" images rm "$REG_VARIANT_NAME" >>"$REG_DIR/push.log" 2>&1 || true
"$CTR_BIN" -a "$CD_SOCK" -n "$REG_PUSH_NAMESPACE" images import --no-unpack "$REG_DIR/variant.oci.tar" >>"$REG_DIR/push.log" 2>&1 ||
	die "import of the variant image failed; see $REG_DIR/push.log"
push_image "$REG_ADDR"
push_image "$REG_AUTH_ADDR" "$REG_USER:$password"

cat >"$REG_ENV_FILE" <<ENV
# Written by hack/registry-up.sh; source it: . $REG_ENV_FILE
export NODEKIT_REGISTRY=$REG_ADDR
export NODEKIT_AUTH_REGISTRY=$REG_AUTH_ADDR
export NODEKIT_REGISTRY_USER=$REG_USER
export NODEKIT_REGISTRY_PASSWORD=$password
export NODEKIT_REGISTRY_IMAGE=$REG_IMAGE_PATH
ENV
log "registries on $REG_ADDR (open) and $REG_AUTH_ADDR (user $REG_USER) serve $REG_IMAGE_PATH; env: $REG_ENV_FILE"
