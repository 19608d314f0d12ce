package cri

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"path"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// SecretGetter reads the Secrets that pods name in imagePullSecrets. nodekit
// provides one backed by its Kubernetes client when a kubeconfig is set (a
// node's own credentials may read the secrets its pods reference).
// Implementations must be safe for concurrent use.
type SecretGetter interface {
	// GetSecret returns the named Secret of namespace. The caller must not
	// modify it.
	GetSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
}

// The default registry's names in docker config files and image names.
const (
	defaultRegistryHost = "index.docker.io"
	dockerHubDomain     = "docker.io"
)

// dockerConfigEntry is one registry's credentials in a docker config file.
type dockerConfigEntry struct {
	Username      string `json:"username,omitempty"`
	Password      string `json:"password,omitempty"`
	Auth          string `json:"auth,omitempty"`
	IdentityToken string `json:"identitytoken,omitempty"`
	RegistryToken string `json:"registrytoken,omitempty"`
}

// keyring holds registry credentials by key ("host[:port][/path]") and
// finds those that apply to an image, as the kubelet's credential provider
// keyring does.
type keyring struct {
	creds map[string][]*runtimeapi.AuthConfig
}

// addSecret adds the credentials of a kubernetes.io/dockerconfigjson
// (.dockerconfigjson, {"auths": {...}}) or kubernetes.io/dockercfg
// (.dockercfg, {...}) secret.
func (k *keyring) addSecret(s *corev1.Secret) error {
	var entries map[string]dockerConfigEntry
	if data, ok := s.Data[corev1.DockerConfigJsonKey]; ok {
		var cfg struct {
			Auths map[string]dockerConfigEntry `json:"auths"`
		}
		if err := json.Unmarshal(data, &cfg); err != nil {
			return fmt.Errorf("secret %s/%s: parse %s: %w", s.Namespace, s.Name, corev1.DockerConfigJsonKey, err)
		}
		entries = cfg.Auths
	} else if data, ok := s.Data[corev1.DockerConfigKey]; ok {
		if err := json.Unmarshal(data, &entries); err != nil {
			return fmt.Errorf("secret %s/%s: parse %s: %w", s.Namespace, s.Name, corev1.DockerConfigKey, err)
		}
	} else {
		return fmt.Errorf("secret %s/%s has neither %s nor %s", s.Namespace, s.Name, corev1.DockerConfigJsonKey, corev1.DockerConfigKey)
	}
	for loc, e := range entries {
		if err := k.add(loc, e); err != nil {
			return fmt.Errorf("secret %s/%s: %w", s.Namespace, s.Name, err)
		}
	}
	return nil
}

// add adds one registry's credentials. The key is the location's host and
// path, with a /v1/ or /v2/ API prefix dropped.
func (k *keyring) add(loc string, e dockerConfigEntry) error {
	auth := &runtimeapi.AuthConfig{Username: e.Username, Password: e.Password,
		IdentityToken: e.IdentityToken, RegistryToken: e.RegistryToken}
	if e.Auth != "" {
		user, pass, err := decodeDockerAuth(e.Auth)
		if err != nil {
			return fmt.Errorf("registry %q: %w", loc, err)
		}
		auth.Username, auth.Password = user, pass
	}
	if !strings.HasPrefix(loc, "https://") && !strings.HasPrefix(loc, "http://") {
		loc = "https://" + loc
	}
	u, err := url.Parse(loc)
	if err != nil {
		return fmt.Errorf("registry %q: %w", loc, err)
	}
	p := u.Path
	if strings.HasPrefix(p, "/v1/") || strings.HasPrefix(p, "/v2/") {
		p = p[3:]
	}
	key := u.Host
	if p != "" && p != "/" {
		key += p
	}
	if k.creds == nil {
		k.creds = map[string][]*runtimeapi.AuthConfig{}
	}
	k.creds[key] = append(k.creds[key], auth)
	return nil
}

// decodeDockerAuth decodes the base64 "user:password" of an auth field.
func decodeDockerAuth(field string) (string, string, error) {
	enc := base64.RawStdEncoding
	if strings.HasSuffix(strings.TrimSpace(field), "=") {
		enc = base64.StdEncoding
	}
	decoded, err := enc.DecodeString(strings.TrimSpace(field))
	if err != nil {
		return "", "", fmt.Errorf("decode auth field: %w", err)
	}
	user, pass, ok := strings.Cut(string(decoded), ":")
	if !ok {
		return "", "", fmt.Errorf("auth field must be base64(username:password)")
	}
	return user, pass, nil
}

// lookup returns the credentials that apply to image (without its tag or
// digest is fine, either works), the most specific key first; the default
// registry's credentials apply to Docker Hub images that no key matches.
func (k *keyring) lookup(image string) []*runtimeapi.AuthConfig {
	repo := repository(image)
	keys := make([]string, 0, len(k.creds))
	for key := range k.creds {
		keys = append(keys, key)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(keys)))
	var out []*runtimeapi.AuthConfig
	for _, key := range keys {
		if registryMatches(key, repo) {
			out = append(out, k.creds[key]...)
		}
	}
	if len(out) == 0 && isDockerHub(repo) {
		out = append(out, k.creds[defaultRegistryHost]...)
	}
	return out
}

// repository strips the tag and digest of an image reference, and adds the
// docker.io/library/ a short Docker Hub name implies.
func repository(image string) string {
	name, _, _ := strings.Cut(image, "@")
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name = name[:i]
	}
	first, rest, hasSlash := strings.Cut(name, "/")
	switch {
	case !hasSlash:
		return dockerHubDomain + "/library/" + name
	case !strings.ContainsAny(first, ".:") && first != "localhost":
		return dockerHubDomain + "/" + name
	case first == defaultRegistryHost:
		return dockerHubDomain + "/" + rest
	}
	return name
}

// isDockerHub reports whether a repository (from repository) is on Docker
// Hub.
func isDockerHub(repo string) bool {
	return strings.HasPrefix(repo, dockerHubDomain+"/")
}

// registryMatches reports whether a keyring key matches a repository: the
// same number of host labels, each matching the key's label as a glob
// ("*.example.com"), the same port, and the key's path a prefix of the
// repository's.
func registryMatches(key, repo string) bool {
	kHost, kPath, _ := strings.Cut(key, "/")
	rHost, rPath, _ := strings.Cut(repo, "/")
	kName, kPort := splitHostPort(kHost)
	rName, rPort := splitHostPort(rHost)
	if kPort != rPort || !strings.HasPrefix("/"+rPath, "/"+kPath) {
		return false
	}
	kLabels, rLabels := strings.Split(kName, "."), strings.Split(rName, ".")
	if len(kLabels) != len(rLabels) {
		return false
	}
	for i := range kLabels {
		if ok, err := path.Match(kLabels[i], rLabels[i]); err != nil || !ok {
			return false
		}
	}
	return true
}

func splitHostPort(hostport string) (string, string) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return hostport, ""
	}
	return host, port
}
