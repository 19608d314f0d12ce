package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"math"
	"net/http"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// relistMetric is the PLEG relist histogram both agents export.
const relistMetric = "kubelet_pleg_relist_duration_seconds"

// relistTotals is the relist histogram's count, sum and buckets at one
// scrape.
type relistTotals struct {
	count   uint64
	sum     float64
	buckets []*dto.Bucket
}

// maxBound is the smallest bucket bound no relist so far exceeded: an
// upper bound of the longest relist since the agent started (+Inf when
// one exceeded every bucket; 0 before the first relist).
func (t relistTotals) maxBound() float64 {
	if t.count == 0 {
		return 0
	}
	for _, b := range t.buckets {
		if b.GetCumulativeCount() == t.count {
			return b.GetUpperBound()
		}
	}
	return math.Inf(1)
}

// scrapeRelist reads the relist histogram from an agent's /metrics (the
// kubelet's TLS port with anonymous access, nodekit's read-only port),
// trying three times: on a loaded machine the kubelet's /metrics with 500
// pods can take longer than the first try's wait.
func scrapeRelist(ctx context.Context, url string) (relistTotals, error) {
	var err error
	for range 3 {
		var t relistTotals
		if t, err = scrapeRelistOnce(ctx, url); err == nil || ctx.Err() != nil {
			return t, err
		}
	}
	return relistTotals{}, err
}

func scrapeRelistOnce(ctx context.Context, url string) (relistTotals, error) {
	families, err := scrapeFamilies(ctx, url)
	if err != nil {
		return relistTotals{}, err
	}
	f := families[relistMetric]
	if f == nil || len(f.GetMetric()) == 0 || f.GetType() != dto.MetricType_HISTOGRAM {
		return relistTotals{}, fmt.Errorf("%s has no histogram %s", url, relistMetric)
	}
	return totalsOf(f.GetMetric()[0].GetHistogram()), nil
}

// totalsOf is one histogram's count, sum and buckets.
func totalsOf(h *dto.Histogram) relistTotals {
	return relistTotals{count: h.GetSampleCount(), sum: h.GetSampleSum(), buckets: h.GetBucket()}
}

// scrapeFamilies reads and parses an agent's /metrics.
func scrapeFamilies(ctx context.Context, url string) (map[string]*dto.MetricFamily, error) {
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the agents' self-signed certificates, on loopback
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", url, err)
	}
	return families, nil
}

// meanRelist is the mean relist duration between two scrapes.
func meanRelist(before, after relistTotals) time.Duration {
	n := after.count - before.count
	if n == 0 {
		return 0
	}
	return time.Duration((after.sum - before.sum) / float64(n) * float64(time.Second))
}
