package file

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/klog/v2"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/nodekit/nodekit/internal/podvalidation"
	"github.com/nodekit/nodekit/sources"
)

// fieldIssue is a field of a manifest that decoding ignored.
type fieldIssue struct {
	// path is the field's path, like "spec.containers[0].foo".
	path string
	// duplicate is true for a field given twice, false for an unknown one.
	duplicate bool
}

// decode parses one manifest, YAML or JSON, into a pod. Fields the Pod type
// does not have, and fields given twice, do not fail decoding (as with
// kubectl's warnings): they come back as issues. The pod is as written, with
// no defaults.
func decode(data []byte) (*corev1.Pod, []fieldIssue, error) {
	trimmed := bytes.TrimSpace(data)
	js := trimmed
	if !bytes.HasPrefix(trimmed, []byte("{")) {
		var err error
		if js, err = yaml.YAMLToJSON(data); err != nil {
			return nil, nil, fmt.Errorf("parse YAML: %w", err)
		}
	}
	if len(js) == 0 || string(js) == "null" {
		return nil, nil, errors.New("manifest is empty")
	}
	pod := &corev1.Pod{}
	strict, err := kjson.UnmarshalStrict(js, pod)
	if err != nil {
		return nil, nil, fmt.Errorf("decode pod: %w", err)
	}
	var issues []fieldIssue
	for _, e := range strict {
		var fe kjson.FieldError
		if !errors.As(e, &fe) {
			continue
		}
		issues = append(issues, fieldIssue{
			path:      fe.FieldPath(),
			duplicate: strings.HasPrefix(e.Error(), "duplicate field"),
		})
	}
	return pod, issues, nil
}

// checkManifest checks what a manifest must be before it becomes a static
// pod: a Pod (if kind and apiVersion are given) with a name. The rest is
// checked on the static pod, as the API server would check it
// (podvalidation.Validate).
func checkManifest(pod *corev1.Pod) error {
	var errs field.ErrorList
	if k := pod.Kind; k != "" && k != "Pod" {
		errs = append(errs, field.NotSupported(field.NewPath("kind"), k, []string{"Pod"}))
	}
	if v := pod.APIVersion; v != "" && v != "v1" {
		errs = append(errs, field.NotSupported(field.NewPath("apiVersion"), v, []string{"v1"}))
	}
	if pod.Name == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "name"), ""))
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid pod manifest: %s", podvalidation.Summary(errs))
	}
	return nil
}

// validate checks a static pod as the API server checks a pod create
// (with nodekit's count limits and a UID that is one path element), and as
// the kubelet checks a static pod: no reference to an API object. The
// error names the pod and every field at fault.
func validate(pod *corev1.Pod) error {
	errs := podvalidation.Validate(pod)
	errs = append(errs, podvalidation.StaticPodReferences(pod)...)
	if len(errs) > 0 {
		return fmt.Errorf("invalid pod manifest: pod %s: %s", klog.KObj(pod), podvalidation.Summary(errs))
	}
	return nil
}

// extraDocuments counts the non-empty YAML documents after the first one:
// like the kubelet, the source reads only the first document of a file.
func extraDocuments(data []byte) int {
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		return 0
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	if _, err := r.Read(); err != nil {
		return 0 // the first document, read by decode, is not converted again
	}
	n := 0
	for {
		doc, err := r.Read()
		if err != nil {
			break
		}
		if js, err := yaml.YAMLToJSON(doc); err != nil || (len(bytes.TrimSpace(js)) > 0 && string(js) != "null") {
			n++
		}
	}
	return n
}

// staticPod turns the pod decoded from the manifest at path into the
// static pod this node runs, as the kubelet's applyDefaults does: a UID
// derived from node, path and content (unless the manifest sets one), the
// name "<name>-<lowercase node>", namespace "default" if unset, the node
// name, the config.hash annotation, a toleration of every NoExecute taint,
// phase Pending and the API server's defaults. decoded is not changed.
func staticPod(decoded *corev1.Pod, path, nodeName string) (*corev1.Pod, error) {
	return completePod(decoded, fmt.Sprintf("host:%sfile:%s", nodeName, path), nodeName)
}

// completePod is staticPod with origin, the text that goes into the UID
// hash after the node and the pod's source, given whole.
func completePod(decoded *corev1.Pod, origin, nodeName string) (*corev1.Pod, error) {
	pod := decoded.DeepCopy()
	pod.TypeMeta = metav1.TypeMeta{}
	if pod.UID == "" {
		uid, err := podUID(decoded, origin)
		if err != nil {
			return nil, err
		}
		pod.UID = uid
	}
	pod.Name = decoded.Name + "-" + strings.ToLower(nodeName)
	if msgs := validation.IsDNS1123Subdomain(pod.Name); len(msgs) > 0 {
		return nil, fmt.Errorf("invalid pod manifest: pod name %q (metadata.name and node name): %s",
			pod.Name, strings.Join(msgs, "; "))
	}
	if pod.Namespace == "" {
		pod.Namespace = metav1.NamespaceDefault
	}
	pod.SelfLink = ""
	pod.Spec.NodeName = nodeName
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[sources.AnnotationHash] = string(pod.UID)
	tolerateNoExecute(pod)
	setDefaults(pod)
	pod.Status.Phase = corev1.PodPending
	return pod, nil
}

// podUID is the hex MD5 (as the kubelet's) of origin ("host:<node>" and
// "file:<path>" for a file, "url:<url>" for a manifest URL) and the pod as
// decoded, so that an edit to the manifest's content gives a new UID and
// the agent replaces the pod, while reformatting or comments do not.
func podUID(decoded *corev1.Pod, origin string) (types.UID, error) {
	content, err := json.Marshal(decoded)
	if err != nil {
		return "", fmt.Errorf("hash pod %q from %s: %w", decoded.Name, origin, err)
	}
	h := md5.New()
	fmt.Fprint(h, origin)
	h.Write(content)
	return types.UID(hex.EncodeToString(h.Sum(nil))), nil
}

// tolerateNoExecute makes the pod tolerate every NoExecute taint, so that
// node problems never evict a static pod. An existing toleration of the
// same kind is replaced.
func tolerateNoExecute(pod *corev1.Pod) {
	all := corev1.Toleration{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}
	for i, t := range pod.Spec.Tolerations {
		if t.Key == "" && t.Operator == all.Operator && t.Effect == all.Effect {
			pod.Spec.Tolerations[i] = all
			return
		}
	}
	pod.Spec.Tolerations = append(pod.Spec.Tolerations, all)
}
