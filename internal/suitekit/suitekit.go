package suitekit

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	criapi "k8s.io/cri-api/pkg/apis"
	criclient "k8s.io/cri-client/pkg"
	"k8s.io/klog/v2"

	"github.com/nodekit/nodekit/runtime/sim"
)

// ConnectCRI connects to the CRI runtime at endpoint (e.g. containerd's
// unix:///run/containerd/containerd.sock), fails tb when it cannot within a
// minute, and closes both services when tb ends.
func ConnectCRI(tb testing.TB, endpoint string) (criapi.RuntimeService, criapi.ImageManagerService) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(klog.NewContext(context.Background(), logr.Discard()), time.Minute)
	defer cancel()
	rs, err := criclient.NewRemoteRuntimeServiceBuilder().WithEndpoint(endpoint).
		WithConnectionTimeout(time.Minute).WithTracerProvider(nil).Build(ctx)
	if err != nil {
		tb.Fatalf("connect to %s: %v", endpoint, err)
	}
	is, err := criclient.NewRemoteImageServiceBuilder().WithEndpoint(endpoint).
		WithConnectionTimeout(time.Minute).WithTracerProvider(nil).Build(ctx)
	if err != nil {
		tb.Fatalf("connect to %s: %v", endpoint, err)
	}
	tb.Cleanup(func() {
		_ = rs.Close(context.Background())
		_ = is.Close(context.Background())
	})
	return rs, is
}

// AddContainer appends container name of image to p: with exitAfter set it
// exits that long after each start with exitCode, otherwise it runs until
// stopped; on TERM it exits 0. p.Annotations must not be nil.
func AddContainer(p *corev1.Pod, name, image string, exitAfter time.Duration, exitCode int) {
	script := "trap 'exit 0' TERM; sleep 3600 & wait"
	if exitAfter > 0 {
		script = fmt.Sprintf("trap 'exit 0' TERM; sleep %g & wait; exit %d", exitAfter.Seconds(), exitCode)
		p.Annotations[sim.AnnotationPrefix+name+"."+sim.FieldExitAfter] = exitAfter.String()
		p.Annotations[sim.AnnotationPrefix+name+"."+sim.FieldExitCode] = fmt.Sprint(exitCode)
	}
	p.Spec.Containers = append(p.Spec.Containers, corev1.Container{
		Name: name, Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
		Command: []string{"sh", "-c", script}, TerminationMessagePolicy: corev1.TerminationMessageReadFile,
	})
}
