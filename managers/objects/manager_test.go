package objects

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// gets counts the direct GETs of resource the client has served.
func gets(c *fake.Clientset, resource string) int {
	n := 0
	for _, a := range c.Actions() {
		if a.GetVerb() == "get" && a.GetResource().Resource == resource {
			n++
		}
	}
	return n
}

func TestRegisteredObjectsAreServedFromTheirOwnWatch(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset(configMap("ns", "cm", map[string]string{"k": "v1"}), secret("ns", "sec", map[string][]byte{"s": []byte("x")}))
	r := newManager(t, client, true)
	r.m.RegisterPod(podUsing("ns", "p", "cm", "sec"))
	synced(t, r.m.configMaps, "ns", "cm")
	synced(t, r.m.secrets, "ns", "sec")

	cm, err := r.m.GetConfigMap(ctx, "ns", "cm")
	if err != nil || cm.Data["k"] != "v1" {
		t.Fatalf("GetConfigMap = %v, %v; want data k=v1", cm, err)
	}
	sec, err := r.m.GetSecret(ctx, "ns", "sec")
	if err != nil || string(sec.Data["s"]) != "x" {
		t.Fatalf("GetSecret = %v, %v; want data s=x", sec, err)
	}
	if n := gets(client, "configmaps") + gets(client, "secrets"); n != 0 {
		t.Errorf("%d direct GETs, want 0: a synced watch answers", n)
	}
	// Every list and watch is restricted to the one object.
	for _, a := range client.Actions() {
		if a.GetVerb() != "list" && a.GetVerb() != "watch" {
			continue
		}
		var sel string
		switch a := a.(type) {
		case k8stesting.ListAction:
			sel = a.GetListRestrictions().Fields.String()
		case k8stesting.WatchAction:
			sel = a.GetWatchRestrictions().Fields.String()
		}
		want := "metadata.name=" + map[string]string{"configmaps": "cm", "secrets": "sec"}[a.GetResource().Resource]
		if sel != want || a.GetNamespace() != "ns" {
			t.Errorf("%s %s in %q with field selector %q, want %q in ns", a.GetVerb(), a.GetResource().Resource, a.GetNamespace(), sel, want)
		}
	}

	// An edit reaches the cache through the watch.
	if _, err := client.CoreV1().ConfigMaps("ns").Update(ctx, configMap("ns", "cm", map[string]string{"k": "v2"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	until(t, "edit seen", func() bool {
		cm, err := r.m.GetConfigMap(ctx, "ns", "cm")
		return err == nil && cm.Data["k"] == "v2"
	})
}

func TestMissingObjectIsNotFoundUntilCreated(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset()
	r := newManager(t, client, true)
	r.m.RegisterPod(podUsing("ns", "p", "cm", ""))
	synced(t, r.m.configMaps, "ns", "cm")
	if _, err := r.m.GetConfigMap(ctx, "ns", "cm"); !apierrors.IsNotFound(err) {
		t.Fatalf("GetConfigMap of a missing object: %v, want NotFound", err)
	}
	if _, err := client.CoreV1().ConfigMaps("ns").Create(ctx, configMap("ns", "cm", map[string]string{"k": "v"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	until(t, "created object seen", func() bool {
		cm, err := r.m.GetConfigMap(ctx, "ns", "cm")
		return err == nil && cm.Data["k"] == "v"
	})
}

func TestGetBeforeTheWatchSyncsWaitsThenReadsTheAPI(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset(configMap("ns", "cm", map[string]string{"k": "v"}))
	r := newManager(t, client, false) // no Run: the watch never syncs
	r.m.RegisterPod(podUsing("ns", "p", "cm", ""))
	type result struct {
		cm  *corev1.ConfigMap
		err error
	}
	done := make(chan result, 1)
	go func() {
		cm, err := r.m.GetConfigMap(ctx, "ns", "cm")
		done <- result{cm, err}
	}()
	until(t, "Get waiting", r.clk.HasWaiters)
	select {
	case res := <-done:
		t.Fatalf("Get returned %v before SyncWait passed", res)
	default:
	}
	r.clk.Step(r.m.cfg.SyncWait)
	res := <-done
	if res.err != nil || res.cm.Data["k"] != "v" {
		t.Fatalf("GetConfigMap = %v, %v; want the API's object", res.cm, res.err)
	}
	if n := gets(client, "configmaps"); n != 1 {
		t.Errorf("%d direct GETs, want 1", n)
	}
}

func TestUnregisteredObjectIsReadFromTheAPI(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset(secret("ns", "sec", nil))
	r := newManager(t, client, true)
	if _, err := r.m.GetSecret(ctx, "ns", "sec"); err != nil {
		t.Fatalf("GetSecret: %v", err)
	}
	if _, err := r.m.GetSecret(ctx, "ns", "other"); !apierrors.IsNotFound(err) {
		t.Fatalf("GetSecret of a missing secret: %v, want NotFound", err)
	}
	if n := gets(client, "secrets"); n != 2 {
		t.Errorf("%d direct GETs, want 2", n)
	}
}

func TestObjectsAreWatchedWhileAPodReferencesThem(t *testing.T) {
	client := fake.NewClientset()
	r := newManager(t, client, true)
	a, b := podUsing("ns", "a", "shared", "sa"), podUsing("ns", "b", "shared", "")
	r.m.RegisterPod(a)
	r.m.RegisterPod(b)
	r.m.RegisterPod(b) // re-registering replaces, never double-counts
	if n := entryRefs(r.m.configMaps, "ns", "shared"); n != 2 {
		t.Fatalf("shared configMap has %d references, want 2", n)
	}
	synced(t, r.m.configMaps, "ns", "shared")
	r.m.UnregisterPod(a)
	if n := entryRefs(r.m.configMaps, "ns", "shared"); n != 1 {
		t.Errorf("after one pod left: %d references, want 1", n)
	}
	if n := entryRefs(r.m.secrets, "ns", "sa"); n != 0 {
		t.Errorf("secret of the pod that left: %d references, want 0", n)
	}
	// b now references another configMap: the old one is dropped.
	r.m.RegisterPod(podUsing("ns", "b", "other", ""))
	if n := entryRefs(r.m.configMaps, "ns", "shared"); n != 0 {
		t.Errorf("configMap no pod references: %d references, want 0", n)
	}
	r.m.UnregisterPod(b)
	r.m.UnregisterPod(b)
	r.m.configMaps.mu.Lock()
	n := len(r.m.configMaps.entries)
	r.m.configMaps.mu.Unlock()
	if n != 0 {
		t.Errorf("%d configMaps still watched, want 0", n)
	}
}

func TestImmutableObjectStopsBeingWatched(t *testing.T) {
	ctx := context.Background()
	yes := true
	cm := configMap("ns", "cm", map[string]string{"k": "v"})
	cm.Immutable = &yes
	client := fake.NewClientset(cm)
	r := newManager(t, client, true)
	r.m.RegisterPod(podUsing("ns", "p", "cm", ""))
	synced(t, r.m.configMaps, "ns", "cm")
	for i := 0; i < 2; i++ {
		if got, err := r.m.GetConfigMap(ctx, "ns", "cm"); err != nil || got.Data["k"] != "v" {
			t.Fatalf("GetConfigMap = %v, %v", got, err)
		}
	}
	r.m.configMaps.mu.Lock()
	e := r.m.configMaps.entries[objectKey{"ns", "cm"}]
	r.m.configMaps.mu.Unlock()
	if !e.immutable {
		t.Error("immutable configMap still watched")
	}
}

func TestRunRefusesASecondCall(t *testing.T) {
	r := newManager(t, fake.NewClientset(), true)
	until(t, "Run started", func() bool {
		r.m.mu.Lock()
		defer r.m.mu.Unlock()
		return r.m.running
	})
	if err := r.m.Run(context.Background()); err == nil {
		t.Error("second Run returned nil, want an error")
	}
}
