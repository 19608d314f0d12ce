package sim

import (
	"cmp"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// matchID reports whether id matches a filter's ID: empty matches all, and a
// prefix matches as containerd's truncated IDs do.
func matchID(id, filter string) bool { return strings.HasPrefix(id, filter) }

// matchLabels reports whether labels hold every pair of the selector.
func matchLabels(labels, selector map[string]string) bool {
	for k, v := range selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// lookupPrefix finds the one value whose key starts with prefix: NotFound
// when none does, InvalidArgument when several do.
func lookupPrefix[T any](m map[string]T, prefix, kind string) (T, error) {
	var (
		found T
		n     int
	)
	if prefix != "" {
		for id, v := range m {
			if strings.HasPrefix(id, prefix) {
				found = v
				n++
			}
		}
	}
	switch n {
	case 0:
		return found, notFound(kind, prefix)
	case 1:
		return found, nil
	}
	var zero T
	return zero, status.Errorf(codes.InvalidArgument, "sim: %s ID prefix %q is ambiguous", kind, prefix)
}

// sortedContainers returns the containers in creation order.
func sortedContainers(m map[string]*container) []*container {
	out := make([]*container, 0, len(m))
	for _, c := range m {
		out = append(out, c)
	}
	sortBySeq(out)
	return out
}

// sortBySeq orders containers by creation.
func sortBySeq(cs []*container) {
	slices.SortFunc(cs, func(a, b *container) int { return cmp.Compare(a.seq, b.seq) })
}
