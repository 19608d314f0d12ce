// Package settle tells, from a dump of every goroutine, whether any other
// goroutine could still make progress: the test harnesses that drive a
// fake clock (internal/simharness, pleg/plegtest) wait for that before
// they step the clock again.
package settle
