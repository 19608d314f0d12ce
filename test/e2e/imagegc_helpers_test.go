//go:build e2e

package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	apiruntime "k8s.io/apimachinery/pkg/runtime"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	noderuntime "github.com/nodekit/nodekit/runtime"
)

// busyboxArchive is the OCI archive hack/containerd-up.sh imports as the
// test image (hack/lib.sh: $NODEKIT_CACHE/images/busybox.oci.tar).
func busyboxArchive() string {
	cache := os.Getenv("NODEKIT_CACHE")
	if cache == "" {
		cache = "/var/cache/nodekit"
	}
	return filepath.Join(cache, "images", "busybox.oci.tar")
}

// ctrCmd runs ctr against the shared containerd's k8s.io namespace.
func ctrCmd(t *testing.T, env testEnv, args ...string) {
	t.Helper()
	ctr := os.Getenv("NODEKIT_CTR")
	if ctr == "" {
		vars, err := readEnvFile(envFile)
		if err != nil {
			t.Fatal(err)
		}
		ctr = vars["NODEKIT_CTR"]
	}
	if ctr == "" {
		ctr = "ctr"
	}
	sock := strings.TrimPrefix(env.Endpoint, "unix://")
	out, err := exec.Command(ctr, append([]string{"-a", sock, "-n", "k8s.io"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("ctr %v: %v\n%s", args, err, out)
	}
}

// importCopies imports the busybox archive once per name, each with a
// config of its own (a label naming it), so each is a distinct image ID
// that shares busybox's layer. The images are removed when the test ends.
func importCopies(t *testing.T, env testEnv, names map[string]string) {
	t.Helper()
	blobs, manifest, config := readOCIArchive(t, busyboxArchive())
	for _, name := range names {
		var cfg map[string]any
		if err := json.Unmarshal(config, &cfg); err != nil {
			t.Fatal(err)
		}
		c, _ := cfg["config"].(map[string]any)
		if c == nil {
			c = map[string]any{}
			cfg["config"] = c
		}
		labels, _ := c["Labels"].(map[string]any)
		if labels == nil {
			labels = map[string]any{}
		}
		labels["io.nodekit.e2e.image"] = name
		c["Labels"] = labels
		newConfig := mustJSON(t, cfg)
		var m map[string]any
		if err := json.Unmarshal(manifest, &m); err != nil {
			t.Fatal(err)
		}
		m["config"].(map[string]any)["digest"] = digest(newConfig)
		m["config"].(map[string]any)["size"] = len(newConfig)
		newManifest := mustJSON(t, m)
		index := mustJSON(t, map[string]any{
			"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
			"manifests": []any{map[string]any{
				"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": digest(newManifest), "size": len(newManifest),
				"annotations": map[string]string{"io.containerd.image.name": name, "org.opencontainers.image.ref.name": "1"},
				"platform":    map[string]string{"architecture": "amd64", "os": "linux"},
			}},
		})
		files := map[string][]byte{"oci-layout": []byte(`{"imageLayoutVersion":"1.0.0"}`), "index.json": index}
		for d, b := range blobs {
			files["blobs/sha256/"+d] = b
		}
		files["blobs/sha256/"+strings.TrimPrefix(digest(newConfig), "sha256:")] = newConfig
		files["blobs/sha256/"+strings.TrimPrefix(digest(newManifest), "sha256:")] = newManifest
		path := filepath.Join(t.TempDir(), "image.tar")
		writeTar(t, path, files)
		ctrCmd(t, env, "images", "import", path)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_ = env.conn.is.RemoveImage(ctx, &runtimeapi.ImageSpec{Image: name})
		})
		waitImage(t, env, name, func(*runtimeapi.Image) bool { return true })
	}
}

// readOCIArchive returns the layer blobs (by hex digest), the manifest and
// the config of a one-image OCI archive.
func readOCIArchive(t *testing.T, path string) (layers map[string][]byte, manifest, config []byte) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("the busybox archive: %v", err)
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[hdr.Name] = b
		}
	}
	var index struct {
		Manifests []struct{ Digest string } `json:"manifests"`
	}
	if err := json.Unmarshal(files["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("index.json of %s: %v (%d manifests)", path, err, len(index.Manifests))
	}
	blob := func(d string) []byte { return files["blobs/sha256/"+strings.TrimPrefix(d, "sha256:")] }
	manifest = blob(index.Manifests[0].Digest)
	var m struct {
		Config struct{ Digest string }   `json:"config"`
		Layers []struct{ Digest string } `json:"layers"`
	}
	if err := json.Unmarshal(manifest, &m); err != nil {
		t.Fatal(err)
	}
	layers = map[string][]byte{}
	for _, l := range m.Layers {
		layers[strings.TrimPrefix(l.Digest, "sha256:")] = blob(l.Digest)
	}
	return layers, manifest, blob(m.Config.Digest)
}

func writeTar(t *testing.T, path string, files map[string][]byte) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for name, b := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// waitImage polls CRI until the image is listed and satisfies cond (CRI
// learns of ctr's changes asynchronously).
func waitImage(t *testing.T, env testEnv, name string, cond func(*runtimeapi.Image) bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		st, err := env.conn.is.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: name}, false)
		cancel()
		if err == nil && st.GetImage() != nil && cond(st.GetImage()) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("image %s: not as expected within 2 minutes (err %v, image %v)", name, err, st.GetImage())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func imagePresent(t *testing.T, env testEnv, name string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := env.conn.is.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: name}, false)
	if err != nil {
		t.Fatalf("image status %s: %v", name, err)
	}
	return st.GetImage() != nil
}

func hasPrefixTag(img *runtimeapi.Image, prefix string) bool {
	for _, tag := range img.GetRepoTags() {
		if strings.HasPrefix(tag, prefix) {
			return true
		}
	}
	return false
}

// removeSandboxes stops and removes the agent's sandboxes of one pod (by
// full pod name), taking their containers with them.
func removeSandboxes(t *testing.T, h *agentHarness, podName string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rs := h.env.runtime(t)
	deadline := time.Now().Add(time.Minute)
	for {
		// Wait for the agent to have stopped the pod, so it does not
		// restart what is removed.
		pods, err := h.pods()
		gone := err == nil
		for _, p := range pods {
			gone = gone && p.Name != podName
		}
		if gone || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	sbs, err := rs.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{noderuntime.LabelInstance: h.node}})
	if err != nil {
		t.Fatal(err)
	}
	for _, sb := range sbs {
		if sb.GetMetadata().GetName() != podName {
			continue
		}
		if err := rs.StopPodSandbox(ctx, sb.Id); err != nil {
			t.Logf("stop sandbox %s: %v", sb.Id, err)
		}
		if err := rs.RemovePodSandbox(ctx, sb.Id); err != nil {
			t.Logf("remove sandbox %s: %v", sb.Id, err)
		}
	}
}

// waitNoContainer polls until no container of the runtime uses the image,
// calling retry between polls.
func waitNoContainer(t *testing.T, env testEnv, image string, retry func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	st, err := env.conn.is.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: image}, false)
	if err != nil || st.GetImage() == nil {
		t.Fatalf("image %s: %v", image, err)
	}
	id := st.GetImage().GetId()
	for deadline := time.Now().Add(2 * time.Minute); ; {
		cs, err := env.conn.rs.ListContainers(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		used := false
		for _, c := range cs {
			used = used || c.GetImageRef() == id || c.GetImage().GetImage() == image
		}
		if !used {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("containers still use %s", image)
		}
		time.Sleep(200 * time.Millisecond)
		retry()
	}
}

// eventLog is an event recorder that keeps every event.
type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (e *eventLog) Eventf(_ apiruntime.Object, eventType, reason, messageFmt string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, eventType+" "+reason+": "+fmt.Sprintf(messageFmt, args...))
}

func (e *eventLog) has(reason, text string) bool {
	for _, ev := range e.all() {
		if strings.Contains(ev, " "+reason+": ") && strings.Contains(ev, text) {
			return true
		}
	}
	return false
}

func (e *eventLog) all() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.events...)
}
