#!/usr/bin/env bash
# Runs every Go fuzz target of the module (every func FuzzXxx(f *testing.F)
# in a _test.go file) for FUZZTIME each, one after the other:
#
#   hack/fuzz.sh [FUZZTIME]     # FUZZTIME as go test -fuzztime takes it: 5s, 10m, 100000x
#
# FUZZTIME defaults to 5s. A failure stops the run; go test writes the input
# that failed to the package's testdata/fuzz/FuzzXxx/, where it becomes a
# regression seed once committed. Set FUZZ_PARALLEL to limit the workers per
# target (go test's -parallel; defaults to GOMAXPROCS). See docs/fuzzing.md.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
cd "$here/.."

fuzztime=${1:-5s}
parallel=()
[ -z "${FUZZ_PARALLEL:-}" ] || parallel=(-parallel "$FUZZ_PARALLEL")

# One "package-dir target" line per fuzz target, sorted.
files=$(git ls-files '*_test.go' 2>/dev/null || find . -name '*_test.go' -not -path './hack/tools/*')
files=$(sed -E 's#^(\./)?#./#' <<<"$files")
# shellcheck disable=SC2086 # one word per file name
matches=$(grep -H -E '^func Fuzz[A-Za-z0-9_]+\(f \*testing\.F\)' $files /dev/null || true)
targets=$(sed -E 's#^(\.|\./.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]+).*#\1 \2#' <<<"$matches" | sort -u)
[ -n "$targets" ] || die "no fuzz targets found"

n=0
while read -r dir name; do
	[ -n "$name" ] || continue
	n=$((n + 1))
	log "fuzz $name ($dir) for $fuzztime"
	go test -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" "${parallel[@]}" "$dir" ||
		die "fuzz target $name in $dir failed; the failing input is in $dir/testdata/fuzz/$name/"
done <<<"$targets"
log "$n fuzz targets ran for $fuzztime each"
