package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/go-logr/logr"
)

// errorsOnly is a logger that writes only errors, to stderr, named after
// the node: a hundred agents' info logs would cost more than the agents.
func errorsOnly(node string) logr.Logger { return logr.New(errorSink{name: node}) }

type errorSink struct {
	name   string
	values []any
}

func (errorSink) Init(logr.RuntimeInfo)  {}
func (errorSink) Enabled(level int) bool { return false }
func (errorSink) Info(int, string, ...any) {
}

func (s errorSink) Error(err error, msg string, kv ...any) {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] ERROR %s: %v", s.name, msg, err)
	all := append(append([]any{}, s.values...), kv...)
	for i := 0; i+1 < len(all); i += 2 {
		fmt.Fprintf(&b, " %v=%v", all[i], all[i+1])
	}
	fmt.Fprintln(os.Stderr, b.String())
}

func (s errorSink) WithValues(kv ...any) logr.LogSink {
	s.values = append(append([]any{}, s.values...), kv...)
	return s
}

func (s errorSink) WithName(name string) logr.LogSink {
	s.name += "/" + name
	return s
}
