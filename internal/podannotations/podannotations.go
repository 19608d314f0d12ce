package podannotations

// Annotations that every pod source stamps on its pods, as the kubelet's
// config sources do.
const (
	// Source names the source ("file", "http", "api").
	Source = "kubernetes.io/config.source"
	// Hash is the hash of the pod as the source read it.
	Hash = "kubernetes.io/config.hash"
	// Seen is when the source first saw the pod (RFC 3339).
	Seen = "kubernetes.io/config.seen"
	// Mirror marks a mirror pod in the API server; its value is the static
	// pod's config hash.
	Mirror = "kubernetes.io/config.mirror"
)

// Source names, the values of the Source annotation.
const (
	FileSource      = "file"
	HTTPSource      = "http"
	APIServerSource = "api"
)
