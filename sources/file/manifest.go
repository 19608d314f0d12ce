package file

import (
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
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

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

// validate checks what the agent relies on in a manifest: a Pod (if kind
// and apiVersion are given), a name, at least one container, container
// names that are unique DNS labels and images. It reports every problem.
func validate(pod *corev1.Pod) error {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	if k := pod.Kind; k != "" && k != "Pod" {
		add("kind is %q, want Pod", k)
	}
	if v := pod.APIVersion; v != "" && v != "v1" {
		add("apiVersion is %q, want v1", v)
	}
	if pod.Name == "" {
		add("metadata.name is required")
	}
	if ns := pod.Namespace; ns != "" {
		for _, msg := range validation.IsDNS1123Label(ns) {
			add("metadata.namespace %q: %s", ns, msg)
		}
	}
	if len(pod.Spec.Containers) == 0 {
		add("spec.containers: at least one container is required")
	}
	names := map[string]bool{}
	check := func(field string, cs []corev1.Container) {
		for i, c := range cs {
			at := fmt.Sprintf("%s[%d]", field, i)
			switch {
			case c.Name == "":
				add("%s.name is required", at)
			case names[c.Name]:
				add("%s.name: duplicate container name %q", at, c.Name)
			default:
				for _, msg := range validation.IsDNS1123Label(c.Name) {
					add("%s.name %q: %s", at, c.Name, msg)
				}
			}
			names[c.Name] = true
			if strings.TrimSpace(c.Image) == "" {
				add("%s.image is required", at)
			}
		}
	}
	check("spec.initContainers", pod.Spec.InitContainers)
	check("spec.containers", pod.Spec.Containers)
	if len(errs) > 0 {
		return fmt.Errorf("invalid pod manifest: %s", strings.Join(errs, "; "))
	}
	return nil
}

// staticPod turns the pod decoded from the manifest at path into the
// static pod this node runs, as the kubelet's applyDefaults does: a UID
// derived from node, path and content (unless the manifest sets one), the
// name "<name>-<lowercase node>", namespace "default" if unset, the node
// name, the config.hash annotation, a toleration of every NoExecute taint,
// phase Pending and the API server's defaults. decoded is not changed.
func staticPod(decoded *corev1.Pod, path, nodeName string) (*corev1.Pod, error) {
	pod := decoded.DeepCopy()
	pod.TypeMeta = metav1.TypeMeta{}
	if pod.UID == "" {
		uid, err := podUID(decoded, path, nodeName)
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

// podUID is the hex MD5 (as the kubelet's) of "host:<node>", "file:<path>"
// and the pod as decoded, so that an edit to the manifest's content gives a
// new UID and the agent replaces the pod, while reformatting or comments do
// not.
func podUID(decoded *corev1.Pod, path, nodeName string) (types.UID, error) {
	content, err := json.Marshal(decoded)
	if err != nil {
		return "", fmt.Errorf("hash pod %q from %s: %w", decoded.Name, path, err)
	}
	h := md5.New()
	fmt.Fprintf(h, "host:%s", nodeName)
	fmt.Fprintf(h, "file:%s", path)
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
