package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	kubeletapis "k8s.io/kubelet/pkg/apis"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/managers/nodestatus"
)

// kubeletFlags are the flags named as the kubelet's that nodekit's own
// flags did not already cover.
type kubeletFlags struct {
	hostnameOverride   string
	podManifestPath    string
	nodeLabels         map[string]string
	registerWithTaints string
	version            bool

	// taints is registerWithTaints parsed by complete.
	taints []corev1.Taint
	// fromCommandLine holds the flags the command line set, before the
	// config file set others (loadConfigFile records it).
	fromCommandLine map[string]bool
}

// addKubeletFlags adds the flags of kubeletFlags.
func (o *options) addKubeletFlags(fs *pflag.FlagSet) {
	k := &o.kflags
	fs.StringVar(&k.hostnameOverride, "hostname-override", "", "the node's name and host name in place of the host's (the kubelet's flag; --node-name is nodekit's name for it)")
	fs.StringVar(&k.podManifestPath, "pod-manifest-path", "", "the kubelet's name of --manifests")
	fs.StringToStringVar(&k.nodeLabels, "node-labels", nil, "labels the node registers with, key=value,...; in the kubernetes.io and k8s.io namespaces only the well-known node labels and the kubelet.kubernetes.io and node.kubernetes.io prefixes are allowed, as the kubelet allows")
	fs.StringVar(&k.registerWithTaints, "register-with-taints", "", "taints the node registers with, key=value:Effect or key:Effect,... (an existing Node keeps its taints)")
	fs.BoolVar(&k.version, "version", false, "print the Kubernetes version nodekit implements (as the kubelet's --version) and exit")
}

// aliasChanged reports whether the command line set the other name of
// flag, so that the config file does not override it.
func (o *options) aliasChanged(flag string) bool {
	switch flag {
	case "manifests":
		return o.kflags.fromCommandLine["pod-manifest-path"]
	case "read-only-port":
		return o.kflags.fromCommandLine["port"]
	}
	return false
}

// complete checks the kubelet-named flags and parses the taints. It runs
// after loadConfigFile: a name given on the command line wins over the
// file's value of its alias, and two aliases given on the command line
// with different values are an error.
func (o *options) complete() error {
	k := &o.kflags
	cmdline := k.fromCommandLine
	var errs []error
	if cmdline["hostname-override"] && cmdline["node-name"] && !strings.EqualFold(strings.TrimSpace(k.hostnameOverride), o.nodeName) {
		errs = append(errs, fmt.Errorf("--hostname-override %q and --node-name %q differ: give one", k.hostnameOverride, o.nodeName))
	}
	if cmdline["pod-manifest-path"] && cmdline["manifests"] && k.podManifestPath != o.manifests {
		errs = append(errs, fmt.Errorf("--pod-manifest-path %q and --manifests %q differ: give one", k.podManifestPath, o.manifests))
	}
	if err := validateNodeLabels(k.nodeLabels); err != nil {
		errs = append(errs, err)
	}
	taints, err := parseTaints(k.registerWithTaints)
	if err != nil {
		errs = append(errs, fmt.Errorf("--register-with-taints: %w", err))
	}
	k.taints = taints
	return errors.Join(errs...)
}

// applyKubeletFlags sets what the kubelet-named flags and the
// KubeletConfiguration file say on cfg.
func (o *options) applyKubeletFlags(cfg *nodekit.Config) {
	k := &o.kflags
	if k.hostnameOverride != "" {
		// The kubelet trims and lowercases the override, as nodekit's
		// --node-name.
		cfg.NodeName = strings.ToLower(strings.TrimSpace(k.hostnameOverride))
	}
	if k.podManifestPath != "" {
		cfg.Manifests = k.podManifestPath
	}
	if len(k.nodeLabels) > 0 {
		cfg.NodeStatus.Labels = k.nodeLabels
	}
	if len(k.taints) > 0 {
		cfg.NodeStatus.Taints = k.taints
	}
	o.applyKubeletConfig(cfg)
	o.applyCgroupConfig(cfg)
}

// validateNodeLabels refuses labels that are not valid, and, as the
// kubelet does, labels in the kubernetes.io and k8s.io namespaces that a
// kubelet may not set on its own Node (kubeletapis.IsKubeletLabel).
func validateNodeLabels(labels map[string]string) error {
	var bad []string
	var errs []error
	for key, value := range labels {
		if e := validation.IsQualifiedName(key); len(e) > 0 {
			errs = append(errs, fmt.Errorf("--node-labels: key %q: %s", key, strings.Join(e, "; ")))
		}
		if e := validation.IsValidLabelValue(value); len(e) > 0 {
			errs = append(errs, fmt.Errorf("--node-labels: %q value %q: %s", key, value, strings.Join(e, "; ")))
		}
		ns, _, _ := strings.Cut(key, "/")
		if !strings.Contains(key, "/") {
			ns = ""
		}
		inKubernetesNamespace := ns == "kubernetes.io" || strings.HasSuffix(ns, ".kubernetes.io") || ns == "k8s.io" || strings.HasSuffix(ns, ".k8s.io")
		if inKubernetesNamespace && !kubeletapis.IsKubeletLabel(key) {
			bad = append(bad, key)
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		errs = append(errs, fmt.Errorf("--node-labels: unknown 'kubernetes.io' or 'k8s.io' labels %s: labels in these namespaces must begin with an allowed prefix (%s) or be one of %s",
			strings.Join(bad, ", "), strings.Join(kubeletapis.KubeletLabelNamespaces(), ", "), strings.Join(kubeletapis.KubeletLabels(), ", ")))
	}
	return errors.Join(errs...)
}

// parseTaints parses key=value:Effect and key:Effect, comma-separated, as
// the kubelet's --register-with-taints. Keys, values and effects are
// checked by nodestatus.Config.Validate.
func parseTaints(s string) ([]corev1.Taint, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []corev1.Taint
	for _, spec := range strings.Split(s, ",") {
		spec = strings.TrimSpace(spec)
		kv, effect, ok := strings.Cut(spec, ":")
		if !ok || effect == "" {
			return nil, fmt.Errorf("taint %q: want key=value:Effect or key:Effect", spec)
		}
		key, value, _ := strings.Cut(kv, "=")
		out = append(out, corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffect(effect)})
	}
	if err := (nodestatus.Config{NodeName: "n", Taints: out}).Validate(); err != nil {
		return nil, err
	}
	return out, nil
}

// formatTaints is the flag form of taints, as parseTaints reads it.
func formatTaints(taints []corev1.Taint) string {
	parts := make([]string, 0, len(taints))
	for _, t := range taints {
		kv := t.Key
		if t.Value != "" {
			kv += "=" + t.Value
		}
		parts = append(parts, kv+":"+string(t.Effect))
	}
	return strings.Join(parts, ",")
}

// versionString is what --version prints, as the kubelet's "Kubernetes
// v1.37.2": the Kubernetes version nodekit implements, with "+nodekit"
// as semver build metadata (what the node reports as its kubeletVersion),
// so tools that parse the kubelet's output read v1.37.2.
func versionString() string {
	return "Kubernetes " + nodestatus.DefaultAgentVersion
}
