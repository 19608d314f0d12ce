#!/usr/bin/env bash
# Fails when nodekit's binary, built as hack/ builds it (-tags
# $NODEKIT_BUILD_TAGS, static), links a reflective method call
# (reflect.Value.Method or MethodByName, as text/template and html/template
# make): with one reachable, the linker keeps every exported method of every
# type used through an interface, about 20 MiB of the binary's mapped
# sections and 10 MiB of its resident memory (docs/benchmarks.md). The
# linker's dependency dump (-ldflags=-dumpdep) marks such a function
# <ReflectMethod>; the edges into it say who reaches it.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
cd "$here/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -trimpath -tags "$NODEKIT_BUILD_TAGS" -ldflags=-dumpdep -o "$tmp/nodekit" ./cmd/nodekit 2>"$tmp/deps" ||
	die "go build ./cmd/nodekit failed: $(tail -n 20 "$tmp/deps")"
marked=$(grep -F '<ReflectMethod>' "$tmp/deps" || true)
if [ -n "$marked" ]; then
	die "nodekit links a reflective method call (a cobra template, text/template, html/template, or grpc built without -tags grpcnotrace?); the linker's edges that carry the mark, first 20:
$(sed -n 1,20p <<<"$marked")"
fi
sizes=
if command -v size >/dev/null; then
	sizes=$(size -A "$tmp/nodekit" | awk '$1 == ".text" || $1 == ".rodata" || $1 == ".gopclntab" {printf ", %s %.1f MiB", $1, $2 / 1048576}')
fi
log "nodekit links no reflective method call$sizes"
