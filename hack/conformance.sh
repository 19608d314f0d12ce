#!/usr/bin/env bash
# Runs the upstream node conformance suite (k8s.io/kubernetes/test/e2e at
# v1.37.2, focus [NodeConformance]) against one node agent in a private lab of
# its own, and writes a junit file, a JSON report and a summary.
#
# Usage:
#   hack/conformance.sh [options] [AGENT_BINARY]   a nodekit binary (default:
#                                                  built from this checkout)
#   hack/conformance.sh [options] --reference      the upstream kubelet v1.37.2
# Options:
#   --results DIR   where to write the results (default:
#                   $NODEKIT_TEST_DIR/results/AGENT-DATE)
#   --procs N       parallel ginkgo processes (default 8)
#   --timeout D     suite timeout (default 90m)
#   --focus RE      ginkgo focus (default '\[NodeConformance\]')
#   --skip RE       ginkgo skip (default: see CONF_SKIP below)
#   --keep          leave the lab up afterwards (hack/conformance/lab-down.sh
#                   stops it)
#
# Steps (each timed): build what is missing (hack/conformance/build.sh, cached
# under $NODEKIT_CACHE by Kubernetes version), build the test images
# (hack/conformance/images.sh), bring up the lab (hack/conformance/lab-up.sh),
# run ginkgo, summarise (hack/conformance/summarize), bring the lab down.
# docs/conformance.md explains the lab's limits and holds the latest results.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/conformance/lib.sh"

CONF_FOCUS='\[NodeConformance\]'
# Serial/Disruptive specs would disturb the other specs of a parallel run;
# Slow and Flaky are left out as upstream's node conformance job does;
# Feature: specs need features the lab lacks; sig-network specs need
# kube-proxy, cluster DNS and routes this loopback lab has not.
CONF_SKIP='\[Serial\]|\[Slow\]|\[Disruptive\]|\[Flaky\]|\[Feature:|sig-network'

main() {
	local agent= label results= procs=8 timeout=90m focus=$CONF_FOCUS skip=$CONF_SKIP keep= t0=$SECONDS
	while [ "$#" -gt 0 ]; do
		case "$1" in
		--reference) agent=kubelet ;;
		--results) results=$2; shift ;;
		--procs) procs=$2; shift ;;
		--timeout) timeout=$2; shift ;;
		--focus) focus=$2; shift ;;
		--skip) skip=$2; shift ;;
		--keep) keep=1 ;;
		-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; return 0 ;;
		-*) die "unknown option $1 (see --help)" ;;
		*) [ -z "$agent" ] || die "one agent only"; agent=$1 ;;
		esac
		shift
	done
	need_root
	phase "build" "$conf_here/build.sh" all
	if [ -z "$agent" ]; then
		agent="$NODEKIT_TEST_DIR/bin/nodekit"
		mkdir -p "${agent%/*}"
		phase "build nodekit" bash -c 'cd "$1" && CGO_ENABLED=0 nice -n 19 go build -tags "$3" -o "$2" ./cmd/nodekit' _ "$repo_root" "$agent" "$NODEKIT_BUILD_TAGS"
	elif [ "$agent" != kubelet ]; then
		[ -x "$agent" ] || die "$agent is not an executable"
		agent=$(cd "$(dirname "$agent")" && pwd)/$(basename "$agent")
	fi
	if [ "$agent" = kubelet ]; then label=kubelet; else label=nodekit; fi
	[ -n "$results" ] || results="$NODEKIT_TEST_DIR/results/$label-$(date -u +%Y%m%dT%H%M%SZ)"
	mkdir -p "$results"
	results=$(cd "$results" && pwd)
	phase "images" "$conf_here/images.sh" build
	phase "lab up" "$conf_here/lab-up.sh" "$agent"
	local rc=0 t_run=$SECONDS
	# --e2e-output-dir and the reports go to $results. Each spec that waits
	# for a pod that never starts waits out the framework's fixed 5 min
	# PodStart timeout (no flag sets it), so a broken agent makes the run
	# long: the suite timeout bounds it.
	(cd "$results" && "$CONF_GINKGO_BIN" --procs="$procs" --timeout="$timeout" --no-color \
		--junit-report=junit.xml --json-report=report.json --output-dir="$results" \
		--silence-skips "$CONF_E2E_BIN" -- \
		--kubeconfig="$CONF_DIR/admin.kubeconfig" --provider=local --node-os-distro=debian \
		--allowed-not-ready-nodes=0 --minStartupPods=0 --disable-log-dump \
		--e2e-output-dir="$results" \
		--ginkgo.focus="$focus" --ginkgo.skip="$skip") >"$results/ginkgo.log" 2>&1 || rc=$?
	local run_s=$((SECONDS - t_run))
	clog "ginkgo exited $rc after $run_s s (log $results/ginkgo.log)"
	cp "$CONF_DIR/agent.log" "$CONF_DIR/agent.cmdline" "$results/" 2>/dev/null || true
	if [ -z "$keep" ]; then phase "lab down" "$conf_here/lab-down.sh" || true; fi
	printf 'agent: %s\nrun_seconds: %s\ntotal_seconds: %s\n' "$agent" "$run_s" "$((SECONDS - t0))" >"$results/times.txt"
	[ -s "$results/report.json" ] || die "no report.json: see $results/ginkgo.log"
	(cd "$CONF_TOOLS_DIR" && GOFLAGS=-mod=readonly go run ./summarize \
		-report "$results/report.json" -causes "$conf_here/causes.txt" -out "$results") ||
		die "summarising $results/report.json failed"
	cat "$results/summary.txt"
	clog "results in $results ($((SECONDS - t0)) s in all)"
}
main "$@"; exit
