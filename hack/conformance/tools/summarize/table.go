package main

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

// readTSV reads a results.tsv into name -> fields (state, cause, message).
func readTSV(path string) (map[string][3]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := map[string][3]string{}
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		f := strings.SplitN(line, "\t", 4)
		if len(f) != 4 {
			continue
		}
		m[f[0]] = [3]string{f[1], f[2], f[3]}
	}
	return m, nil
}

func mark(state string) string {
	switch state {
	case "passed":
		return "pass"
	case "":
		return "-"
	case "skipped":
		return "skip"
	}
	return "FAIL"
}

// printTable prints, for each spec of either file, a Markdown row: the
// kubelet's result, nodekit's, and nodekit's failure cause, grouped by that
// cause (passes last), with a count per cause.
func printTable(files []string, causesPath string) error {
	if len(files) != 2 {
		return fmt.Errorf("-table wants two results.tsv files: the kubelet's and nodekit's")
	}
	ref, err := readTSV(files[0])
	if err != nil {
		return err
	}
	nk, err := readTSV(files[1])
	if err != nil {
		return err
	}
	cs, err := readCauses(causesPath)
	if err != nil {
		return err
	}
	names := map[string]bool{}
	for n := range ref {
		names[n] = true
	}
	for n := range nk {
		names[n] = true
	}
	groups := map[string][]string{}
	for n := range names {
		c := nk[n][1]
		if c == "" {
			c = "~" + mark(nk[n][0])
		}
		groups[c] = append(groups[c], n)
	}
	ids := make([]string, 0, len(groups))
	for id := range groups {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		pi, pj := strings.HasPrefix(ids[i], "~"), strings.HasPrefix(ids[j], "~")
		if pi != pj {
			return pj
		}
		if len(groups[ids[i]]) != len(groups[ids[j]]) {
			return len(groups[ids[i]]) > len(groups[ids[j]])
		}
		return ids[i] < ids[j]
	})
	esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	for _, id := range ids {
		ns := groups[id]
		sort.Strings(ns)
		title := id
		if strings.HasPrefix(id, "~") {
			title = "nodekit " + strings.TrimPrefix(id, "~")
		} else {
			for _, c := range cs {
				if c.ID == id {
					title = fmt.Sprintf("%s (%s): %s", id, c.Area, c.Label)
				}
			}
		}
		fmt.Printf("\n#### %s: %d\n\n| spec | kubelet | nodekit | nodekit's failure |\n|---|---|---|---|\n", esc(title), len(ns))
		for _, n := range ns {
			fmt.Printf("| %s | %s | %s | %s |\n", esc(n), mark(ref[n][0]), mark(nk[n][0]), esc(nk[n][2]))
		}
	}
	return nil
}
