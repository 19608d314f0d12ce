# shellcheck shell=bash disable=SC2034 # settings for the scripts that source it
# Settings of the loopback image registries that registry-up.sh starts for the
# image-pull end-to-end tests: Debian's docker-registry, extracted (never
# installed: its package would start a registry on every interface) into the
# cache, serving 127.0.0.1 only:
#   - $REG_ADDR: an open registry;
#   - $REG_AUTH_ADDR: the same with htpasswd (basic) authentication, for pull
#     secrets, as user $REG_USER with a password made per run.
# Everything of a run lives under $REG_DIR, which registry-down.sh removes.
# Source after lib.sh.

REGISTRY_VERSION=2.8.2
REGISTRY_ROOT="$NODEKIT_CACHE/registry-$REGISTRY_VERSION"
REGISTRY_BIN="$REGISTRY_ROOT/usr/bin/docker-registry"

REG_DIR="$NODEKIT_TEST_DIR/registry"
REG_ADDR="127.0.0.1:${NODEKIT_REGISTRY_PORT:-5000}"
REG_AUTH_ADDR="127.0.0.1:${NODEKIT_AUTH_REGISTRY_PORT:-5001}"
REG_USER=nodekit
REG_HTPASSWD="$REG_DIR/htpasswd"
REG_PASSWORD_FILE="$REG_DIR/password"
# Tests source this file (NODEKIT_REGISTRY, NODEKIT_AUTH_REGISTRY, ...).
REG_ENV_FILE="$REG_DIR/env"
# The containerd namespace used to push the test image (not the CRI's k8s.io,
# so that CRI never sees the pushed names).
REG_PUSH_NAMESPACE=nodekit-registry-push
# The image pushed to both registries, under this repository and tag: the
# busybox test image with user 65534 and a label, so its image ID differs.
REG_IMAGE_PATH=nodekit/busybox:1
REG_VARIANT_NAME=localhost/nodekit/busybox-registry:1

# registry_pids prints the pids of registries started with a config under
# $REG_DIR; no other process on the machine matches.
registry_pids() {
	local p
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		cmdline_args "$p"
		if [ "${#ARGS[@]}" -ge 3 ] && [ "${ARGS[0]##*/}" = docker-registry ] && [[ "${ARGS[2]}" == "$REG_DIR"/* ]]; then
			echo "$p"
		fi
	done
	return 0
}
