package http

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	nethttp "net/http"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodekit/nodekit/sources"
)

// maxBody bounds what the source reads from the URL: a manifest larger
// than this is an error, not an out-of-memory agent.
const maxBody = 10 << 20

// Source is the HTTP manifest source: the static pods served at a URL, as
// the kubelet's config/http.go reads them. Build it with New and hand it
// to a sources.Mux.
type Source struct {
	clk clock.WithTicker
	log logr.Logger
	cfg Config
	// client overrides the HTTP client; tests use httptest's.
	client *nethttp.Client
}

var _ sources.Source = (*Source)(nil)

// New returns a Source for cfg. It does no I/O and starts nothing: Run
// does.
func New(clk clock.WithTicker, log logr.Logger, cfg Config) *Source {
	return &Source{clk: clk, log: log.WithName("http"), cfg: cfg}
}

// Name returns sources.HTTPSource ("http").
func (s *Source) Name() string { return sources.HTTPSource }

// Run reads the URL at once and then every Config.CheckPeriod until ctx
// ends, and sends a snapshot whenever what the URL serves changed: its
// pods, or none for an empty document (logged as a failure, as the
// kubelet does). A read that fails (unreachable,
// not 200, not a valid Pod or PodList) sends nothing, so the last good
// pods keep running; the first failure of a streak is logged, the others
// at V(4), and the first success after it again. Until a first good read
// nothing is sent, so the agent does not treat pods as orphans for want of
// this source. The pods sent are the receiver's. Run returns nil when ctx
// ends, or an error at once if the Config is invalid.
func (s *Source) Run(ctx context.Context, updates chan<- []*corev1.Pod) error {
	if err := s.cfg.Validate(); err != nil {
		return err
	}
	cfg := s.cfg.withDefaults()
	r := &reader{src: s, cfg: cfg, client: s.newClient(cfg), updates: updates}
	ticker := s.clk.NewTicker(cfg.CheckPeriod)
	defer ticker.Stop()
	s.log.Info("Reading pods from the manifest URL", "url", cfg.URL, "checkPeriod", cfg.CheckPeriod)
	for {
		if !r.poll(ctx) {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C():
		}
	}
}

// newClient is the client of a Run with cfg (defaults applied): the
// request timeout and the redirect policy (redirectPolicy) on a copy of
// the test's client, or on a new one.
func (s *Source) newClient(cfg Config) *nethttp.Client {
	client := &nethttp.Client{Timeout: cfg.Timeout}
	if s.client != nil {
		c := *s.client
		client = &c
	}
	client.CheckRedirect = redirectPolicy(cfg.Header)
	return client
}

// reader is one Run's state; only Run's goroutine uses it.
type reader struct {
	src     *Source
	cfg     Config
	client  *nethttp.Client
	updates chan<- []*corev1.Pod
	// last is the body of the last good read, sent once.
	last     []byte
	sent     bool
	failures int
	// refusedSum is the SHA-256 of the last body refused as invalid and
	// refusedErr why: the same body again is not decoded again (decoding
	// 10 MiB of YAML costs seconds of CPU and hundreds of MiB).
	refusedSum [sha256.Size]byte
	refusedErr error
	// decodes counts the bodies decoded.
	decodes int
}

// poll reads the URL once and sends what changed; it reports false if ctx
// ended first.
func (r *reader) poll(ctx context.Context) bool {
	data, err := r.fetch(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return false
		}
		r.failed(err)
		return true
	}
	if r.sent && bytes.Equal(data, r.last) {
		r.succeeded()
		return true
	}
	pods := []*corev1.Pod{}
	if len(bytes.TrimSpace(data)) == 0 {
		// As the kubelet: an empty document means no pods, and is logged.
		r.failed(errors.New("the URL served an empty document; running none of its pods"))
	} else {
		sum := sha256.Sum256(data)
		if r.refusedErr != nil && sum == r.refusedSum {
			r.failed(r.refusedErr)
			return true
		}
		var ignored []string
		r.decodes++
		if pods, ignored, err = decode(data, r.cfg.URL, r.cfg.NodeName); err != nil {
			r.refusedSum, r.refusedErr = sum, err
			r.failed(err)
			return true
		}
		r.refusedErr = nil
		r.succeeded()
		for _, f := range ignored {
			r.src.log.Info("Unknown or duplicate field in the pod manifest at the URL; ignored", "url", r.cfg.URL, "field", f)
		}
	}
	r.last, r.sent = data, true
	for _, pod := range pods {
		r.src.log.V(2).Info("Read pod from the manifest URL", "pod", klog.KObj(pod), "podUID", pod.UID)
	}
	select {
	case r.updates <- pods:
		return true
	case <-ctx.Done():
		return false
	}
}

// failed logs the first failure of a streak; later ones go to V(4).
func (r *reader) failed(err error) {
	r.failures++
	if r.failures == 1 {
		r.src.log.Info("Failed to read pods from the manifest URL; the last good pods keep running, later failures are logged at V(4)", "url", r.cfg.URL, "err", err.Error())
		return
	}
	r.src.log.V(4).Info("Failed to read pods from the manifest URL", "url", r.cfg.URL, "err", err.Error(), "failures", r.failures)
}

// succeeded ends a failure streak.
func (r *reader) succeeded() {
	if r.failures > 0 {
		r.src.log.Info("Read pods from the manifest URL again", "url", r.cfg.URL, "failures", r.failures)
		r.failures = 0
	}
}

// fetch GETs the URL with the configured headers.
func (r *reader) fetch(ctx context.Context) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	req, err := nethttp.NewRequestWithContext(ctx, nethttp.MethodGet, r.cfg.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	for k, vs := range r.cfg.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	if resp.StatusCode != nethttp.StatusOK {
		return nil, fmt.Errorf("%s: %s", r.cfg.URL, resp.Status)
	}
	if len(data) > maxBody {
		return nil, fmt.Errorf("%s: the manifest is larger than %d bytes", r.cfg.URL, maxBody)
	}
	return data, nil
}
