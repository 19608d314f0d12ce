package main

import (
	"os"
	"testing"
)

func TestModuleOf(t *testing.T) {
	mods := []string{"k8s.io/apiserver", "gopkg.in/yaml.v3", "k8s.io/api", "github.com/nodekit/nodekit"}
	for name, want := range map[string]string{
		"k8s.io/api/core/v1.(*Pod).DeepCopy":             "k8s.io/api",
		"k8s.io/apiserver/pkg/server.(*Config).Complete": "k8s.io/apiserver",
		"type:.eq.k8s.io/api/core/v1.PodSpec":            "k8s.io/api",
		"gopkg.in/yaml.v3.Unmarshal":                     "gopkg.in/yaml.v3",
		"k8s.io/apix/foo.Bar":                            "std", // not k8s.io/api: another path
		"runtime.mallocgc":                               "std",
		"main.main":                                      "github.com/nodekit/nodekit",
	} {
		if got := moduleOf(name, mods, "github.com/nodekit/nodekit"); got != want {
			t.Errorf("moduleOf(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestRodataModuleOf(t *testing.T) {
	mods := []string{"k8s.io/api", "github.com/nodekit/nodekit"}
	for name, want := range map[string]string{
		"type:*k8s.io/api/core/v1.Pod":   "k8s.io/api",
		"type:[]k8s.io/api/core/v1.Pod":  "k8s.io/api",
		"type:*http.Request":             "std",
		"type:.namedata.*v1.Pod.":        "strings and tables",
		"go:string.*":                    "strings and tables",
		"runtime.findfunctab":            "strings and tables",
		"k8s.io/api/core/v1..stmp_0":     "k8s.io/api",
		"github.com/nodekit/nodekit.ver": "github.com/nodekit/nodekit",
	} {
		if got := rodataModuleOf(name, mods, "github.com/nodekit/nodekit"); got != want {
			t.Errorf("rodataModuleOf(%q) = %q, want %q", name, got, want)
		}
	}
}

// The test binary's own resident pages: its .text is partly resident
// (it runs), never more than the section, and the functions on those
// pages are at most the resident bytes.
func TestResidentOfOwnBinary(t *testing.T) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Skip("no /proc/self/exe:", err)
	}
	info, err := readBinary(exe)
	if err != nil {
		t.Fatal(err)
	}
	r, err := residentOf(os.Getpid(), exe, info)
	if err != nil {
		t.Fatal(err)
	}
	text := r.sections[".text"]
	if text == 0 || text > r.section[".text"] {
		t.Fatalf("resident .text %d of %d bytes", text, r.section[".text"])
	}
	var funcs uint64
	for _, b := range r.text {
		funcs += b
	}
	if funcs == 0 || funcs > text || r.text["std"] == 0 {
		t.Fatalf("functions on resident pages: %d bytes (std %d) of %d resident", funcs, r.text["std"], text)
	}
}
