#!/usr/bin/env bash
# Stops the private containerd started by containerd-up.sh and removes every
# trace of it, including what a killed (kill -9) containerd left behind:
#
#   1. the containerd daemon started with $CD_CONFIG (TERM, then KILL);
#   2. its shims, found by their "-address $CD_SOCK" argument, and every
#      process below them (the containers), noting those processes' cgroups;
#   3. any process still in a cgroup under $CGROUP_PARENT, in every hierarchy;
#   4. every mount under $NODEKIT_TEST_DIR (overlay rootfs, sandbox shm, netns
#      bind mounts), deepest first, lazily as a last resort;
#   5. the cgroups: $CGROUP_PARENT in every hierarchy (v1 controllers, the
#      named systemd hierarchy, v2 unified), deepest first, plus the leaf
#      cgroups of killed containers that ran outside it;
#   6. the bridge $CNI_BRIDGE, libcni's cache entries for $CNI_NETWORK, and the
#      root, state, runc, socket, CNI data and env files.
#
# Network namespaces: containerd-up.sh sets netns_mounts_under_state_dir, so
# containerd pins pod network namespaces under $CD_STATE, not under
# /var/run/netns where other runtimes (and `ip netns`) keep theirs; unmounting
# $NODEKIT_TEST_DIR releases them and /var/run/netns is never scanned blindly.
# Should a namespace of ours still be in /var/run/netns (a config without that
# setting), libcni's cache entry for our network names it, and only such a
# named path is removed.
#
# Nothing else is touched: other containerds, their shims and their netns do
# not match any of these criteria. Exits 0 when nothing was running, and
# non-zero, naming the leftovers, when something could not be removed.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

need_root
take_lock

# ---- processes ----

# wait_gone TIMEOUT_SECONDS PID... waits until none of the PIDs exists.
wait_gone() {
	local deadline=$((SECONDS + $1)) p alive
	shift
	while :; do
		alive=
		for p in "$@"; do [ -d "/proc/$p" ] && ! is_zombie "$p" && alive=1; done
		[ -z "$alive" ] && return 0
		[ "$SECONDS" -ge "$deadline" ] && return 1
		sleep 0.1
	done
}

is_zombie() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	[ "${stat%% *}" = Z ]
}

stop_containerd() {
	# Found by their "--config $CD_CONFIG" argument rather than by $CD_PID
	# alone: the pid file may be stale (its pid reused) or gone.
	local pids=()
	mapfile -t pids < <(private_containerd_pids)
	[ "${#pids[@]}" -gt 0 ] || return 0
	log "stopping containerd (pid ${pids[*]})"
	kill -TERM "${pids[@]}" 2>/dev/null || true
	if ! wait_gone 10 "${pids[@]}"; then
		log "containerd ignored TERM for 10s; killing it"
		kill -KILL "${pids[@]}" 2>/dev/null || true
		wait_gone 5 "${pids[@]}" || die "containerd (pid ${pids[*]}) survives SIGKILL"
	fi
}

# private_shim_pids prints the pids of shims serving this containerd: their
# argv has "-address $CD_SOCK" (the socket path is private to this project).
private_shim_pids() {
	local p
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		cmdline_args "$p"
		if [ "${#ARGS[@]}" -gt 0 ] && [[ "${ARGS[0]##*/}" == containerd-shim* ]] &&
			has_flag address "$CD_SOCK"; then
			echo "$p"
		fi
	done
	return 0
}

# descendants PID... prints every process below the given ones.
descendants() {
	local p stat ppid
	declare -A kids=()
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		stat=$(cat "/proc/$p/stat" 2>/dev/null) || continue
		stat=${stat##*) }
		ppid=${stat#* }
		ppid=${ppid%% *}
		kids[$ppid]+=" $p"
	done
	local queue=("$@") next
	while [ "${#queue[@]}" -gt 0 ]; do
		next=()
		for p in "${queue[@]}"; do
			for ppid in ${kids[$p]:-}; do
				echo "$ppid"
				next+=("$ppid")
			done
		done
		queue=("${next[@]}")
	done
}

# Cgroups (relative to their hierarchy's root) that held killed container
# processes; removed after the processes are gone, if empty.
container_cgroups=()

kill_shims() {
	local shims=() procs=() p line
	mapfile -t shims < <(private_shim_pids)
	[ "${#shims[@]}" -gt 0 ] || return 0
	mapfile -t procs < <(descendants "${shims[@]}")
	log "killing ${#shims[@]} shim(s) and ${#procs[@]} container process(es)"
	for p in "${procs[@]}"; do
		while IFS= read -r line; do
			line=${line#*:*:}
			# Only a container's own leaf (named by its 64-hex-digit id).
			[[ "${line##*/}" =~ ^[0-9a-f]{64}$ ]] && container_cgroups+=("$line")
		done 2>/dev/null <"/proc/$p/cgroup" || true
	done
	kill -KILL "${shims[@]}" "${procs[@]}" 2>/dev/null || true
	wait_gone 10 "${shims[@]}" "${procs[@]}" || log "warning: some shim or container processes survive SIGKILL"
}

# cgroup_mounts prints the mount point of every cgroup hierarchy (v1 and v2).
cgroup_mounts() {
	awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i+1) == "cgroup" || $(i+1) == "cgroup2") print $5; break } }' /proc/self/mountinfo
}

# kill_cgroup_procs kills every process in a cgroup under $CGROUP_PARENT until
# none is left (or 10 s pass).
kill_cgroup_procs() {
	local deadline=$((SECONDS + 10)) mp pids logged=
	while :; do
		pids=()
		for mp in $(cgroup_mounts); do
			[ -d "$mp/$CGROUP_PARENT" ] || continue
			[ -f "$mp/$CGROUP_PARENT/cgroup.kill" ] && echo 1 >"$mp/$CGROUP_PARENT/cgroup.kill" 2>/dev/null
			mapfile -t -O "${#pids[@]}" pids < <(find "$mp/$CGROUP_PARENT" -name cgroup.procs -exec cat {} + 2>/dev/null)
		done
		mapfile -t pids < <(for p in "${pids[@]}"; do is_zombie "$p" || echo "$p"; done | sort -u)
		[ "${#pids[@]}" -eq 0 ] && return 0
		[ -z "$logged" ] && log "killing ${#pids[@]} process(es) left in /$CGROUP_PARENT cgroups" && logged=1
		kill -KILL "${pids[@]}" 2>/dev/null || true
		[ "$SECONDS" -ge "$deadline" ] && { log "warning: processes ${pids[*]} survive in /$CGROUP_PARENT"; return 0; }
		sleep 0.1
	done
}

# ---- mounts ----

# private_mounts prints mount points at or under $NODEKIT_TEST_DIR, deepest
# first (mountinfo escapes spaces and the like as \NNN octal).
private_mounts() {
	local mp
	awk '{ print $5 }' /proc/self/mountinfo | while IFS= read -r mp; do
		mp=$(printf '%b' "${mp//\\/\\0}")
		case "$mp" in
		"$NODEKIT_TEST_DIR" | "$NODEKIT_TEST_DIR"/*) printf '%s\t%s\n' "$(tr -cd / <<<"$mp" | wc -c)" "$mp" ;;
		esac
	done | sort -t "$(printf '\t')" -k1,1nr -k2,2r | cut -f2-
}

unmount_all() {
	local pass mp mounts=() count=0
	for pass in 1 2 3 4 5; do
		mapfile -t mounts < <(private_mounts)
		[ "${#mounts[@]}" -eq 0 ] && break
		for mp in "${mounts[@]}"; do
			if umount "$mp" 2>/dev/null || { [ "$pass" -ge 3 ] && umount -l "$mp" 2>/dev/null; }; then
				count=$((count + 1))
			fi
		done
	done
	[ "$count" -gt 0 ] && log "unmounted $count mount(s) under $NODEKIT_TEST_DIR"
	return 0
}

# remove_legacy_netns removes network namespaces of our network that a
# containerd without netns_mounts_under_state_dir pinned in /var/run/netns;
# libcni's cache entry for our network records each one's path.
remove_legacy_netns() {
	local f ns
	for f in "$CNI_CACHE_DIR/results/$CNI_NETWORK"-*; do
		[ -f "$f" ] || continue
		ns=$(grep -o '"netns":"[^"]*"' "$f" | sed -n 1p | cut -d'"' -f4) || true
		case "$ns" in
		/var/run/netns/cni-* | /run/netns/cni-*)
			if [ -e "$ns" ]; then
				umount "$ns" 2>/dev/null || umount -l "$ns" 2>/dev/null || true
				rm -f "$ns" && log "removed network namespace $ns"
			fi
			;;
		esac
	done
	return 0
}

# ---- cgroups, network, files ----

remove_cgroups() {
	local mp cg
	mapfile -t container_cgroups < <(printf '%s\n' "${container_cgroups[@]}" | sort -u | grep .)
	for mp in $(cgroup_mounts); do
		[ -d "$mp/$CGROUP_PARENT" ] && find "$mp/$CGROUP_PARENT" -depth -type d -exec rmdir {} + 2>/dev/null
		for cg in "${container_cgroups[@]}"; do
			[ -d "$mp$cg" ] && rmdir "$mp$cg" 2>/dev/null
			# A pod without cgroup_parent gets /<namespace>/<id>; that
			# namespace cgroup goes too, but only when empty.
			[[ "$cg" =~ ^/[^/]+/[^/]+$ ]] && [ -d "$mp${cg%/*}" ] && rmdir "$mp${cg%/*}" 2>/dev/null
		done
	done
	return 0
}

remove_network() {
	if [ -e "/sys/class/net/$CNI_BRIDGE" ]; then
		ip link delete "$CNI_BRIDGE" || die "cannot delete bridge $CNI_BRIDGE"
		log "deleted bridge $CNI_BRIDGE"
	fi
	# containerd also runs libcni's loopback network ("cni-loopback", shared by
	# every containerd) per sandbox: remove only the entries of our sandboxes,
	# known from our state dir and our network's cache entries.
	local f id
	for f in "$CD_STATE/io.containerd.grpc.v1.cri/sandboxes"/* "$CNI_CACHE_DIR/results/$CNI_NETWORK"-*; do
		id=${f##*/}
		id=${id#"$CNI_NETWORK"-}
		id=${id%%-*}
		[[ "$id" =~ ^[0-9a-f]{64}$ ]] && rm -f "$CNI_CACHE_DIR/results/cni-loopback-$id-lo"
	done
	rm -f "$CNI_CACHE_DIR/results/$CNI_NETWORK"-*
}

remove_files() {
	rm -rf --one-file-system "$CD_ROOT" "$CD_STATE" "$CD_TMP" "$RUNC_ROOT" "$CD_SHIM_SOCK_DIR" \
		"$CNI_DATA_DIR" "$CD_SOCK" "$CD_TTRPC_SOCK" "$CD_PID" "$NODEKIT_ENV_FILE"
}

# check_clean fails, naming them, if leftovers remain.
check_clean() {
	local left=() mp
	[ -n "$(private_containerd_pids)" ] && left+=("containerd process")
	[ -n "$(private_shim_pids)" ] && left+=("shim process")
	mapfile -t -O "${#left[@]}" left < <(private_mounts | sed 's/^/mount /')
	for mp in $(cgroup_mounts); do
		[ -d "$mp/$CGROUP_PARENT" ] && left+=("cgroup $mp/$CGROUP_PARENT")
	done
	[ -e "/sys/class/net/$CNI_BRIDGE" ] && left+=("bridge $CNI_BRIDGE")
	[ -e "$CD_STATE" ] && left+=("directory $CD_STATE")
	[ "${#left[@]}" -eq 0 ] || die "could not clean up: ${left[*]}"
}

stop_containerd
kill_shims
kill_cgroup_procs
remove_legacy_netns
unmount_all
remove_cgroups
remove_network
remove_files
check_clean
log "private containerd stopped and cleaned ($NODEKIT_TEST_DIR)"
