package http

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/nodekit/nodekit/sources/file"
)

// maxListPods is the most pods a PodList at the URL may hold; a longer
// list is refused whole, as an invalid pod would be. A node runs 110 pods
// by default (the kubelet's maxPods) and dense nodes a few hundred, so 1,000
// static pods from one URL is beyond any real use, while the body cap
// (10 MiB) alone would let a list of tiny pods become tens of thousands of
// pods, each with its own pod worker.
const maxListPods = 1000

// listHead is what tells a PodList from a Pod.
type listHead struct {
	Kind  string            `json:"kind"`
	Items []json.RawMessage `json:"items"`
}

// decode reads a Pod or a PodList, YAML or JSON, from data served at url
// and turns every pod into the static pod nodeName runs, with the manifest
// directory's checks and defaults (file.URLPod). One invalid pod fails the
// whole document, as in the kubelet, so that the last good pods stand; so
// does a list of more than 1,000 pods (maxListPods).
// ignored lists the fields decoding ignored, prefixed with the pod's
// index in a list. The caller owns the pods.
func decode(data []byte, url, nodeName string) (pods []*corev1.Pod, ignored []string, err error) {
	js := bytes.TrimSpace(data)
	if len(js) == 0 {
		return nil, nil, errors.New("the URL served an empty document")
	}
	if js[0] != '{' {
		if js, err = yaml.YAMLToJSON(data); err != nil {
			return nil, nil, fmt.Errorf("parse YAML: %w", err)
		}
	}
	var head listHead
	if err := json.Unmarshal(js, &head); err != nil {
		return nil, nil, fmt.Errorf("decode: %w", err)
	}
	docs := [][]byte{js}
	isList := head.Kind == "PodList" || head.Kind == "List" || (head.Kind == "" && head.Items != nil)
	if isList && len(head.Items) > maxListPods {
		return nil, nil, fmt.Errorf("the list has %d pods, more than the limit of %d", len(head.Items), maxListPods)
	}
	if isList {
		docs = docs[:0]
		for _, item := range head.Items {
			docs = append(docs, item)
		}
	}
	pods = make([]*corev1.Pod, 0, len(docs))
	for i, doc := range docs {
		decoded, fields, err := file.DecodePod(doc)
		if err == nil {
			var pod *corev1.Pod
			if pod, err = file.URLPod(decoded, url, nodeName); err == nil {
				pods = append(pods, pod)
			}
		}
		where := ""
		if isList {
			where = fmt.Sprintf("items[%d].", i)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%spod: %w", where, err)
		}
		for _, f := range fields {
			ignored = append(ignored, where+f)
		}
	}
	return pods, ignored, nil
}
