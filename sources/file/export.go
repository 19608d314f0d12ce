package file

import (
	corev1 "k8s.io/api/core/v1"
)

// DecodePod decodes one pod manifest, YAML or JSON, as the manifest
// directory does: fields the Pod type does not have and fields given twice
// do not fail decoding; their paths come back in ignored (a duplicate one
// prefixed "duplicate "). The pod is as written, with no defaults. Other
// sources of static pods (the HTTP source) use it to read manifests as the
// files are read.
func DecodePod(data []byte) (pod *corev1.Pod, ignored []string, err error) {
	pod, issues, err := decode(data)
	if err != nil {
		return nil, nil, err
	}
	for _, is := range issues {
		if is.duplicate {
			ignored = append(ignored, "duplicate "+is.path)
		} else {
			ignored = append(ignored, is.path)
		}
	}
	return pod, ignored, nil
}

// URLPod turns a pod decoded from the manifest at url into the static pod
// nodeName runs, with the same checks and defaults as a manifest file (see
// the package doc): the name "<name>-<lowercase node>", namespace
// "default" if unset, the node name, the config.hash annotation, a
// toleration of every NoExecute taint, phase Pending, the API server's
// defaults and validation. Its UID, unless the manifest sets one, is the
// hex MD5 of "url:<url>" and the decoded pod, as the kubelet's HTTP source
// derives it (the node is not part of it, unlike a file's). decoded is not
// changed; the caller owns the result.
func URLPod(decoded *corev1.Pod, url, nodeName string) (*corev1.Pod, error) {
	if err := checkManifest(decoded); err != nil {
		return nil, err
	}
	pod, err := completePod(decoded, "url:"+url, nodeName)
	if err != nil {
		return nil, err
	}
	if err := validate(pod); err != nil {
		return nil, err
	}
	return pod, nil
}
