#!/usr/bin/env bash
# Starts a private containerd for nodekit's end-to-end tests and first runs:
# its own root, state, sockets, runc root, CNI network ($CNI_BRIDGE on
# $CNI_SUBNET) and cgroup parent (/$CGROUP_PARENT), so it never collides with
# another containerd on the machine. Steps:
#
#   1. install missing Debian packages, build containerd/crictl and the images
#      (each cached; a warm run skips them);
#   2. if our containerd already runs this very config and binary and answers,
#      keep it (and its pods); otherwise (or with --fresh) run
#      containerd-down.sh, which clears what an earlier or killed run left
#      behind, write config.toml, the CNI conflist and crictl.yaml, and start
#      containerd detached (log $CD_LOG, pid $CD_PID);
#   3. wait until CRI answers and reports RuntimeReady and NetworkReady;
#   4. import $PAUSE_IMAGE and $BUSYBOX_IMAGE into the k8s.io namespace
#      (those CRI does not list yet);
#   5. write $NODEKIT_ENV_FILE for tests and shells to source.
#
# Usage: containerd-up.sh [--fresh]   (or NODEKIT_FRESH=1)
# --fresh always restarts from a clean state, killing running pods. Stop it
# with containerd-down.sh.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

fresh=${NODEKIT_FRESH:-}
case "${1:-}" in
"") ;;
--fresh) fresh=1 ;;
*) die "usage: $0 [--fresh]" ;;
esac

need_root
take_lock
start=${EPOCHREALTIME/./}

"$here/install-deps.sh"
"$here/build-containerd.sh"
"$here/build-images.sh"

runc_bin=$(command -v runc) || die "runc not found in PATH"
[ "$((${#CD_SHIM_SOCK_DIR} + 65))" -le 107 ] ||
	die "NODEKIT_TEST_DIR is too long for shim socket paths ($CD_SHIM_SOCK_DIR/<64 hex>)"

crictl() { "$CRICTL_BIN" --config "$CRICTL_CONFIG" "$@"; }
ctr() { "$CTR_BIN" --address "$CD_SOCK" --namespace "$CD_NAMESPACE" "$@"; }

render_config() {
	# The version 3 layout; containerd 2.4 migrates it to version 4 on load
	# and logs a warning about that.
	cat <<EOF
# Written by hack/containerd-up.sh; rewritten on every start.
version = 3
root = "$CD_ROOT"
state = "$CD_STATE"
temp = "$CD_TMP"
# Never pick up the host's /etc/containerd/conf.d.
imports = []
oom_score = 0
# NRI would listen on /var/run/nri/nri.sock; the snapshotters other than
# overlayfs are unused; opt would create /opt/containerd.
disabled_plugins = [
  "io.containerd.nri.v1.nri",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.blockfile",
  "io.containerd.snapshotter.v1.erofs",
  "io.containerd.internal.v1.opt",
]

[grpc]
  address = "$CD_SOCK"
  # No TCP listener.
  tcp_address = ""

[ttrpc]
  address = "$CD_TTRPC_SOCK"

[debug]
  # No debug socket.
  address = ""
  level = "info"

[metrics]
  # No metrics listener.
  address = ""

[plugins."io.containerd.shim.v1.manager"]
  socket_dir = "$CD_SHIM_SOCK_DIR"

[plugins."io.containerd.image-verifier.v1.bindir"]
  bin_dir = "$NODEKIT_TEST_DIR/image-verifier"

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "$PAUSE_IMAGE"

[plugins."io.containerd.cri.v1.runtime"]
  # No CAP_SYS_RESOURCE here: without this a negative oom_score_adj makes
  # runc fail ("can't get final child's PID from pipe: EOF").
  restrict_oom_score_adj = true
  # Pin pod network namespaces under the private state dir instead of the
  # shared /var/run/netns, so cleaning up never touches another runtime's.
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = "$runc_bin"
        # runc's state, private instead of /run/containerd/runc.
        Root = "$RUNC_ROOT"
        # cgroupfs driver: there may be no systemd.
        SystemdCgroup = false
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["$CNI_BIN_DIR"]
    conf_dir = "$CNI_CONF_DIR"
    max_conf_num = 1

[plugins."io.containerd.grpc.v1.cri"]
  disable_tcp_service = true
  # The exec/attach/port-forward streaming server: loopback, random port.
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
EOF
}

cni_conflist="$CNI_CONF_DIR/10-$CNI_NETWORK.conflist"

render_cni() {
	cat <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$CNI_NETWORK",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$CNI_BRIDGE",
      "isGateway": false,
      "ipMasq": false,
      "ipam": {
        "type": "host-local",
        "ranges": [[{ "subnet": "$CNI_SUBNET" }]],
        "dataDir": "$CNI_DATA_DIR"
      }
    }
  ]
}
EOF
}

render_crictl_config() {
	cat <<EOF
runtime-endpoint: unix://$CD_SOCK
image-endpoint: unix://$CD_SOCK
timeout: 10
EOF
}

fail_with_log() {
	log "last lines of $CD_LOG:"
	tail -n 30 "$CD_LOG" >&2 || true
	die "$1"
}

start_containerd() {
	[ -f "$CD_LOG" ] && mv -f "$CD_LOG" "$CD_LOG.prev"
	# setsid: its own session, so it outlives this script and its terminal.
	# 9>&-: it must not hold take_lock's lock file open.
	PATH="$BIN_DIR:$PATH" setsid "$BIN_DIR/containerd" --config "$CD_CONFIG" \
		</dev/null >>"$CD_LOG" 2>&1 9>&- &
	local pid
	for _ in $(seq 50); do
		pid=$(private_containerd_pids | sed -n 1p)
		[ -n "$pid" ] && break
		sleep 0.1
	done
	[ -n "$pid" ] || fail_with_log "containerd exited at once"
	echo "$pid" >"$CD_PID"
	log "containerd started (pid $pid, log $CD_LOG)"
}

# wait_ready waits up to 30 s for CRI to answer and report the runtime and the
# network ready.
wait_ready() {
	local deadline=$((SECONDS + 30)) pid conds=
	pid=$(cat "$CD_PID")
	until crictl --runtime-endpoint "unix://$CD_SOCK" --timeout 2s version >/dev/null 2>&1; do
		[ -d "/proc/$pid" ] || fail_with_log "containerd (pid $pid) exited"
		[ "$SECONDS" -lt "$deadline" ] || fail_with_log "containerd does not answer on $CD_SOCK after 30s"
		sleep 0.1
	done
	while :; do
		conds=$(crictl info -o go-template \
			--template '{{range .status.conditions}}{{.type}}={{.status}} {{end}}' 2>/dev/null) || true
		[[ "$conds" == *RuntimeReady=true* && "$conds" == *NetworkReady=true* ]] && return 0
		[ "$SECONDS" -lt "$deadline" ] || fail_with_log "containerd is not ready after 30s: $conds"
		sleep 0.1
	done
}

import_images() {
	local archive name out imported=()
	for archive in "$PAUSE_ARCHIVE:$PAUSE_IMAGE" "$BUSYBOX_ARCHIVE:$BUSYBOX_IMAGE"; do
		name=${archive#*.oci.tar:}
		archive=${archive%%:*}
		crictl inspecti "$name" >/dev/null 2>&1 && continue
		imported+=("$name")
		# ctr repeats containerd's cgroup v1 deprecation warning on stderr;
		# show its output only when the import fails.
		out=$(ctr images import "$archive" 2>&1) || {
			printf '%s\n' "$out" >&2
			fail_with_log "ctr images import $archive failed"
		}
	done
	# CRI learns about imported images asynchronously; wait until it lists them
	# under their full names.
	local deadline=$((SECONDS + 10))
	for name in "$PAUSE_IMAGE" "$BUSYBOX_IMAGE"; do
		until crictl inspecti "$name" >/dev/null 2>&1; do
			[ "$SECONDS" -lt "$deadline" ] || die "CRI does not list image $name after import"
			sleep 0.1
		done
	done
	[ "${#imported[@]}" -eq 0 ] || log "imported ${imported[*]}"
}

write_env() {
	local tmp="$NODEKIT_ENV_FILE.tmp"
	{
		echo "# Written by hack/containerd-up.sh; source it: . $NODEKIT_ENV_FILE"
		printf 'export %s=%q\n' \
			NODEKIT_CRI_ENDPOINT "unix://$CD_SOCK" \
			NODEKIT_TEST_IMAGE "$BUSYBOX_IMAGE" \
			NODEKIT_PAUSE_IMAGE "$PAUSE_IMAGE" \
			NODEKIT_CRICTL "$CRICTL_BIN" \
			NODEKIT_CTR "$CTR_BIN" \
			NODEKIT_CGROUP_PARENT "/$CGROUP_PARENT" \
			NODEKIT_CONTAINERD_NAMESPACE "$CD_NAMESPACE" \
			NODEKIT_CNI_SUBNET "$CNI_SUBNET" \
			NODEKIT_TEST_DIR "$NODEKIT_TEST_DIR" \
			CRI_CONFIG_FILE "$CRICTL_CONFIG" \
			CONTAINERD_ADDRESS "$CD_SOCK" \
			CONTAINERD_NAMESPACE "$CD_NAMESPACE"
	} >"$tmp"
	mv -f "$tmp" "$NODEKIT_ENV_FILE"
}

# reusable reports whether our containerd runs the current binary with exactly
# the config and network this script would write, and answers CRI.
reusable() {
	local pids
	mapfile -t pids < <(private_containerd_pids)
	[ "${#pids[@]}" -eq 1 ] || return 1
	[ "$(readlink "/proc/${pids[0]}/exe")" = "$BIN_DIR/containerd" ] || return 1
	[ "$(render_config)" = "$(cat "$CD_CONFIG" 2>/dev/null)" ] || return 1
	[ "$(render_cni)" = "$(cat "$cni_conflist" 2>/dev/null)" ] || return 1
	crictl --timeout 2s version >/dev/null 2>&1 || return 1
	echo "${pids[0]}" >"$CD_PID"
}

render_crictl_config >"$CRICTL_CONFIG"
if [ -z "$fresh" ] && reusable; then
	log "containerd already runs this config (pid $(cat "$CD_PID")); keeping it and its pods (--fresh restarts it)"
else
	"$here/containerd-down.sh"
	mkdir -p "$NODEKIT_TEST_DIR" "$CD_ROOT" "$CD_STATE" "$CD_TMP" "$RUNC_ROOT" "$CD_SHIM_SOCK_DIR" \
		"$CNI_CONF_DIR" "$CNI_DATA_DIR"
	chmod 0711 "$NODEKIT_TEST_DIR"
	render_config >"$CD_CONFIG"
	rm -f "$CNI_CONF_DIR"/*
	render_cni >"$cni_conflist"
	start_containerd
fi
wait_ready
import_images
write_env
elapsed_ms=$(((${EPOCHREALTIME/./} - start) / 1000))
log "containerd ready in $((elapsed_ms / 1000)).$(printf '%03d' $((elapsed_ms % 1000)))s; use it with: . $NODEKIT_ENV_FILE"
