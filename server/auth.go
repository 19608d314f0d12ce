package server

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/kubernetes"
)

// webhookRetryBackoff is the backoff of TokenReview and SubjectAccessReview
// calls, the apiserver library's default (DefaultAuthWebhookRetryBackoff).
func webhookRetryBackoff() *wait.Backoff {
	return &wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
}

// nodeAuth authenticates and authorizes requests to the secure port as the
// kubelet does, with k8s.io/apiserver's delegating authenticator and
// authorizer.
type nodeAuth struct {
	authn    authenticator.Request
	authz    authorizer.Authorizer
	nodeName string
	log      logr.Logger
}

// newNodeAuth builds the authenticator (client certificates against
// ClientCAFile when set, bearer tokens through TokenReview, anonymous only when
// enabled) and the authorizer (SubjectAccessReview, decisions cached).
func newNodeAuth(cfg Config, client kubernetes.Interface, log logr.Logger) (*nodeAuth, error) {
	caBundle, caSource, err := clientCA(cfg)
	if err != nil {
		return nil, err
	}
	authnCfg := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous:                &apiserver.AnonymousAuthConfig{Enabled: cfg.AnonymousAuth},
		TokenAccessReviewClient:  client.AuthenticationV1(),
		TokenAccessReviewTimeout: 10 * time.Second,
		WebhookRetryBackoff:      webhookRetryBackoff(),
		CacheTTL:                 cfg.AuthenticationCacheTTL,
	}
	if len(caBundle) > 0 {
		ca, err := dynamiccertificates.NewStaticCAContent("client-ca-bundle", caBundle)
		if err != nil {
			return nil, fmt.Errorf("client CA from %s: %w", caSource, err)
		}
		authnCfg.ClientCertificateCAContentProvider = ca
	}
	authn, _, err := authnCfg.New()
	if err != nil {
		return nil, fmt.Errorf("build authenticator: %w", err)
	}
	authz, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: client.AuthorizationV1(),
		AllowCacheTTL:             cfg.AuthorizationAllowedCacheTTL,
		DenyCacheTTL:              cfg.AuthorizationDeniedCacheTTL,
		WebhookRetryBackoff:       webhookRetryBackoff(),
	}.New()
	if err != nil {
		return nil, fmt.Errorf("build authorizer: %w", err)
	}
	log.Info("authenticating the secure port", "clientCA", caSource, "anonymous", cfg.AnonymousAuth)
	if len(caBundle) == 0 {
		log.Info("client certificates are not accepted on the secure port: no clientCAFile (--client-ca-file); "+
			"the API server's kubelet client certificate (kubectl logs, exec) is then refused", "securePort", cfg.SecurePort)
	}
	return &nodeAuth{authn: authn, authz: authz, nodeName: cfg.NodeName, log: log}, nil
}

// clientCA reads the CA bundle client certificates are verified against:
// ClientCAFile. Without it, as the kubelet, there is no bundle and x509
// authentication is off: a client certificate authenticates no one.
func clientCA(cfg Config) ([]byte, string, error) {
	if cfg.ClientCAFile == "" {
		return nil, "none", nil
	}
	b, err := os.ReadFile(cfg.ClientCAFile)
	if err != nil {
		return nil, "", fmt.Errorf("read server clientCAFile: %w", err)
	}
	return b, cfg.ClientCAFile, nil
}

// verbFor maps the HTTP method to the API verb, as the kubelet's auth.go.
func verbFor(method string) string {
	switch method {
	case http.MethodPost:
		return "create"
	case http.MethodGet:
		return "get"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return ""
}

// subresourcesFor returns the node subresources a request to path is
// authorized against, in order; the first allowed one lets it through. It
// is the kubelet v1.37's mapping (fine-grained authorization is GA there):
// /pods, /runningpods, /healthz and /configz first try their own
// subresource and then fall back to proxy; /stats, /metrics and /logs are
// stats, metrics and log; everything else is proxy.
func subresourcesFor(path string) []string {
	var out []string
	switch {
	case isSubpath(path, "/pods"), isSubpath(path, "/runningpods"):
		out = append(out, "pods")
	case isSubpath(path, "/healthz"):
		out = append(out, "healthz")
	case isSubpath(path, "/configz"):
		out = append(out, "configz")
	}
	switch {
	case isSubpath(path, "/stats"):
		out = append(out, "stats")
	case isSubpath(path, "/metrics"):
		out = append(out, "metrics")
	case isSubpath(path, "/logs"):
		out = append(out, "log")
	case isSubpath(path, "/checkpoint"):
		out = append(out, "checkpoint")
	default:
		out = append(out, "proxy")
	}
	return out
}

// isSubpath reports whether path is prefix or below it.
func isSubpath(path, prefix string) bool {
	prefix = strings.TrimSuffix(prefix, "/")
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// attributes are the authorization attributes of a request by u, one per
// subresource of subresourcesFor.
func (a *nodeAuth) attributes(u user.Info, r *http.Request) []authorizer.Attributes {
	var out []authorizer.Attributes
	for _, sub := range subresourcesFor(r.URL.Path) {
		out = append(out, authorizer.AttributesRecord{
			User: u, Verb: verbFor(r.Method), APIVersion: "v1", Resource: "nodes", Subresource: sub,
			Name: a.nodeName, ResourceRequest: true, Path: r.URL.Path,
		})
	}
	return out
}

// filter wraps next: 401 for a request that does not authenticate, 403
// naming the user, verb and subresources for one that is not authorized,
// 500 when authorization itself failed.
func (a *nodeAuth) filter(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, ok, err := a.authn.AuthenticateRequest(r)
		if err != nil {
			a.log.Error(err, "unable to authenticate the request", "path", r.URL.Path)
		}
		if err != nil || !ok {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		allowed, err := a.authorize(r.Context(), resp.User, r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if !allowed {
			subs := subresourcesFor(r.URL.Path)
			a.log.V(2).Info("forbidden", "user", resp.User.GetName(), "verb", verbFor(r.Method), "subresources", subs)
			http.Error(w, fmt.Sprintf("Forbidden (user=%s, verb=%s, resource=nodes, subresource(s)=%v)",
				resp.User.GetName(), verbFor(r.Method), subs), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// authorize asks the authorizer for each attribute set in turn.
func (a *nodeAuth) authorize(ctx context.Context, u user.Info, r *http.Request) (bool, error) {
	for _, attr := range a.attributes(u, r) {
		decision, _, err := a.authz.Authorize(ctx, attr)
		if err != nil {
			a.log.Error(err, "authorization error", "user", u.GetName(), "verb", attr.GetVerb(), "subresource", attr.GetSubresource())
			return false, fmt.Errorf("Authorization error (user=%s, verb=%s, resource=nodes, subresource=%s)",
				u.GetName(), attr.GetVerb(), attr.GetSubresource())
		}
		if decision == authorizer.DecisionAllow {
			return true, nil
		}
	}
	return false, nil
}
