// Command nodekit is the ready-made node agent built from nodekit's default
// subsystems. `nodekit run` reads its flags, or a kubelet.config.k8s.io
// KubeletConfiguration given with --config, into a nodekit.Config and runs
// nodekit.New with nodekit.Defaults(): pods come from the manifest
// directory, a manifest URL and, with --kubeconfig, the API server; they
// run on the CRI runtime at --runtime-endpoint (or, with --runtime sim, on
// a simulated one), and their status is served over HTTP and written to
// the API server. `nodekit runtime-sim` serves the simulated runtime over a
// CRI socket.
package main
