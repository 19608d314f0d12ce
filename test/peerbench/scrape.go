package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrapeTimeout is metrics-server's default --kubelet-request-timeout.
const scrapeTimeout = 10 * time.Second

// scrapes is what the metrics-server-like scrape of an agent's
// /metrics/resource saw over one steady window.
type scrapes struct {
	n      int           // scrapes made
	failed int           // of which failed
	took   time.Duration // the successful ones' total latency
	pods   int           // pods in the last successful scrape
	errs   []error       // why the failed ones failed
}

// mean is the successful scrapes' mean latency (0 when none succeeded).
func (s scrapes) mean() time.Duration {
	if ok := s.n - s.failed; ok > 0 {
		return s.took / time.Duration(ok)
	}
	return 0
}

// err is nil when every scrape succeeded, and else says how many failed
// and why the first did.
func (s scrapes) err() error {
	if s.failed == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d scrapes of /metrics/resource failed, the first: %w", s.failed, s.n, s.errs[0])
}

func (s *scrapes) add(took time.Duration, pods int, err error) {
	s.n++
	if err != nil {
		s.failed++
		s.errs = append(s.errs, err)
		return
	}
	s.took += took
	s.pods = pods
}

// scrapeEvery GETs url at the window's start and then every `every` while
// the window lasts, as metrics-server scrapes each node's
// /metrics/resource (every 15 s by default): a window of 60 s with every
// 15 s makes 4 scrapes. It returns early when ctx ends; every <= 0 makes
// none.
func scrapeEvery(ctx context.Context, url string, every, window time.Duration) scrapes {
	var s scrapes
	if every <= 0 {
		return s
	}
	client := &http.Client{Timeout: scrapeTimeout}
	defer client.CloseIdleConnections()
	start := time.Now()
	for at := time.Duration(0); at < window; at += every {
		if wait := time.Until(start.Add(at)); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return s
			case <-t.C:
			}
		}
		began := time.Now()
		pods, err := scrapeResource(ctx, client, url)
		if ctx.Err() != nil {
			return s
		}
		s.add(time.Since(began), pods, err)
	}
	return s
}

// scrapeResource GETs url, a /metrics/resource, and returns how many pods
// it reports CPU for. It fails, as a scrape that gives metrics-server
// nothing to use for the node, when the request fails, the answer is not
// 200 or does not parse, the agent says resource_scrape_error 1 or there
// is no node CPU.
func scrapeResource(ctx context.Context, client *http.Client, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return 0, fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	pods, err := parseResource(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("GET %s: %w", url, err)
	}
	return pods, nil
}

// parseResource reads a /metrics/resource answer in the text format and
// returns the number of pods with a pod_cpu_usage_seconds_total sample.
func parseResource(r io.Reader) (int, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return 0, fmt.Errorf("parse: %w", err)
	}
	if f := families["resource_scrape_error"]; f != nil {
		for _, m := range f.GetMetric() {
			if value(m) != 0 {
				return 0, errors.New("resource_scrape_error is 1: the agent could not read its stats")
			}
		}
	}
	if f := families["node_cpu_usage_seconds_total"]; f == nil || len(f.GetMetric()) == 0 {
		return 0, errors.New("no node_cpu_usage_seconds_total")
	}
	pods := map[string]bool{}
	if f := families["pod_cpu_usage_seconds_total"]; f != nil {
		for _, m := range f.GetMetric() {
			var ns, name string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "namespace":
					ns = l.GetValue()
				case "pod":
					name = l.GetValue()
				}
			}
			pods[ns+"/"+name] = true
		}
	}
	return len(pods), nil
}

// value is a gauge's, counter's or untyped sample's value.
func value(m *dto.Metric) float64 {
	switch {
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue()
	}
	return 0
}
