// Package file is the static-pod source: a directory of pod manifests (the
// kubelet's staticPodPath), read as the kubelet's file source reads it.
//
// # Data flow
//
// [Source.Run] reads every .yaml, .yml and .json file in the directory
// (dotfiles and subdirectories are skipped; symlinks are followed), one Pod
// per file, and sends the resulting pods as one snapshot to the
// sources.Mux. It then watches the directory with fsnotify and also reads it
// in full every CheckPeriod (20s), sending a new snapshot only when the set
// of pods changes. Bursts of events are debounced (20ms after the last
// one), so an editor's save gives one snapshot. If the directory cannot be
// watched (it is missing, say), the watch is retried with backoff from 1s to
// 20s while the periodic reads go on; a missing directory means no static
// pods, which is not an error.
//
// Each manifest becomes a static pod as in the kubelet (common.go's
// applyDefaults): its name is "<metadata.name>-<lowercase node name>", its
// namespace "default" unless set, spec.nodeName the node, and its UID (unless
// the manifest sets one) the hex MD5 of "host:<node>", "file:<path>" and the
// decoded pod, so editing a manifest's content gives a new UID and the agent
// replaces the pod; the UID is also the kubernetes.io/config.hash
// annotation. The pod tolerates every NoExecute taint, its phase is Pending,
// and it gets the defaults the API server would apply (see setDefaults).
//
// Like the kubelet, the source reads only the first YAML document of a file,
// and refuses unread a file of 10 MiB or more (the kubelet's
// maxConfigLength). The static pod is validated as the API server validates
// a pod create (internal/podvalidation: metadata with apimachinery's rules,
// annotations at most 256 KiB in total, and the pod-spec rules), after the
// defaults are applied, with three more rules: a UID the manifest sets must
// be a single path element (no "/", no NUL, not "." or "..": the agent
// names the pod's directories after it); the pod must stay within generous
// count limits (containers, volumes, and env vars, args, ports and mounts
// of all containers together, podvalidation's limits.go), which the API
// server does not need as it bounds the whole object; and, as the kubelet
// refuses, the pod may not reference an API object (a service account,
// secrets and config maps in volumes, env or envFrom, image pull secrets,
// projected tokens, cluster trust bundles and pod certificates, PVCs,
// ephemeral volumes, resource claims), with the kubelet's message, as
// "spec.volumes[0].secret: Forbidden: static pods may not reference
// secrets". automountServiceAccountToken is accepted and has no effect, as
// in the kubelet: no token is mounted into a static pod. Of two files
// whose pods share a namespace/name (or a UID), the first in file name
// order wins.
//
// Unknown and duplicate fields are logged ("Unknown field in pod manifest",
// with the file and the field's path) and ignored; the pod still runs. A
// manifest that does not parse, is too large or fails validation logs one
// error naming the file and the cause (for validation, each field's path
// and rule), and contributes no new pod. Unlike the kubelet, which drops a
// pod whose manifest became invalid, a broken edit keeps the file's last
// good pod running: fixing the file replaces it, deleting the file removes
// it. Other files are never affected. Each problem is logged once per file
// content, not on every rescan. Every directory entry that is skipped (a
// symlink loop or a dangling symlink, a directory named *.yaml, a file whose
// pod duplicates another file's name or UID) logs one line at the default
// verbosity naming the file and the reason, again only when the reason
// changes; so do the ignored second and later documents of a file.
//
// # Concurrency
//
// All state lives in the goroutine that calls Run; Source has no other
// mutable state. Run blocks on sending a snapshot until the Mux takes it or
// ctx ends.
//
// # Extending
//
// To read manifests from elsewhere (a URL, an embedded FS), write another
// sources.Source and add it to the "sources" group; to change how manifests
// become pods, wrap this Source's Run and rewrite the snapshots.
package file
