package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"

	"github.com/go-logr/logr"
	"go.uber.org/fx"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/textlogger"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/sources"
	"github.com/nodekit/nodekit/sources/file"
)

// Message is one message of the queue: the manifest of the pod under Key,
// or its removal.
type Message struct {
	// Key names the pod in the queue; a new manifest replaces the old.
	Key string `json:"key"`
	// Manifest is a pod manifest (JSON), as in a manifest file.
	Manifest json.RawMessage `json:"manifest,omitempty"`
	// Delete removes the key's pod.
	Delete bool `json:"delete,omitempty"`
}

// QueueSource is a sources.Source fed by a message queue.
type QueueSource struct {
	// Queue delivers the messages; Run stops when it is closed or its
	// context ends.
	Queue <-chan Message
	// NodeName is the node's name, part of each static pod's name.
	NodeName string
	// Log receives the messages that are refused.
	Log logr.Logger
}

// Name implements sources.Source.
func (s *QueueSource) Name() string { return "queue" }

// Run implements sources.Source: a snapshot first, then one after each
// message that changed the pods.
func (s *QueueSource) Run(ctx context.Context, updates chan<- []*corev1.Pod) error {
	pods := map[string]*corev1.Pod{}
	changed := true // the first snapshot goes out at once, empty or not
	for {
		if changed {
			keys := make([]string, 0, len(pods))
			for k := range pods {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			snap := make([]*corev1.Pod, 0, len(keys))
			for _, k := range keys {
				snap = append(snap, pods[k].DeepCopy())
			}
			select {
			case updates <- snap:
			case <-ctx.Done():
				return nil
			}
		}
		changed = false
		var m Message
		select {
		case <-ctx.Done():
			return nil
		case msg, ok := <-s.Queue:
			if !ok {
				<-ctx.Done()
				return nil
			}
			m = msg
		}
		if m.Delete {
			_, changed = pods[m.Key]
			delete(pods, m.Key)
			continue
		}
		decoded, _, err := file.DecodePod(m.Manifest)
		if err == nil {
			var p *corev1.Pod
			if p, err = file.URLPod(decoded, "queue:"+m.Key, s.NodeName); err == nil {
				pods[m.Key], changed = p, true
			}
		}
		if err != nil {
			s.Log.Error(err, "Refusing a queued pod", "key", m.Key)
		}
	}
}

// Module adds a QueueSource on queue to the agent's pod sources.
func Module(queue <-chan Message) fx.Option {
	return fx.Provide(fx.Annotate(func(cfg nodekit.Config, log logr.Logger) sources.Source {
		return &QueueSource{Queue: queue, NodeName: cfg.NodeName, Log: log.WithName("queue")}
	}, fx.ResultTags(`group:"sources"`)))
}

func main() {
	cfg := nodekit.DefaultConfig()
	flag.StringVar(&cfg.Runtime, "runtime", nodekit.RuntimeSim, "cri or sim")
	flag.StringVar(&cfg.RuntimeEndpoint, "runtime-endpoint", "", "CRI endpoint")
	flag.StringVar(&cfg.RootDir, "root-dir", cfg.RootDir, "root directory")
	flag.Parse()
	queue := make(chan Message)
	go func() { // the queue stand-in: one JSON message a line on stdin
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			var m Message
			if err := json.Unmarshal(in.Bytes(), &m); err != nil {
				fmt.Fprintln(os.Stderr, "custom-source: bad message:", err)
				continue
			}
			queue <- m
		}
	}()
	app := nodekit.New(cfg, textlogger.NewLogger(textlogger.NewConfig()), nodekit.Defaults(), Module(queue))
	if err := app.Start(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "custom-source:", err)
		os.Exit(1)
	}
	<-app.Done()
	if err := app.Stop(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "custom-source:", err)
		os.Exit(1)
	}
}
