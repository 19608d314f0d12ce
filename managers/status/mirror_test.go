package status

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/nodekit/nodekit/sources"
)

func node1() *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node1", UID: "node-uid"}}
}

func staticPod() *corev1.Pod {
	p := apiPod("etcd-node1", "static-uid")
	p.ResourceVersion = "7"
	p.Labels = map[string]string{"tier": "control-plane"}
	p.Annotations = map[string]string{sources.AnnotationHash: "abc123", sources.AnnotationSource: sources.FileSource}
	return p
}

func TestCreateMirrorPod(t *testing.T) {
	client := fake.NewClientset(node1())
	mc := NewMirrorClient(client, logr.Discard(), Config{NodeName: "node1"})
	static := staticPod()
	if err := mc.CreateMirrorPod(context.Background(), static); err != nil {
		t.Fatal(err)
	}
	var created *corev1.Pod
	for _, a := range client.Actions() {
		if c, ok := a.(k8stesting.CreateActionImpl); ok {
			created = c.GetObject().(*corev1.Pod)
		}
	}
	if created == nil {
		t.Fatal("no pod created")
	}
	if got := created.Annotations[sources.AnnotationMirror]; got != "abc123" {
		t.Errorf("mirror annotation = %q, want the config hash abc123", got)
	}
	if created.UID != "" || created.ResourceVersion != "" {
		t.Errorf("uid, resourceVersion = %q, %q; want both empty", created.UID, created.ResourceVersion)
	}
	if created.Labels["tier"] != "control-plane" || created.Spec.Containers[0].Name != "c" {
		t.Errorf("mirror pod lost the static pod's labels or spec: %+v", created)
	}
	want := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "node1", UID: "node-uid", Controller: ptr.To(true)}}
	if len(created.OwnerReferences) != 1 || created.OwnerReferences[0].String() != want[0].String() {
		t.Errorf("owner references = %v, want %v", created.OwnerReferences, want)
	}
	if _, ok := static.Annotations[sources.AnnotationMirror]; ok || static.ResourceVersion != "7" {
		t.Error("CreateMirrorPod modified the static pod")
	}
}

func TestCreateMirrorPodFailures(t *testing.T) {
	tests := []struct {
		name     string
		nodeName string
		objects  []apiruntime.Object
		pod      func() *corev1.Pod
		want     string
	}{
		{
			name: "a static pod without a config hash is refused", nodeName: "node1", objects: []apiruntime.Object{node1()},
			pod:  func() *corev1.Pod { p := staticPod(); delete(p.Annotations, sources.AnnotationHash); return p },
			want: "annotation",
		},
		{
			name: "a client without a node name is refused", objects: []apiruntime.Object{node1()},
			pod: staticPod, want: "node name",
		},
		{
			name: "a node that cannot be read fails the create", nodeName: "node1",
			pod: staticPod, want: "get node",
		},
		{
			name: "a mirror pod of another hash under the name is an error", nodeName: "node1",
			objects: []apiruntime.Object{node1(), func() *corev1.Pod {
				p := apiPod("etcd-node1", "old-mirror")
				p.Annotations = map[string]string{sources.AnnotationMirror: "old-hash"}
				return p
			}()},
			pod: staticPod, want: "already exists",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mc := NewMirrorClient(fake.NewClientset(tt.objects...), logr.Discard(), Config{NodeName: tt.nodeName})
			err := mc.CreateMirrorPod(context.Background(), tt.pod())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("CreateMirrorPod = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestCreateMirrorPodThatExistsWithTheSameHash(t *testing.T) {
	existing := apiPod("etcd-node1", "mirror-uid")
	existing.Annotations = map[string]string{sources.AnnotationMirror: "abc123"}
	mc := NewMirrorClient(fake.NewClientset(node1(), existing), logr.Discard(), Config{NodeName: "node1"})
	if err := mc.CreateMirrorPod(context.Background(), staticPod()); err != nil {
		t.Fatalf("CreateMirrorPod = %v, want nil for an up-to-date mirror pod", err)
	}
}

func TestDeleteMirrorPod(t *testing.T) {
	uid := types.UID("mirror-uid")
	tests := []struct {
		name        string
		fullName    string
		uid         *types.UID
		reactErr    error
		wantDeleted bool
		wantErr     bool
	}{
		{name: "a mirror pod is deleted with grace 0 and its UID as precondition", fullName: "etcd-node1_default", uid: &uid, wantDeleted: true},
		{name: "without a UID no precondition is sent", fullName: "etcd-node1_default", wantDeleted: true},
		{name: "a missing mirror pod is no error", fullName: "gone_default", uid: &uid},
		{name: "a mirror pod with another UID is no error", fullName: "etcd-node1_default", uid: &uid, reactErr: apierrors.NewConflict(podsResource, "etcd-node1", errors.New("uid precondition failed"))},
		{name: "a server error is returned", fullName: "etcd-node1_default", uid: &uid, reactErr: errors.New("connection refused"), wantErr: true},
		{name: "a name without namespace is refused", fullName: "etcd-node1", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mirror := apiPod("etcd-node1", uid)
			client := fake.NewClientset(mirror)
			if tt.reactErr != nil {
				client.PrependReactor("delete", "pods", func(k8stesting.Action) (bool, apiruntime.Object, error) {
					return true, nil, tt.reactErr
				})
			}
			mc := NewMirrorClient(client, logr.Discard(), Config{NodeName: "node1"})
			deleted, err := mc.DeleteMirrorPod(context.Background(), tt.fullName, tt.uid)
			if deleted != tt.wantDeleted || (err != nil) != tt.wantErr {
				t.Fatalf("DeleteMirrorPod = %v, %v; want %v, error %v", deleted, err, tt.wantDeleted, tt.wantErr)
			}
			for _, a := range client.Actions() {
				d, ok := a.(k8stesting.DeleteActionImpl)
				if !ok {
					continue
				}
				opts := d.GetDeleteOptions()
				if opts.GracePeriodSeconds == nil || *opts.GracePeriodSeconds != 0 {
					t.Errorf("grace period = %v, want 0", opts.GracePeriodSeconds)
				}
				switch {
				case tt.uid == nil && opts.Preconditions != nil:
					t.Errorf("preconditions = %+v, want none", opts.Preconditions)
				case tt.uid != nil && (opts.Preconditions == nil || *opts.Preconditions.UID != uid):
					t.Errorf("preconditions = %+v, want UID %s", opts.Preconditions, uid)
				}
			}
		})
	}
}
