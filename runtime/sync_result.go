package runtime

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// SyncAction names one step of SyncPod.
type SyncAction string

// Sync actions, as the kubelet names them.
const (
	StartContainer   SyncAction = "StartContainer"
	KillContainer    SyncAction = "KillContainer"
	CreatePodSandbox SyncAction = "CreatePodSandbox"
	KillPodSandbox   SyncAction = "KillPodSandbox"
	PullImage        SyncAction = "PullImage"
)

// StepResult is the outcome of one step of SyncPod on one target (a container
// name or a pod).
type StepResult struct {
	// Action is what was attempted.
	Action SyncAction
	// Target names what it was attempted on: a container name or the pod.
	Target string
	// Err is nil on success; it wraps one of the package's sentinel errors.
	Err error
	// Message is a human-readable explanation of Err.
	Message string
	// RetryAfter, when set, is how long until the step may succeed (the rest
	// of a CrashLoopBackOff); the agent syncs the pod again then.
	RetryAfter time.Duration
}

// SyncResult collects the steps of one SyncPod call.
type SyncResult struct {
	// Steps are the steps taken, in order.
	Steps []StepResult
	// SyncError is an error that ended the sync before its steps ran.
	SyncError error
}

// Add records a step.
func (r *SyncResult) Add(action SyncAction, target string, err error, msg string) {
	r.Steps = append(r.Steps, StepResult{Action: action, Target: target, Err: err, Message: msg})
}

// Fail records an error that ended the sync.
func (r *SyncResult) Fail(err error) { r.SyncError = err }

// Error joins every failed step and the sync error; nil when all succeeded.
func (r *SyncResult) Error() error {
	if r == nil {
		return nil
	}
	var errs []error
	for _, s := range r.Steps {
		if s.Err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", s.Action, s.Target, s.Err))
		}
	}
	if r.SyncError != nil {
		errs = append(errs, r.SyncError)
	}
	return errors.Join(errs...)
}

// Waiting returns the reason and message that a container should show as
// waiting after this sync (e.g. "CrashLoopBackOff"), or "" when the last
// step on that container succeeded.
func (r *SyncResult) Waiting(container string) (reason, message string) {
	if r == nil {
		return "", ""
	}
	for i := len(r.Steps) - 1; i >= 0; i-- {
		s := r.Steps[i]
		if s.Target != container || (s.Action != StartContainer && s.Action != PullImage) {
			continue
		}
		if s.Err == nil {
			return "", ""
		}
		return reasonOf(s.Err), s.Message
	}
	return "", ""
}

func reasonOf(err error) string {
	for _, sentinel := range []error{ErrCrashLoopBackOff, ErrImagePullBackOff, ErrImagePull, ErrImageNeverPull,
		ErrCreateContainer, ErrRunContainer, ErrCreatePodSandbox, ErrKillContainer, ErrConfig} {
		if errors.Is(err, sentinel) {
			return sentinel.Error()
		}
	}
	msg := err.Error()
	if i := strings.IndexByte(msg, ':'); i > 0 {
		return msg[:i]
	}
	return msg
}

// RetryAfter returns the shortest RetryAfter of the failed steps, or 0.
func (r *SyncResult) RetryAfter() time.Duration {
	var d time.Duration
	for _, s := range r.Steps {
		if s.Err != nil && s.RetryAfter > 0 && (d == 0 || s.RetryAfter < d) {
			d = s.RetryAfter
		}
	}
	return d
}

// OnlyBackOff reports whether every failed step is a container waiting out
// its CrashLoopBackOff or its image's ImagePullBackOff: nothing is wrong that
// a retry at the right time would not fix.
func (r *SyncResult) OnlyBackOff() bool {
	if r.SyncError != nil {
		return false
	}
	for _, s := range r.Steps {
		if s.Err != nil && !errors.Is(s.Err, ErrCrashLoopBackOff) && !errors.Is(s.Err, ErrImagePullBackOff) {
			return false
		}
	}
	return true
}
