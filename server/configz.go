package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
)

// redacted replaces each value of a header on /configz.
const redacted = "REDACTED"

// headerType is the type whose values /configz hides.
var headerType = reflect.TypeFor[http.Header]()

// redactConfigz returns v as generic JSON with the values of every
// http.Header field in it replaced by "REDACTED" (the header names
// stay): the static pod URL's headers (the kubelet's staticPodURLHeader)
// often carry an Authorization header, and /configz is readable by anyone
// with nodes/proxy or nodes/configz. The header fields are found by v's
// type, so a header added to the configuration later is hidden too.
func redactConfigz(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode configuration: %w", err)
	}
	var tree any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return nil, fmt.Errorf("decode configuration: %w", err)
	}
	if v == nil {
		return tree, nil
	}
	var paths [][]string
	headerPaths(reflect.TypeOf(v), nil, map[reflect.Type]bool{}, &paths)
	for _, p := range paths {
		redactAt(tree, p)
	}
	return tree, nil
}

// headerPaths appends to out the JSON paths of the http.Header values in
// a value of type t; "*" stands for every key of a map or element of a
// slice. onPath guards against recursive types.
func headerPaths(t reflect.Type, prefix []string, onPath map[reflect.Type]bool, out *[][]string) {
	if t == headerType {
		*out = append(*out, append([]string(nil), prefix...))
		return
	}
	if onPath[t] {
		return
	}
	onPath[t] = true
	defer delete(onPath, t)
	switch t.Kind() {
	case reflect.Pointer:
		headerPaths(t.Elem(), prefix, onPath, out)
	case reflect.Map, reflect.Slice, reflect.Array:
		headerPaths(t.Elem(), append(prefix, "*"), onPath, out)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case name == "-" || !f.IsExported() && !f.Anonymous:
				continue
			case f.Anonymous && name == "" && indirect(f.Type).Kind() == reflect.Struct:
				headerPaths(f.Type, prefix, onPath, out) // embedded: its fields are inline
				continue
			case name == "":
				name = f.Name
			}
			headerPaths(f.Type, append(prefix, name), onPath, out)
		}
	}
}

// indirect is t, or what it points to.
func indirect(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t.Elem()
	}
	return t
}

// redactAt replaces the values of the header objects at path in tree.
func redactAt(tree any, path []string) {
	if len(path) == 0 {
		if h, ok := tree.(map[string]any); ok {
			for k := range h {
				h[k] = []any{redacted}
			}
		}
		return
	}
	switch node := tree.(type) {
	case map[string]any:
		if path[0] == "*" {
			for _, child := range node {
				redactAt(child, path[1:])
			}
			return
		}
		if child, ok := node[path[0]]; ok {
			redactAt(child, path[1:])
		}
	case []any:
		if path[0] == "*" {
			for _, child := range node {
				redactAt(child, path[1:])
			}
		}
	}
}
