#!/usr/bin/env bash
# Stops the loopback registries of registry-up.sh and removes their data,
# configs and env file ($REG_DIR). The pushed image's copy in the private
# containerd's push namespace goes with containerd-down.sh.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=registry-lib.sh
. "$here/registry-lib.sh"

need_root
take_lock

mapfile -t pids < <(registry_pids)
if [ "${#pids[@]}" -gt 0 ]; then
	kill -TERM "${pids[@]}" 2>/dev/null || true
	deadline=$((SECONDS + 10))
	while [ -n "$(registry_pids)" ] && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
	mapfile -t left < <(registry_pids)
	[ "${#left[@]}" -eq 0 ] || kill -KILL "${left[@]}" 2>/dev/null || true
fi
rm -rf "$REG_DIR"
log "loopback registries stopped and removed ($REG_DIR)"
