package expansion

import (
	"regexp"
	"strings"
	"testing"
)

// token is the kubelet's grammar of $(VAR) expansion written as one regular
// expression, tried leftmost-first at each position: an escaped "$$", a
// reference "$(NAME)" (NAME runs to the first ")"), an unterminated "$(",
// a "$" before any other byte, a run without "$", and a "$" that ends the
// string.
var token = regexp.MustCompile(`\$\$|\$\([^)]*\)|\$\(|\$(?s:.)|[^$]+|\$`)

// reference expands s from the grammar: the oracle the fuzz target
// compares Expand with. refs are the names referenced, in order.
func reference(s string, vars map[string]string) (out string, refs []string) {
	var b strings.Builder
	for _, tok := range token.FindAllString(s, -1) {
		switch {
		case tok == "$$":
			b.WriteString("$")
		case len(tok) >= 3 && strings.HasPrefix(tok, "$(") && strings.HasSuffix(tok, ")"):
			name := tok[2 : len(tok)-1]
			refs = append(refs, name)
			if v, ok := vars[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(tok)
			}
		default:
			b.WriteString(tok)
		}
	}
	return b.String(), refs
}

// parseVars reads "NAME=value" lines; a line without "=" defines NAME as "".
func parseVars(s string) map[string]string {
	vars := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if line == "" {
			continue
		}
		name, value, _ := strings.Cut(line, "=")
		vars[name] = value
	}
	return vars
}

// FuzzExpand checks Expand against the kubelet's semantics: "$$" is one
// "$", a defined $(VAR) is its value, an undefined one and an unterminated
// "$(" stay as written, any other "$" is kept, values are not expanded
// again, and only the names referenced are looked up.
func FuzzExpand(f *testing.F) {
	vars := "POD_NAME=web-0\nPOD_IP=10.0.0.7\nPORT=8080\nEMPTY=\nSELF=$(SELF)\nESC=$$(POD_NAME)"
	for _, s := range []string{
		"", "plain", "$", "$$", "$$$", "$(", "$()", "$(POD_NAME)", "$$(POD_NAME)", "$$$(POD_NAME)",
		"http://$(POD_IP):$(PORT)/healthz", "--name=$(POD_NAME) --missing=$(UNDEFINED)",
		"$(SELF)", "$(ESC)", "$(EMPTY)x", "$(POD_NAME", "a$b$(c", "$(a$(POD_NAME))", "$(PO D)",
		"echo $((1+2))", "${POD_NAME}", "é$(POD_IP)ü$", "$(\n)", "\xff$(\xff)",
	} {
		f.Add(s, vars)
	}
	f.Add("$(A)$(B)$(A)", "A=$(B)\nB=$$")
	f.Fuzz(func(t *testing.T, s, varLines string) {
		vars := parseVars(varLines)
		var looked []string
		got := Expand(s, func(name string) (string, bool) {
			looked = append(looked, name)
			v, ok := vars[name]
			return v, ok
		})
		want, refs := reference(s, vars)
		if got != want {
			t.Fatalf("Expand(%q) with %q = %q, the kubelet's semantics give %q", s, vars, got, want)
		}
		if strings.Join(looked, "\x00") != strings.Join(refs, "\x00") || len(looked) != len(refs) {
			t.Fatalf("Expand(%q) looked up %q, the references are %q", s, looked, refs)
		}
		if !strings.Contains(s, "$") && got != s {
			t.Fatalf("Expand(%q) changed a string without a reference: %q", s, got)
		}
		// Nothing defined: only the "$$" escapes change.
		none := Expand(s, func(string) (string, bool) { return "", false })
		if wantNone, _ := reference(s, nil); none != wantNone {
			t.Fatalf("Expand(%q) with no variables = %q, want %q", s, none, wantNone)
		}
		if len(none) > len(s) {
			t.Fatalf("Expand(%q) with no variables grew to %q", s, none)
		}
	})
}
