package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"go.uber.org/fx"
	"k8s.io/klog/v2/textlogger"

	"github.com/nodekit/nodekit"
	"github.com/nodekit/nodekit/agent/admission"
)

// ReasonLabelRefused is the status reason of a refused pod.
const ReasonLabelRefused = "LabelRefused"

// RefuseLabelled refuses every pod that carries the label Key.
type RefuseLabelled struct {
	// Key is the label that refuses a pod, whatever its value.
	Key string
}

// Admit implements admission.Handler.
func (h RefuseLabelled) Admit(attrs *admission.Attributes) admission.Result {
	if _, ok := attrs.Pod.Labels[h.Key]; ok {
		return admission.Refused(ReasonLabelRefused,
			fmt.Sprintf("pods labelled %s do not run on this node (%d other pods here)", h.Key, len(attrs.OtherPods)))
	}
	return admission.Admitted()
}

// Module appends RefuseLabelled to the agent's admission chain, after the
// defaults (pressure, sysctls, pod count, resources).
func Module(key string) fx.Option {
	return fx.Provide(fx.Annotate(func() admission.Handler { return RefuseLabelled{Key: key} },
		fx.ResultTags(`group:"admission"`)))
}

func main() {
	cfg := nodekit.DefaultConfig()
	key := flag.String("label", "example.nodekit.io/deny", "label that refuses a pod")
	flag.StringVar(&cfg.Manifests, "manifests", "", "directory of static pod manifests")
	flag.StringVar(&cfg.Runtime, "runtime", nodekit.RuntimeSim, "cri or sim")
	flag.StringVar(&cfg.RuntimeEndpoint, "runtime-endpoint", "", "CRI endpoint")
	flag.StringVar(&cfg.RootDir, "root-dir", cfg.RootDir, "root directory")
	flag.Parse()
	app := nodekit.New(cfg, textlogger.NewLogger(textlogger.NewConfig()), nodekit.Defaults(), Module(*key))
	if err := app.Start(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "admission-by-label:", err)
		os.Exit(1)
	}
	<-app.Done()
	if err := app.Stop(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "admission-by-label:", err)
		os.Exit(1)
	}
}
