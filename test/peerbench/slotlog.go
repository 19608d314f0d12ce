package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"
)

// waitedMessage is the line nodekit logs at --v=2 for each start call that
// queued for a slot (--max-parallel-starts) and then got one.
const waitedMessage = `"Waited for a runtime start slot"`

var (
	waitedPod  = regexp.MustCompile(` pod="[^"/]*/([^"]*)"`)
	waitedWait = regexp.MustCompile(` wait="([^"]*)"`)
)

// sandboxWaitsOf reads an agent's log for the RunPodSandbox calls that
// queued for a start slot and returns each pod's total wait before its
// sandbox, by pod name. A log with no such line is an empty answer.
func sandboxWaitsOf(path string) (map[string]time.Duration, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	waits := map[string]time.Duration{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, waitedMessage) || !strings.Contains(line, ` operation="`+opSandbox+`"`) {
			continue
		}
		pod, wait := waitedPod.FindStringSubmatch(line), waitedWait.FindStringSubmatch(line)
		if pod == nil || wait == nil {
			return nil, fmt.Errorf("%s: a start slot line without its pod or wait: %q", path, line)
		}
		d, err := time.ParseDuration(wait[1])
		if err != nil {
			return nil, fmt.Errorf("%s: the wait of %q: %w", path, line, err)
		}
		waits[pod[1]] += d
	}
	return waits, sc.Err()
}
