package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const resourceBody = `# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds
# TYPE node_cpu_usage_seconds_total counter
node_cpu_usage_seconds_total 12.5 1733000000000
# HELP pod_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the pod in core-seconds
# TYPE pod_cpu_usage_seconds_total counter
pod_cpu_usage_seconds_total{namespace="default",pod="pb-0"} 0.1 1733000000000
pod_cpu_usage_seconds_total{namespace="default",pod="pb-1"} 0.2 1733000000000
pod_cpu_usage_seconds_total{namespace="other",pod="pb-0"} 0.2 1733000000000
# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise
# TYPE resource_scrape_error gauge
resource_scrape_error 0
`

func TestParseResource(t *testing.T) {
	pods, err := parseResource(strings.NewReader(resourceBody))
	if err != nil || pods != 3 {
		t.Fatalf("parseResource: %d pods, %v; want 3 pods", pods, err)
	}
	for name, body := range map[string]string{
		"scrape error": strings.Replace(resourceBody, "resource_scrape_error 0", "resource_scrape_error 1", 1),
		"no node CPU":  resourceBody[strings.Index(resourceBody, "# HELP pod_cpu"):],
		"not metrics":  "<html>forbidden</html>\n",
	} {
		if _, err := parseResource(strings.NewReader(body)); err == nil {
			t.Errorf("%s: parseResource accepted it", name)
		}
	}
}

func TestScrapeEveryCountsScrapesAndFailures(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics/resource" {
			http.NotFound(w, r)
			return
		}
		if calls.Add(1) == 2 { // the second scrape fails
			http.Error(w, "stats not ready", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte(resourceBody))
	}))
	defer srv.Close()
	// At 0, 5, 10 and 15 ms of a 20 ms window: 4 scrapes.
	s := scrapeEvery(context.Background(), srv.URL+"/metrics/resource", 5*time.Millisecond, 20*time.Millisecond)
	if s.n != 4 || s.failed != 1 || s.pods != 3 || len(s.errs) != 1 {
		t.Fatalf("scrapes: %+v; want 4 made, 1 failed, 3 pods", s)
	}
	if s.err() == nil || !strings.Contains(s.err().Error(), "500") {
		t.Fatalf("err() = %v, want the failure's status", s.err())
	}
	if s.mean() <= 0 {
		t.Fatalf("mean latency %v of 3 successful scrapes", s.mean())
	}
	if none := scrapeEvery(context.Background(), srv.URL, 0, time.Second); none.n != 0 {
		t.Fatalf("every 0 made %d scrapes", none.n)
	}
}

func TestScrapesMeanOfNone(t *testing.T) {
	var s scrapes
	s.add(time.Second, 0, context.DeadlineExceeded)
	if s.mean() != 0 || s.err() == nil {
		t.Fatalf("one failed scrape: mean %v, err %v", s.mean(), s.err())
	}
}
