// Command summarize reads the JSON report of a ginkgo run of the node
// conformance suite (hack/conformance.sh) and writes, next to it:
//
//   - summary.txt: passed, failed and skipped counts, and the failures grouped
//     by cause, each cause with its count, the issue area that fixes it and its
//     specs;
//   - results.tsv: one line per spec that ran: name, state, cause, and the
//     first line of its failure message.
//
// A failure's cause is the first rule of the causes file (-causes) whose
// regular expression matches its failure message; a failure no rule matches
// gets the cause "unclassified". With -table KUBELET_TSV NODEKIT_TSV it instead
// prints the Markdown table of docs/conformance.md from two results.tsv files.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// specReport holds the fields of a ginkgo types.SpecReport this command uses.
type specReport struct {
	ContainerHierarchyTexts []string
	LeafNodeText            string
	LeafNodeType            string
	State                   string
	RunTime                 int64
	Failure                 struct {
		Message string
	}
}

// suiteReport holds the fields of a ginkgo types.Report this command uses.
type suiteReport struct {
	PreRunStats struct {
		TotalSpecs       int
		SpecsThatWillRun int
	}
	SpecReports []specReport
}

// cause is one rule of the causes file.
type cause struct {
	ID    string
	Area  string
	Re    *regexp.Regexp
	Label string
}

// result is one spec that ran.
type result struct {
	Name, State, Cause, Message string
}

func main() {
	report := flag.String("report", "", "ginkgo JSON report (report.json); several, comma-separated: a spec of a later report (a rerun) replaces the same spec of an earlier one")
	causesFile := flag.String("causes", "", "causes file: ID | AREA | REGEXP | DESCRIPTION per line")
	out := flag.String("out", "", "directory for summary.txt and results.tsv (default: the report's)")
	table := flag.Bool("table", false, "print the Markdown table of two results.tsv files (kubelet, nodekit) given as arguments")
	flag.Parse()
	var err error
	if *table {
		err = printTable(flag.Args(), *causesFile)
	} else {
		err = summarize(*report, *causesFile, *out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "summarize:", err)
		os.Exit(1)
	}
}

func readCauses(path string) ([]cause, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cs []cause
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, " | ")
		if len(parts) != 4 {
			return nil, fmt.Errorf("%s:%d: want ID | AREA | REGEXP | DESCRIPTION", path, n)
		}
		re, err := regexp.Compile(parts[2])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		cs = append(cs, cause{ID: parts[0], Area: parts[1], Re: re, Label: parts[3]})
	}
	return cs, sc.Err()
}

func classify(cs []cause, msg string) string {
	for _, c := range cs {
		if c.Re.MatchString(msg) {
			return c.ID
		}
	}
	return "unclassified"
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	s = strings.ReplaceAll(s, "\t", " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

func specName(r specReport) string {
	return strings.TrimSpace(strings.Join(append(append([]string{}, r.ContainerHierarchyTexts...), r.LeafNodeText), " "))
}

func summarize(reportPath, causesPath, out string) error {
	if reportPath == "" {
		return fmt.Errorf("-report is required")
	}
	paths := strings.Split(reportPath, ",")
	if out == "" {
		out = filepath.Dir(paths[0])
	}
	cs, err := readCauses(causesPath)
	if err != nil {
		return err
	}
	// A later report's spec replaces an earlier one's of the same name.
	var specs []specReport
	index := map[string]int{}
	willRun := 0
	for i, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var suites []suiteReport
		if err := json.Unmarshal(data, &suites); err != nil {
			return fmt.Errorf("parse %s: %w", p, err)
		}
		for _, s := range suites {
			if i == 0 {
				willRun += s.PreRunStats.SpecsThatWillRun
			}
			for _, r := range s.SpecReports {
				if i > 0 && r.LeafNodeType != "It" {
					continue
				}
				if i > 0 && r.State == "skipped" && r.Failure.Message == "" {
					continue
				}
				key := specName(r)
				if j, ok := index[key]; ok && r.LeafNodeType == "It" {
					specs[j] = r
					continue
				}
				index[key] = len(specs)
				specs = append(specs, r)
			}
		}
	}
	var results []result
	counts := map[string]int{}
	{
		for _, r := range specs {
			if r.LeafNodeType != "It" {
				// A failed BeforeSuite or AfterSuite is reported too.
				if r.State != "passed" && r.State != "skipped" {
					counts["suite-node-"+r.State]++
					results = append(results, result{Name: "[" + r.LeafNodeType + "]", State: r.State,
						Cause: classify(cs, r.Failure.Message), Message: firstLine(r.Failure.Message)})
				}
				continue
			}
			name := specName(r)
			if r.State == "skipped" && r.Failure.Message == "" {
				continue // not selected by the focus and skips
			}
			counts[r.State]++
			res := result{Name: name, State: r.State}
			if r.State != "passed" && r.State != "skipped" {
				res.Cause = classify(cs, r.Failure.Message)
				res.Message = firstLine(r.Failure.Message)
			} else if r.State == "skipped" {
				res.Message = firstLine(r.Failure.Message)
			}
			results = append(results, res)
		}
	}
	sort.Slice(results, func(i, j int) bool { return results[i].Name < results[j].Name })
	var tsv strings.Builder
	for _, r := range results {
		fmt.Fprintf(&tsv, "%s\t%s\t%s\t%s\n", r.Name, r.State, r.Cause, r.Message)
	}
	if err := os.WriteFile(filepath.Join(out, "results.tsv"), []byte(tsv.String()), 0o644); err != nil {
		return err
	}
	failed := 0
	for st, n := range counts {
		if st != "passed" && st != "skipped" {
			failed += n
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "specs selected: %d\npassed: %d\nfailed: %d", willRun, counts["passed"], failed)
	var states []string
	for st := range counts {
		if st != "passed" && st != "skipped" {
			states = append(states, fmt.Sprintf("%s %d", st, counts[st]))
		}
	}
	sort.Strings(states)
	if len(states) > 1 || (len(states) == 1 && !strings.HasPrefix(states[0], "failed ")) {
		fmt.Fprintf(&b, " (%s)", strings.Join(states, ", "))
	}
	fmt.Fprintf(&b, "\nskipped at run time: %d\n", counts["skipped"])
	byCause := map[string][]string{}
	for _, r := range results {
		if r.Cause != "" {
			byCause[r.Cause] = append(byCause[r.Cause], r.Name)
		}
	}
	ids := make([]string, 0, len(byCause))
	for id := range byCause {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if len(byCause[ids[i]]) != len(byCause[ids[j]]) {
			return len(byCause[ids[i]]) > len(byCause[ids[j]])
		}
		return ids[i] < ids[j]
	})
	if len(ids) > 0 {
		fmt.Fprintf(&b, "\nfailures by cause:\n")
	}
	for _, id := range ids {
		area, label := "?", "no rule in the causes file matches: read results.tsv"
		for _, c := range cs {
			if c.ID == id {
				area, label = c.Area, c.Label
			}
		}
		fmt.Fprintf(&b, "\n%d  %s (%s): %s\n", len(byCause[id]), id, area, label)
		for _, n := range byCause[id] {
			fmt.Fprintf(&b, "    %s\n", n)
		}
	}
	return os.WriteFile(filepath.Join(out, "summary.txt"), []byte(b.String()), 0o644)
}
