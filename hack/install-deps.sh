#!/usr/bin/env bash
# Installs the Debian packages the private containerd and the hand-built
# images need: runc (the OCI runtime), the CNI plugins (bridge, host-local,
# loopback in /usr/lib/cni), busybox-static (the test image's userland), gcc
# and libc6-dev (the static pause binary), iptables, iproute2 (bridge removal)
# and mount (umount). Only missing packages are installed, and `apt-get update`
# runs only when something is missing, so a second call returns at once.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

need_root

packages=(runc containernetworking-plugins busybox-static iptables gcc libc6-dev iproute2 mount tar)

installed() {
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

command -v dpkg-query >/dev/null || die "dpkg-query not found: install-deps.sh supports Debian-like systems only"

missing=()
for p in "${packages[@]}"; do
	installed "$p" || missing+=("$p")
done

if [ "${#missing[@]}" -gt 0 ]; then
	log "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq || die "apt-get update failed"
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
		die "apt-get install ${missing[*]} failed"
fi

# The packages being installed is not enough if a file went missing; check the
# exact files the other scripts use.
for f in "$(command -v runc || echo runc)" "$CNI_BIN_DIR/bridge" "$CNI_BIN_DIR/host-local" \
	"$CNI_BIN_DIR/loopback" /bin/busybox "$(command -v gcc || echo gcc)" "$(command -v ip || echo ip)"; do
	[ -x "$f" ] || die "$f is missing after installing packages"
done
log "dependencies present"
