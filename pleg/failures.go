package pleg

import "fmt"

// relistFailures counts the relists in a row that could not list the
// runtime, for Healthy. relistCore guards it with its mu.
type relistFailures struct {
	n    int
	last error
}

// fail records a relist whose listing failed with err.
func (f *relistFailures) fail(err error) { f.n, f.last = f.n+1, err }

// reset records a relist that listed the runtime.
func (f *relistFailures) reset() { f.n, f.last = 0, nil }

// check returns an error once threshold relists in a row have failed.
func (f relistFailures) check(who string, threshold int) error {
	if f.n < threshold {
		return nil
	}
	return fmt.Errorf("%s: the last %d relists could not list the runtime (threshold %d): %w", who, f.n, threshold, f.last)
}
