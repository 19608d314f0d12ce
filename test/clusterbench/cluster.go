package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
)

// modeLabel marks the Nodes and pods of one mode ("nodekit" or "kwok").
const modeLabel = "clusterbench.nodekit.io/mode"

// cluster is the benchmark's view of the API server: an admin client whose
// requests are counted (they are taken out of the API server's count), and
// an uncounted one for what a mode's nodes need someone to do (kwok's
// Nodes are created by the benchmark; nodekit's agents create their own).
type cluster struct {
	admin     kubernetes.Interface
	uncounted kubernetes.Interface
	requests  *atomic.Int64
}

func newCluster(kubeconfig string) (*cluster, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	rc.QPS, rc.Burst = 1000, 2000
	rc.ContentType = "application/vnd.kubernetes.protobuf"
	rc.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	c := &cluster{requests: new(atomic.Int64)}
	if c.uncounted, err = kubernetes.NewForConfig(rc); err != nil {
		return nil, err
	}
	counted := rest.CopyConfig(rc)
	counted.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countingTransport{next: rt, n: c.requests} })
	if c.admin, err = kubernetes.NewForConfig(counted); err != nil {
		return nil, err
	}
	return c, nil
}

// prepareNamespace creates ns and its default ServiceAccount (there is no
// kube-controller-manager to make it; the ServiceAccount admission plugin
// wants it).
func (c *cluster) prepareNamespace(ctx context.Context, ns string) error {
	_, err := c.admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}
	if _, err := c.admin.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create the default service account of %s: %w", ns, err)
	}
	return nil
}

// benchPod is pod j of node: one container, bound to the node, without a
// service account token (kwok would not mount one; see
// docs/cluster-scale.md).
func benchPod(ns, mode, node string, j int) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-p%03d", node, j), Namespace: ns, Labels: map[string]string{modeLabel: mode}},
		Spec: corev1.PodSpec{
			NodeName:                      node,
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](5),
			Containers: []corev1.Container{{
				Name: "main", Image: "localhost/nodekit/busybox:1", ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"sh", "-c", "sleep 36000"},
			}},
		},
	}
}

// createPods creates p pods on each of nodes, with a few requests in
// flight, printing how many are created every 10 s.
func (c *cluster) createPods(ctx context.Context, ns, mode string, nodes []string, p int) error {
	total := p * len(nodes)
	var created atomic.Int64
	done := make(chan struct{})
	defer close(done)
	go func() {
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				logf("%s: %d of %d pods created", mode, created.Load(), total)
			}
		}
	}()
	return inFlight(ctx, total, func(i int) error {
		pod := benchPod(ns, mode, nodes[i%len(nodes)], i/len(nodes))
		if _, err := c.admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create pod %s: %w", pod.Name, err)
		}
		created.Add(1)
		return nil
	})
}

// deletePods deletes every pod of the mode in ns one by one, with a few
// requests in flight (a DeleteCollection of thousands of pods outlives the
// API server's request timeout on a loaded machine). grace nil keeps each
// pod's own grace period.
func (c *cluster) deletePods(ctx context.Context, ns, mode string, grace *int64) error {
	list, err := c.admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: modeLabel + "=" + mode, ResourceVersion: "0"})
	if err != nil {
		return fmt.Errorf("list the pods to delete: %w", err)
	}
	return inFlight(ctx, len(list.Items), func(i int) error {
		n := list.Items[i].Name
		err := c.admin.CoreV1().Pods(ns).Delete(ctx, n, metav1.DeleteOptions{GracePeriodSeconds: grace})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete pod %s: %w", n, err)
		}
		return nil
	})
}

// inFlight runs do for 0..n-1 with 16 calls in flight (client-go's
// ParallelizeUntil) and returns the first error.
func inFlight(ctx context.Context, n int, do func(i int) error) error {
	var (
		firstErr error
		once     sync.Once
	)
	workqueue.ParallelizeUntil(ctx, 16, n, func(i int) {
		if err := do(i); err != nil {
			once.Do(func() { firstErr = err })
		}
	})
	return firstErr
}

// watcher keeps the benchmark's own copies of one mode's Nodes and pods.
type watcher struct {
	nodes, pods cache.Store
	stop        context.CancelFunc
	done        sync.WaitGroup
}

// watch starts informers on the mode's Nodes and ns's pods and waits for
// their first lists.
func (c *cluster) watch(ctx context.Context, ns, mode string) (*watcher, error) {
	ctx, cancel := context.WithCancel(ctx)
	sel := func(o *metav1.ListOptions) { o.LabelSelector = modeLabel + "=" + mode }
	nf := informers.NewSharedInformerFactoryWithOptions(c.admin, 0, informers.WithTweakListOptions(sel))
	pf := informers.NewSharedInformerFactoryWithOptions(c.admin, 0, informers.WithNamespace(ns), informers.WithTweakListOptions(sel))
	ni, pi := nf.Core().V1().Nodes().Informer(), pf.Core().V1().Pods().Informer()
	w := &watcher{nodes: ni.GetStore(), pods: pi.GetStore(), stop: cancel}
	for _, inf := range []cache.SharedIndexInformer{ni, pi} {
		w.done.Add(1)
		go func() { defer w.done.Done(); inf.RunWithContext(ctx) }()
	}
	if !cache.WaitForCacheSync(ctx.Done(), ni.HasSynced, pi.HasSynced) {
		w.close()
		return nil, fmt.Errorf("the benchmark's informers did not sync: %w", ctx.Err())
	}
	return w, nil
}

// close stops the informers (their watches end, so the API server counts
// them) and waits for them.
func (w *watcher) close() {
	w.stop()
	w.done.Wait()
}

// readyNodes counts the Nodes whose Ready condition is True.
func (w *watcher) readyNodes() int {
	n := 0
	for _, o := range w.nodes.List() {
		for _, c := range o.(*corev1.Node).Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				n++
			}
		}
	}
	return n
}

// runningPods counts the pods that are Running and Ready, and all pods.
func (w *watcher) runningPods() (running, all int) {
	for _, o := range w.pods.List() {
		p := o.(*corev1.Pod)
		all++
		if p.Status.Phase != corev1.PodRunning {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				running++
			}
		}
	}
	return running, all
}

// waitFor polls cond every 200 ms until it holds, printing progress every
// 10 s, for at most timeout; failed ends the wait early with its error
// (the agent process exited).
func waitFor(ctx context.Context, what string, timeout time.Duration, failed func() error, cond func() (bool, string)) error {
	deadline := time.Now().Add(timeout)
	lastLog := time.Now()
	for {
		ok, progress := cond()
		if ok {
			return nil
		}
		if err := failed(); err != nil {
			return fmt.Errorf("%s: %w (%s)", what, err, progress)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not after %v (%s)", what, timeout, progress)
		}
		if time.Since(lastLog) > 10*time.Second {
			logf("%s: %s", what, progress)
			lastLog = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// removeNodes deletes the mode's Nodes and their Leases, so the next run
// starts from an empty cluster.
func (c *cluster) removeNodes(ctx context.Context, mode string, names []string) error {
	sel := metav1.ListOptions{LabelSelector: modeLabel + "=" + mode}
	if err := c.admin.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, sel); err != nil {
		return fmt.Errorf("delete the %s nodes: %w", mode, err)
	}
	for _, n := range names {
		err := c.admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, n, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete the lease of %s: %w", n, err)
		}
	}
	return nil
}
