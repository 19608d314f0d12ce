package main

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/sources/apiserver"
	httpsource "github.com/nodekit/nodekit/sources/http"
)

// sourceOptions are the flags of the pod sources beyond the manifest
// directory: the manifest URL and the API server source's checkpoint.
type sourceOptions struct {
	manifestURL          string
	manifestURLHeader    headerFlag
	httpCheck            time.Duration
	podCheckpoint        bool
	podCheckpointTimeout time.Duration
	podCheckpointObjects bool
}

// addSourceFlags adds the flags of the pod sources.
func (o *options) addSourceFlags(fs *pflag.FlagSet) {
	s := &o.sources
	fs.StringVar(&s.manifestURL, "manifest-url", "", "URL of static pods to run: a Pod or a PodList, YAML or JSON, read every --http-check-frequency")
	fs.Var(&s.manifestURLHeader, "manifest-url-header", "comma-separated HTTP headers for --manifest-url requests, each Key:Value, e.g. 'a:hello,b:again,c:world'; repeatable, and a key may have several values")
	fs.DurationVar(&s.httpCheck, "http-check-frequency", httpsource.DefaultCheckPeriod, "how often --manifest-url is read")
	fs.BoolVar(&s.podCheckpoint, "pod-checkpoint", true, "keep a local copy of the pods the API server bound to this node (ROOT-DIR/pod-checkpoints) and run them from it when the API server does not answer at start; false keeps the kubelet's behaviour (no API pod runs until the API server answers)")
	fs.DurationVar(&s.podCheckpointTimeout, "pod-checkpoint-timeout", apiserver.DefaultOfflineAfter, "how long the agent waits at start for the API server's list of its pods before it runs the checkpointed pods offline")
	fs.BoolVar(&s.podCheckpointObjects, "pod-checkpoint-objects", false, "also keep on disk (ROOT-DIR/pod-checkpoint-objects, root-only files) the ConfigMaps, Secrets and service-account tokens of the checkpointed pods, so that their volumes and env can be made again after a reboot with the API server away; Secrets and tokens then rest on persistent disk. Off, copies an earlier run left are removed at start. Needs --pod-checkpoint")
}

// applySources sets the pod sources' settings of cfg from the flags.
func (o *options) applySources(cfg *nodekit.Config) {
	s := &o.sources
	cfg.HTTPSource.URL = s.manifestURL
	cfg.HTTPSource.Header = s.manifestURLHeader.header
	cfg.HTTPSource.CheckPeriod = s.httpCheck
	cfg.DisablePodCheckpoint = !s.podCheckpoint
	cfg.APISource.OfflineAfter = s.podCheckpointTimeout
	cfg.PodCheckpointObjects = s.podCheckpointObjects
}

// headerFlag is the kubelet's --manifest-url-header: comma-separated
// Key:Value pairs, split at the first colon, the flag repeatable, values of
// one key accumulated.
type headerFlag struct {
	header http.Header
}

func (h *headerFlag) Set(value string) error {
	if h.header == nil {
		h.header = http.Header{}
	}
	for _, pair := range strings.Split(value, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return fmt.Errorf("malformed header %q: want Key:Value", pair)
		}
		h.header.Add(k, strings.TrimSpace(v))
	}
	return nil
}

func (h *headerFlag) String() string {
	keys := make([]string, 0, len(h.header))
	for k := range h.header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var pairs []string
	for _, k := range keys {
		for _, v := range h.header[k] {
			pairs = append(pairs, k+":"+v)
		}
	}
	return strings.Join(pairs, ",")
}

func (h *headerFlag) Type() string { return "colonSeparatedMultimapStringString" }
