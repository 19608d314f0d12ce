package eviction

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestParseThresholds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want, err string
	}{
		{"the kubelet's defaults parse", DefaultHard, "imagefs.available<15%,imagefs.inodesFree<5%,memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%", ""},
		{"an empty list has no thresholds", "", "", ""},
		{"spaces around statements are allowed", " pid.available < 1k , imagefs.inodesFree<2.5%", "imagefs.inodesFree<2.5%,pid.available<1k", ""},
		{"an unknown signal is refused", "memory.free<1Gi", "", `unsupported eviction signal "memory.free"`},
		{"another operator is refused", "memory.available>1Gi", "", "the only operator is <"},
		{"a signal given twice is refused", "memory.available<1Gi,memory.available<2Gi", "", "given twice"},
		{"a percentage above 100 is refused", "nodefs.available<101%", "", "between 0% and 100%"},
		{"a negative quantity is refused", "memory.available<-1Mi", "", "must not be negative"},
		{"a bad quantity is refused", "memory.available<lots", "", "invalid quantity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseThresholds(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseThresholds(%q) error %v, want %q", tc.in, err, tc.err)
				}
				return
			}
			if err != nil || got.String() != tc.want {
				t.Fatalf("ParseThresholds(%q) = %q, %v; want %q", tc.in, got.String(), err, tc.want)
			}
		})
	}
}

func TestHardThresholdsMergeOverTheDefaults(t *testing.T) {
	t.Parallel()
	got, err := HardThresholds("memory.available<1Gi,pid.available<10%")
	if err != nil {
		t.Fatal(err)
	}
	if want := "imagefs.available<15%,imagefs.inodesFree<5%,memory.available<1Gi,nodefs.available<10%,nodefs.inodesFree<5%,pid.available<10%"; got.String() != want {
		t.Fatalf("HardThresholds = %q, want %q", got, want)
	}
	if none, err := HardThresholds("none"); err != nil || len(none) != 0 {
		t.Fatalf("HardThresholds(none) = %v, %v", none, err)
	}
	if def, _ := HardThresholds(""); def.String() != "imagefs.available<15%,imagefs.inodesFree<5%,memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%" {
		t.Fatalf("HardThresholds(\"\") = %q, want the defaults", def)
	}
}

func TestReservedForTakesMemoryAndNodefsThresholds(t *testing.T) {
	t.Parallel()
	th, err := ParseThresholds("memory.available<100Mi,nodefs.available<10%,imagefs.available<15%")
	if err != nil {
		t.Fatal(err)
	}
	got := th.ReservedFor(corev1.ResourceList{
		corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
		corev1.ResourceCPU: resource.MustParse("4"),
	})
	if len(got) != 2 || got.Memory().Value() != 100<<20 || got.StorageEphemeral().Value() != 10<<30 {
		t.Fatalf("ReservedFor = %v, want memory 100Mi and ephemeral-storage 10Gi", got)
	}
}

func TestDefaultHardHasTheKubeletsImageFsInodesThreshold(t *testing.T) {
	def, err := HardThresholds("")
	if err != nil {
		t.Fatal(err)
	}
	v, ok := def[SignalImageFsInodesFree]
	if !ok || v.Quantity != nil || v.Percentage != 0.05 {
		t.Fatalf("imagefs.inodesFree default = %+v, %v; want 5%% as the kubelet's", v, ok)
	}
}
