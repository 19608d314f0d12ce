#!/usr/bin/env bash
# Fails when a shell script of the project pipes into a command that may stop
# reading early (grep -q, head) while pipefail is set: the writer then gets
# SIGPIPE, the pipeline returns 141, and the script fails at random under load.
# Capture the output first (out=$(cmd); grep -q x <<<"$out") or use a reader
# that reads all its input (sed -n 1p).
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."
set -uo pipefail

pattern='\|[[:space:]]*(grep[[:space:]]+(-[a-zA-Z]*q|--quiet|-[a-zA-Z]*m)|head([[:space:]]|$))'
files=$(git ls-files 'hack/*.sh' '.ci/*' '*.sh' 2>/dev/null | sort -u)
[ -n "$files" ] || files=$(find hack .ci -type f \( -name '*.sh' -o -name run \))
# shellcheck disable=SC2086 # one word per file name
hits=$(grep -nE "$pattern" $files /dev/null)
if [ -n "$hits" ]; then
	printf '[hack] error: a pipe into grep -q, grep -m or head under pipefail fails at random (SIGPIPE); capture the output first:\n%s\n' "$hits" >&2
	exit 1
fi
exit 0
