package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync/atomic"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
)

// requestMetric is the API server's counter of the requests it served, by
// verb, resource, subresource and code.
const requestMetric = "apiserver_request_total"

// requestCounts are apiserver_request_total's values at one scrape, summed
// by "VERB resource[/subresource]".
type requestCounts map[string]float64

// parseRequests reads requestMetric from a /metrics exposition.
func parseRequests(r io.Reader) (requestCounts, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parse /metrics: %w", err)
	}
	f := families[requestMetric]
	if f == nil {
		return nil, fmt.Errorf("/metrics has no %s", requestMetric)
	}
	out := requestCounts{}
	for _, m := range f.GetMetric() {
		var verb, resource, sub string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "verb":
				verb = l.GetValue()
			case "resource":
				resource = l.GetValue()
			case "subresource":
				sub = l.GetValue()
			}
		}
		key := verb + " " + resource
		if sub != "" {
			key += "/" + sub
		}
		out[key] += m.GetCounter().GetValue()
	}
	return out, nil
}

// total is the sum of every series.
func (c requestCounts) total() float64 {
	var t float64
	for _, v := range c {
		t += v
	}
	return t
}

// minus is c - before, series by series, leaving out those that did not
// grow.
func (c requestCounts) minus(before requestCounts) requestCounts {
	out := requestCounts{}
	for k, v := range c {
		if d := v - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// top returns the n largest series, largest first (ties by name).
func (c requestCounts) top(n int) []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if c[keys[i]] != c[keys[j]] {
			return c[keys[i]] > c[keys[j]]
		}
		return keys[i] < keys[j]
	})
	if len(keys) > n {
		keys = keys[:n]
	}
	return keys
}

// scrapeRequests reads the API server's /metrics through the admin client.
func scrapeRequests(ctx context.Context, admin kubernetes.Interface) (requestCounts, error) {
	body, err := admin.Discovery().RESTClient().Get().AbsPath("/metrics").Stream(ctx)
	if err != nil {
		return nil, fmt.Errorf("GET /metrics: %w", err)
	}
	defer body.Close()
	return parseRequests(body)
}

// countingTransport counts the requests the benchmark itself sends, so that
// they can be taken out of the API server's count.
type countingTransport struct {
	next http.RoundTripper
	n    *atomic.Int64
}

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.n.Add(1)
	return t.next.RoundTrip(r)
}
