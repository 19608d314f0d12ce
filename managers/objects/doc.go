// Package objects gives the node's pods the API objects they reference:
// ConfigMaps and Secrets (for volumes, env, envFrom and image pull
// secrets), service account tokens (for token volumes) and Services (for
// the service environment of containers).
//
// # Data flow
//
// The agent registers each pod it admits with a [Manager] (RegisterPod)
// and unregisters it when the pod is gone. The default, [WatchManager], is
// the kubelet's watch-based change detection: each referenced object gets
// its own reflector whose list and watch carry a metadata.name field
// selector, which is what the Node authorizer lets a node read for the
// pods bound to it. Consumers (the volume manager, the env builder) call
// GetConfigMap and GetSecret; a Get answers from the object's watch once it
// has synced, waits up to Config.SyncWait for that, and otherwise reads the
// object from the API server. An object no registered pod references is no
// longer watched; an immutable one stops being watched once read.
//
// [Tokens] is the kubelet's token manager: it calls the TokenRequest API
// and returns the cached token until 80% of its lifetime (or 24h) has
// passed. [Services] lists and watches all Services.
//
// # Extending
//
// Each of [Manager], [TokenManager] and [ServiceLister] is an interface an
// embedder may replace with fx.Decorate or fx.Replace. [Module] provides
// the defaults only when a Kubernetes client exists; in standalone mode
// the three values are nil and their consumers do without API objects.
//
// # Concurrency
//
// All types are safe for concurrent use. Constructors do no I/O; the
// application runs WatchManager.Run, Tokens.Run and Services.Run, each
// blocking until its context ends. Returned objects are shared with the
// caches: callers must not mutate them.
package objects
