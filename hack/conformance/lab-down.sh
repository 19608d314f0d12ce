#!/usr/bin/env bash
# Stops the conformance lab started by lab-up.sh and removes what it, or an
# earlier run killed half-way, left: the agent under test, the scheduler and
# controller manager (found by their arguments, which name $CONF_DIR), the
# iptables rule of the node-IP trick (found by its comment), the control plane
# and containerd (hack/control-plane-down.sh and hack/containerd-down.sh with
# this lab's overrides: its mounts, cgroups, bridge and CNI state). The shared
# e2e lab and other labs match none of these.
set -euo pipefail
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
need_root
main() {
	conf_stop_procs
	conf_iptables_clear
	"$hack_dir/control-plane-down.sh"
	"$hack_dir/containerd-down.sh"
	rm -rf --one-file-system "${CONF_DIR:?}/agent" "$CONF_DIR/node" "$CONF_DIR"/*.pid
	clog "lab down"
}
main "$@"; exit
