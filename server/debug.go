package server

import (
	"fmt"
	"io"
	"net/http"
	"net/http/pprof"
	"strconv"
	"strings"
)

// VerbositySetter sets the agent's log verbosity at run time from the
// body of a PUT to /debug/flags/v, and returns the message to answer. It
// must be safe for concurrent use (klog's textlogger.Config.Verbosity is).
type VerbositySetter func(v string) (string, error)

// router is where routes are registered: an http.ServeMux, or a recorder
// of the patterns in tests.
type router interface {
	Handle(pattern string, h http.Handler)
	HandleFunc(pattern string, f func(http.ResponseWriter, *http.Request))
}

// Paths of the debugging routes, as the kubelet's.
const (
	pprofPath     = "/debug/pprof/"
	debugFlagPath = "/debug/flags/v"
	logsPath      = "/logs/"
)

// registerDebug adds /debug/pprof/, /logs/ and /debug/flags/v, each
// served or answering 405 naming it disabled, as the kubelet's.
func (s *SecureServer) registerDebug(mux router) {
	if enabled(s.cfg.EnableProfilingHandler) {
		mux.Handle(pprofPath, getOnly(http.HandlerFunc(servePprof)))
	} else {
		mux.Handle(pprofPath, disabledEndpoint("profiling endpoint is disabled."))
	}
	if enabled(s.cfg.EnableSystemLogHandler) {
		mux.Handle(logsPath, getOnly(http.StripPrefix(logsPath, http.FileServer(http.Dir(s.cfg.SystemLogDir)))))
	} else {
		mux.Handle(logsPath, disabledEndpoint("logs endpoint is disabled."))
	}
	switch {
	case enabled(s.cfg.EnableDebugFlagsHandler) && s.deps.Verbosity != nil:
		mux.Handle(debugFlagPath, verbosityHandler(s.deps.Verbosity))
	case enabled(s.cfg.EnableDebugFlagsHandler):
		mux.Handle(debugFlagPath, disabledEndpoint("flags endpoint is disabled: the agent's logger cannot change its verbosity at run time."))
	default:
		mux.Handle(debugFlagPath, disabledEndpoint("flags endpoint is disabled."))
	}
}

// servePprof dispatches to the pprof handlers by name, as the kubelet's:
// profile, symbol, cmdline and trace, and the index (which serves the
// named profiles such as heap) for any other name.
func servePprof(w http.ResponseWriter, r *http.Request) {
	switch strings.TrimPrefix(r.URL.Path, pprofPath) {
	case "profile":
		pprof.Profile(w, r)
	case "symbol":
		pprof.Symbol(w, r)
	case "cmdline":
		pprof.Cmdline(w, r)
	case "trace":
		pprof.Trace(w, r)
	default:
		pprof.Index(w, r)
	}
}

// getOnly answers 405 with "Allow: GET" to any method but GET, HEAD
// included, as the kubelet's GETOnlyRestfulFilter.
func getOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// disabledEndpoint answers 405 with msg, the kubelet's answer on a
// debugging route that is turned off.
func disabledEndpoint(msg string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, msg, http.StatusMethodNotAllowed)
	})
}

// maxVerbosityBody bounds the body of a PUT to /debug/flags/v.
const maxVerbosityBody = 64

// verbosityHandler sets the verbosity from a PUT's body, as the kubelet's
// StringFlagPutHandler with its GlogSetter: the body is a non-negative
// number (400 otherwise), other methods get 406.
func verbosityHandler(set VerbositySetter) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPut {
			writePlain(w, http.StatusNotAcceptable, "unsupported http method")
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxVerbosityBody+1))
		if err != nil || len(body) > maxVerbosityBody {
			writePlain(w, http.StatusBadRequest, fmt.Sprintf("error reading request body: at most %d bytes", maxVerbosityBody))
			return
		}
		v := strings.TrimSpace(string(body))
		if _, err := strconv.ParseUint(v, 10, 32); err != nil {
			writePlain(w, http.StatusBadRequest, fmt.Sprintf("verbosity %q: not a non-negative number", v))
			return
		}
		msg, err := set(v)
		if err != nil {
			writePlain(w, http.StatusBadRequest, err.Error())
			return
		}
		writePlain(w, http.StatusOK, msg)
	})
}

// writePlain writes a text/plain answer with a trailing newline, as the
// kubelet's flag handler.
func writePlain(w http.ResponseWriter, code int, text string) {
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	fmt.Fprintln(w, text)
}
