package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

const exposition = `# HELP apiserver_request_total [STABLE] Counter of apiserver requests.
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="status",verb="PATCH",version="v1"} 7
apiserver_request_total{code="409",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="status",verb="PATCH",version="v1"} 2
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="POST",version="v1"} 10
apiserver_request_total{code="200",component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="namespace",subresource="",verb="PUT",version="v1"} 3
# HELP apiserver_longrunning_requests other
# TYPE apiserver_longrunning_requests gauge
apiserver_longrunning_requests{verb="WATCH"} 5
`

func TestParseRequestsSumsSeriesByVerbAndResource(t *testing.T) {
	c, err := parseRequests(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	want := requestCounts{"PATCH pods/status": 9, "POST pods": 10, "PUT leases": 3}
	if len(c) != len(want) {
		t.Fatalf("got %v, want %v", c, want)
	}
	for k, v := range want {
		if c[k] != v {
			t.Errorf("%s = %v, want %v", k, c[k], v)
		}
	}
	if c.total() != 22 {
		t.Errorf("total %v, want 22", c.total())
	}
}

func TestParseRequestsFailsWithoutTheCounter(t *testing.T) {
	if _, err := parseRequests(strings.NewReader("# TYPE x counter\nx 1\n")); err == nil || !strings.Contains(err.Error(), requestMetric) {
		t.Fatalf("err %v, want one naming %s", err, requestMetric)
	}
	if _, err := parseRequests(strings.NewReader("not an exposition {")); err == nil {
		t.Fatal("a broken exposition parsed")
	}
}

func TestMinusKeepsOnlyWhatGrewAndTopOrdersIt(t *testing.T) {
	before := requestCounts{"PUT leases": 3, "GET nodes": 5, "POST pods": 1}
	after := requestCounts{"PUT leases": 13, "GET nodes": 5, "POST pods": 11, "PATCH pods/status": 4}
	d := after.minus(before)
	if len(d) != 3 || d["PUT leases"] != 10 || d["POST pods"] != 10 || d["PATCH pods/status"] != 4 {
		t.Fatalf("minus = %v", d)
	}
	if got := strings.Join(d.top(2), ","); got != "POST pods,PUT leases" {
		t.Fatalf("top(2) = %s, want the two largest, ties by name", got)
	}
}

func TestTheTableShowsRatesPerNodeFiguresAndRatios(t *testing.T) {
	nk := result{mode: "nodekit", nodes: 10, pods: 100, nodesReady: 5 * time.Second, toRunning: 20 * time.Second,
		teardown: 10 * time.Second, requests: requestCounts{"PATCH pods/status": 400, "POST pods": 100}, benchOwn: 100,
		proc: usage{cpu: 30 * time.Second, maxRSS: 200 << 20}, load: "1.00 2.00 3.00"}
	kw := result{mode: "kwok", nodes: 10, pods: 100, nodesReady: 2 * time.Second, toRunning: 10 * time.Second,
		teardown: 5 * time.Second, requests: requestCounts{"PATCH pods/status": 200, "POST pods": 100}, benchOwn: 100,
		proc: usage{cpu: 10 * time.Second, maxRSS: 50 << 20}, load: "1.00 1.00 1.00"}
	var b bytes.Buffer
	printTable(&b, 10, 10, []result{nk, kw})
	out := b.String()
	for _, want := range []string{
		"| nodekit | 2.00 | 5.0 | 4.00 | 3.000 | 20.00 | 20.0 | 10.0 | 1.00 2.00 3.00 |",
		"| kwok | 5.00 | 10.0 | 2.00 | 1.000 | 5.00 | 10.0 | 5.0 | 1.00 1.00 1.00 |",
		"| **nodekit/kwok** | **0.40x** | **0.50x** | **2.00x** | **3.00x** | **4.00x** | **2.00x** | **2.00x** | |",
		"nodekit: API server requests", "PATCH pods/status 400, POST pods 100",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}

func TestOneModeHasNoRatioRowAndZeroDivisorsSayNA(t *testing.T) {
	var b bytes.Buffer
	printTable(&b, 1, 0, []result{{mode: "nodekit", nodes: 1}})
	if strings.Contains(b.String(), "nodekit/kwok") {
		t.Fatalf("a ratio row with one mode:\n%s", b.String())
	}
	if got := ratio(1, 0); got != "n/a" {
		t.Fatalf("ratio(1, 0) = %s", got)
	}
}

func TestFlags(t *testing.T) {
	base := []string{"--kubeconfig=/k", "--ca-cert=/pki/ca.crt", "--work=/w"}
	o, err := parseFlags(append(base, "--mode=nodekit", "--nodes=3", "--pods-per-node=4"))
	if err != nil || o.nodes != 3 || o.podsPerNode != 4 || len(o.modes) != 1 || o.caKey != "/pki/ca.key" {
		t.Fatalf("parseFlags = %+v, %v", o, err)
	}
	if _, err := parseFlags(append(base, "--mode=both")); err == nil || !strings.Contains(err.Error(), "--kwok") {
		t.Fatalf("both modes without --kwok: %v", err)
	}
	if _, err := parseFlags(append(base, "--mode=kubelet")); err == nil {
		t.Fatal("an unknown mode was accepted")
	}
	if _, err := parseFlags([]string{"--mode=nodekit", "--kubeconfig="}); err == nil {
		t.Fatal("missing --kubeconfig was accepted")
	}
}
