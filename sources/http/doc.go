// Package http is the HTTP manifest source: static pods read from a URL
// (the kubelet's --manifest-url, config/http.go).
//
// # Data flow
//
// [Source.Run] GETs Config.URL with Config.Header at once and then every
// Config.CheckPeriod (20s). The body is a Pod or a PodList, YAML or JSON;
// every pod becomes a static pod exactly as a manifest file does (the
// checks, defaults and validation of sources/file, through file.DecodePod
// and file.URLPod): named "<name>-<node>", in namespace "default" unless
// it names one, bound to the node, with a UID that is the MD5 of
// "url:<url>" and the pod as served (so an edit is a new pod, as in the
// kubelet), stamped with the config.hash annotation. When the body is the
// same as last time nothing is sent; when it changed the whole list goes
// to the sources.Mux as one snapshot (source name "http"), which diffs it
// into ADD, UPDATE and REMOVE.
//
// Config.Header is sent only to the URL's origin: a redirect to another
// scheme, host or port drops every configured header for the rest of that
// read, a redirect from https to http fails the read, and a read follows
// at most 10 redirects. The body may have at most 10 MiB and a PodList at
// most 1,000 pods.
//
// A read that fails (the URL unreachable, a status other than 200, a body
// that is no Pod or PodList, one invalid pod in a list, too large a body or
// list, a refused redirect) sends nothing: the
// last good pods keep running. The first failure of a streak is logged,
// later ones at V(4), and the first success after it again, so an
// unreachable URL does not flood the log. A body refused as invalid is not
// decoded again while the URL serves the same bytes (10 MiB of YAML takes
// seconds of CPU to decode). An empty body means no pods, as
// in the kubelet. Until the first good read nothing is sent, so the agent
// does not remove pods it cannot account for while this source is unread.
//
// # Concurrency
//
// Run is one goroutine; it blocks on sending a snapshot until the Mux takes
// it or ctx ends. The pods sent are the receiver's.
//
// # Extending
//
// To read manifests from elsewhere (another protocol, signed bundles),
// write another sources.Source that reuses file.DecodePod and file.URLPod
// and add it to the "sources" group.
package http
