package runtime

import (
	"errors"
	"testing"
	"time"
)

func TestImagePullBackOffIsABackOffWithItsOwnReason(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		steps      []StepResult
		only       bool
		reason     string
		retryAfter time.Duration
	}{
		{"an image pull backoff is only a backoff", []StepResult{
			{Action: PullImage, Target: "a", Err: ErrImagePullBackOff, RetryAfter: 5 * time.Second},
		}, true, "ImagePullBackOff", 5 * time.Second},
		{"with a crash loop it is still only backoffs, the sooner retry first", []StepResult{
			{Action: StartContainer, Target: "b", Err: ErrCrashLoopBackOff, RetryAfter: 20 * time.Second},
			{Action: PullImage, Target: "a", Err: ErrImagePullBackOff, RetryAfter: 5 * time.Second},
		}, true, "ImagePullBackOff", 5 * time.Second},
		{"a failed pull is not a backoff", []StepResult{
			{Action: PullImage, Target: "a", Err: errors.Join(ErrImagePull, errors.New("not found"))},
		}, false, "ErrImagePull", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &SyncResult{Steps: c.steps}
			if got := r.OnlyBackOff(); got != c.only {
				t.Errorf("OnlyBackOff = %v, want %v", got, c.only)
			}
			if reason, _ := r.Waiting("a"); reason != c.reason {
				t.Errorf("Waiting reason = %q, want %q", reason, c.reason)
			}
			if got := r.RetryAfter(); got != c.retryAfter {
				t.Errorf("RetryAfter = %s, want %s", got, c.retryAfter)
			}
		})
	}
}
