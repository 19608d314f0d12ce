package cri

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

func TestRecursiveReadOnlyFollowsTheKubeletsRules(t *testing.T) {
	mode := func(m corev1.RecursiveReadOnlyMode) *corev1.RecursiveReadOnlyMode { return &m }
	prop := func(p corev1.MountPropagationMode) *corev1.MountPropagationMode { return &p }
	cases := []struct {
		name      string
		vm        corev1.VolumeMount
		supported bool
		want      bool
		wantErr   string
	}{
		{"unset", corev1.VolumeMount{ReadOnly: true}, true, false, ""},
		{"Disabled", corev1.VolumeMount{ReadOnly: true, RecursiveReadOnly: mode(corev1.RecursiveReadOnlyDisabled)}, true, false, ""},
		{"Disabled and not read-only", corev1.VolumeMount{RecursiveReadOnly: mode(corev1.RecursiveReadOnlyDisabled)}, true, false, ""},
		{"IfPossible, supported", corev1.VolumeMount{ReadOnly: true, RecursiveReadOnly: mode(corev1.RecursiveReadOnlyIfPossible)}, true, true, ""},
		{"IfPossible, unsupported", corev1.VolumeMount{ReadOnly: true, RecursiveReadOnly: mode(corev1.RecursiveReadOnlyIfPossible)}, false, false, ""},
		{"Enabled, supported", corev1.VolumeMount{ReadOnly: true, RecursiveReadOnly: mode(corev1.RecursiveReadOnlyEnabled)}, true, true, ""},
		{"Enabled, unsupported", corev1.VolumeMount{ReadOnly: true, RecursiveReadOnly: mode(corev1.RecursiveReadOnlyEnabled)}, false, false, "does not support recursive read-only mounts"},
		{"Enabled with propagation None", corev1.VolumeMount{ReadOnly: true, RecursiveReadOnly: mode(corev1.RecursiveReadOnlyEnabled), MountPropagation: prop(corev1.MountPropagationNone)}, true, true, ""},
		{"IfPossible, not read-only", corev1.VolumeMount{RecursiveReadOnly: mode(corev1.RecursiveReadOnlyIfPossible)}, true, false, "needs readOnly: true"},
		{"Enabled, not read-only", corev1.VolumeMount{RecursiveReadOnly: mode(corev1.RecursiveReadOnlyEnabled)}, true, false, "needs readOnly: true"},
		{"IfPossible with propagation", corev1.VolumeMount{ReadOnly: true, RecursiveReadOnly: mode(corev1.RecursiveReadOnlyIfPossible), MountPropagation: prop(corev1.MountPropagationHostToContainer)}, true, false, "does not go with mountPropagation HostToContainer"},
		{"an unknown mode", corev1.VolumeMount{ReadOnly: true, RecursiveReadOnly: mode("Sometimes")}, true, false, `unknown recursiveReadOnly mode "Sometimes"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := recursiveReadOnly(c.vm, c.supported)
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("err = %v, want %q", err, c.wantErr)
			}
			if got != c.want {
				t.Fatalf("recursive read-only = %t, want %t", got, c.want)
			}
		})
	}
}

// TestRecursiveReadOnlyReachesTheRuntimeWhenItsHandlerSupportsIt runs
// SyncPod against a runtime whose handler reports the feature or not.
func TestRecursiveReadOnlyReachesTheRuntimeWhenItsHandlerSupportsIt(t *testing.T) {
	rro := func(name string, ok bool) *runtimeapi.RuntimeHandler {
		return &runtimeapi.RuntimeHandler{Name: name, Features: &runtimeapi.RuntimeHandlerFeatures{RecursiveReadOnlyMounts: ok}}
	}
	cases := []struct {
		name     string
		handlers []*runtimeapi.RuntimeHandler
		mode     corev1.RecursiveReadOnlyMode
		want     bool
		wantErr  string
	}{
		{"Enabled, supported", []*runtimeapi.RuntimeHandler{rro("", true)}, corev1.RecursiveReadOnlyEnabled, true, ""},
		{"IfPossible, supported", []*runtimeapi.RuntimeHandler{rro("", true)}, corev1.RecursiveReadOnlyIfPossible, true, ""},
		{"IfPossible, unsupported", []*runtimeapi.RuntimeHandler{rro("", false)}, corev1.RecursiveReadOnlyIfPossible, false, ""},
		{"IfPossible, the handler is not reported", []*runtimeapi.RuntimeHandler{rro("runc", true)}, corev1.RecursiveReadOnlyIfPossible, false, ""},
		{"Enabled, unsupported", []*runtimeapi.RuntimeHandler{rro("", false)}, corev1.RecursiveReadOnlyEnabled, false,
			`container "a": volumeMount "cfg" at /cfg: recursiveReadOnly is Enabled, but the runtime handler does not support recursive read-only mounts`},
		{"Enabled, no handlers reported", nil, corev1.RecursiveReadOnlyEnabled, false, "does not support recursive read-only mounts"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.m.rs = &handlerRuntime{recordingRuntime: e.rs, handlers: c.handlers}
			vols := &fakeVolumes{}
			e.m.SetVolumeGetter(vols)
			pod := newPod("u1", "a")
			pod.Spec.Volumes = []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}}}
			vols.set(pod.UID, map[string]noderuntime.Volume{"cfg": {HostPath: t.TempDir(), Dir: true}})
			pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "cfg", MountPath: "/cfg", ReadOnly: true, RecursiveReadOnly: &c.mode}}
			res := e.sync(t, pod)
			if c.wantErr != "" {
				step := failedSteps(res)["StartContainer/a"]
				if !errors.Is(step.Err, noderuntime.ErrConfig) || !strings.Contains(step.Message, c.wantErr) {
					t.Fatalf("StartContainer: %v %q, want ErrConfig with %q", step.Err, step.Message, c.wantErr)
				}
				return
			}
			if err := res.Error(); err != nil {
				t.Fatal(err)
			}
			m := mountsByPath(e.rs.lastContainerConfig(t))["/cfg"]
			if m.GetRecursiveReadOnly() != c.want || !m.GetReadonly() {
				t.Fatalf("mount %v, want read-only, recursive %t", m, c.want)
			}
		})
	}
}
