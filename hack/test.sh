#!/usr/bin/env bash
# Runs every check and test nodekit has: gofmt, go vet, the unit tests (race
# detector on), every fuzz target for a few seconds (hack/fuzz.sh), then
# brings up the private containerd (hack/containerd-up.sh) and a private
# kube-apiserver + etcd (hack/control-plane-up.sh), and runs the end-to-end
# tests against them. Run as root.
#
# With CI=true an end-to-end test whose runtime could not be started fails
# instead of skipping.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
cd "$here/.."

phase "shell script checks (hack/check-scripts.sh)" bash "$here/check-scripts.sh"

log "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
[ -z "$unformatted" ] || die "gofmt would change: $unformatted"

phase "go vet" go vet ./...
phase "go vet (e2e tag)" go vet -tags e2e ./...
phase "binary check (hack/check-binary.sh: no reflective method call linked)" bash "$here/check-binary.sh"

phase "unit tests (go test -race ./...)" go test -race -count=1 ./...
phase "fuzz targets, 3 s each (hack/fuzz.sh; docs/fuzzing.md runs them longer)" bash "$here/fuzz.sh" 3s

need_root
log "private containerd and control plane (kube-apiserver + etcd)"
# A second containerd, only for the fault tests: they SIGKILL and SIGSTOP it
# (test/e2e/faultlab_test.go), never the one every other test shares.
# A second lab beside the default one (another NODEKIT_TEST_DIR, see lib.sh)
# names its own fault lab through the NODEKIT_FAULT_* variables.
fault_dir=${NODEKIT_FAULT_TEST_DIR:-/var/lib/nodekit-lab-fault}
fault_lab=(env NODEKIT_TEST_DIR="$fault_dir" CNI_NETWORK="${NODEKIT_FAULT_NETWORK:-nodekit-fault}"
	CNI_BRIDGE="${NODEKIT_FAULT_BRIDGE:-nkfault0}" CNI_SUBNET="${NODEKIT_FAULT_SUBNET:-10.247.0.0/24}"
	CGROUP_PARENT="${NODEKIT_FAULT_CGROUP:-nodekit-fault}")
# CI leaves a clean machine; a developer keeps them warm for the next run.
if [ "${CI:-}" = true ]; then
	trap 'bash "$here/metrics-server-down.sh" >/dev/null 2>&1 || true; bash "$here/registry-down.sh" >/dev/null 2>&1 || true; bash "$here/control-plane-down.sh" >/dev/null 2>&1 || true; bash "$here/containerd-down.sh" >/dev/null 2>&1 || true; "${fault_lab[@]}" bash "$here/containerd-down.sh" >/dev/null 2>&1 || true' EXIT
fi
phase "containerd (hack/containerd-up.sh; a cold build takes minutes)" bash "$here/containerd-up.sh"
phase "control plane (hack/control-plane-up.sh; a cold build takes minutes)" bash "$here/control-plane-up.sh"
phase "loopback registries (hack/registry-up.sh)" bash "$here/registry-up.sh"
phase "metrics-server (hack/metrics-server-up.sh; a cold build takes minutes)" bash "$here/metrics-server-up.sh"
phase "disruptable containerd for the fault tests ($fault_dir)" "${fault_lab[@]}" bash "$here/containerd-up.sh"
export NODEKIT_FAULT_CONTAINERD_DIR="$fault_dir"

# shellcheck disable=SC1091
. "$NODEKIT_TEST_DIR/env"
# test/e2e runs alone: it takes the shared API server down for a minute
# (TestAPIServerOutageRestartsNothing), which fails any other package using
# it meanwhile (test/clusterbench did, once, in a repeated run). The other
# real-component packages come after it, in parallel with each other.
phase "end-to-end tests (test/e2e)" go test -race -count=1 -tags e2e -timeout 70m ./test/e2e/...
phase "end-to-end tests (examples, runtime suite, cluster benchmark)" go test -race -count=1 -tags e2e -timeout 30m ./examples/... ./runtime/runtimetest/ ./test/clusterbench/
log "all tests passed"
