package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// kubeletConfigAPIVersion and kubeletConfigKind name the only typed
// --config format nodekit reads: the kubelet's own file.
const (
	kubeletConfigAPIVersion = "kubelet.config.k8s.io/v1beta1"
	kubeletConfigKind       = "KubeletConfiguration"
)

// errNotKubeletConfig marks a --config file without apiVersion and kind:
// the deprecated format of flag names in camelCase.
var errNotKubeletConfig = errors.New("not a KubeletConfiguration")

// kubeletConfigFile is a decoded KubeletConfiguration file.
type kubeletConfigFile struct {
	// kc is the file as decoded, before any defaulting.
	kc kubeletconfigv1beta1.KubeletConfiguration
	// set holds the paths (JSON names joined by dots, such as
	// "authentication.webhook.cacheTTL") of the fields the file sets to a
	// value other than their zero value, which the kubelet treats as
	// unset. Structs the kubelet nests are walked into (see nestedFields);
	// others are one path.
	set map[string]bool
	// unknown are the fields the KubeletConfiguration type has no field
	// for, as the strict decoder names them.
	unknown []string
}

// nestedFields are the struct-typed fields whose own fields are reported
// one by one, because nodekit supports some of them and not others.
var nestedFields = map[string]bool{
	"authentication": true, "authentication.x509": true, "authentication.webhook": true,
	"authentication.anonymous": true, "authorization": true, "authorization.webhook": true,
	"logging": true, "crashLoopBackOff": true,
}

// decodeKubeletConfig decodes a --config file. A file with neither
// apiVersion nor kind returns errNotKubeletConfig; one with other values
// is an error. Fields the type does not have are not an error: like the
// kubelet, which falls back to lenient decoding when strict decoding
// fails, nodekit decodes the rest and returns the unknown fields' names.
func decodeKubeletConfig(data []byte) (*kubeletConfigFile, error) {
	var duplicate error
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		// A key given twice: the kubelet decodes leniently (the last one
		// wins) and says so.
		duplicate = err
		if js, err = yaml.YAMLToJSON(data); err != nil {
			return nil, fmt.Errorf("parse YAML: %w", err)
		}
	}
	js = bytes.TrimSpace(js)
	if len(js) == 0 || bytes.Equal(js, []byte("null")) {
		return nil, errNotKubeletConfig
	}
	if js[0] != '{' {
		return nil, errors.New("want a YAML or JSON object")
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(js, &tm); err != nil {
		return nil, fmt.Errorf("read apiVersion and kind: %w", err)
	}
	if tm.APIVersion == "" && tm.Kind == "" {
		return nil, errNotKubeletConfig
	}
	if tm.APIVersion != kubeletConfigAPIVersion || tm.Kind != kubeletConfigKind {
		return nil, fmt.Errorf("apiVersion %q kind %q: nodekit reads apiVersion %s kind %s (or, deprecated, a file of flag names without apiVersion and kind)",
			tm.APIVersion, tm.Kind, kubeletConfigAPIVersion, kubeletConfigKind)
	}
	f := &kubeletConfigFile{set: map[string]bool{}}
	strictErrs, err := kjson.UnmarshalStrict(js, &f.kc, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", kubeletConfigKind, err)
	}
	if duplicate != nil {
		strictErrs = append(strictErrs, duplicate)
	}
	for _, e := range strictErrs {
		f.unknown = append(f.unknown, strictFieldName(e))
	}
	sort.Strings(f.unknown)
	collectSet(reflect.ValueOf(&f.kc).Elem(), "", f.set)
	delete(f.set, "apiVersion")
	delete(f.set, "kind")
	return f, nil
}

// strictFieldName turns a strict decoding error (`unknown field "a.b"`)
// into its field's name; other errors (a key given twice) are kept whole.
func strictFieldName(err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "unknown field "); ok {
		return strings.Trim(name, `"`)
	}
	return msg
}

// collectSet records in set the path of every field of the struct v that
// is not zero, walking into nestedFields.
func collectSet(v reflect.Value, prefix string, set map[string]bool) {
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if sf.Anonymous || name == "" || name == "-" {
			continue
		}
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		fv := v.Field(i)
		if nestedFields[path] && fv.Kind() == reflect.Struct {
			collectSet(fv, path, set)
			continue
		}
		if !isZero(fv) {
			set[path] = true
		}
	}
}

// isZero reports whether v is its type's zero value as the kubelet's
// defaulting sees it: nil pointers, empty maps and slices, structs whose
// fields are all zero (so `memorySwap: {}` and kubeadm's `0s` durations
// are unset), and values whose IsZero method says so (quantities).
func isZero(v reflect.Value) bool {
	if v.Kind() != reflect.Pointer && v.CanAddr() && v.Addr().CanInterface() {
		if z, ok := v.Addr().Interface().(interface{ IsZero() bool }); ok {
			return z.IsZero()
		}
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	case reflect.Map, reflect.Slice:
		return v.Len() == 0
	case reflect.Struct:
		for i := range v.NumField() {
			if !isZero(v.Field(i)) {
				return false
			}
		}
		return true
	default:
		return v.IsZero()
	}
}

// loadConfigFile reads the --config file into the flags the command line
// did not set and, for a KubeletConfiguration, into o.kubelet for the
// settings that have no flag. It returns the warnings to log once the
// logger exists: the deprecated format, and each field that is unknown
// or that nodekit does not support.
func (o *options) loadConfigFile(fs *pflag.FlagSet) ([]string, error) {
	o.kflags.fromCommandLine = map[string]bool{}
	fs.Visit(func(fl *pflag.Flag) { o.kflags.fromCommandLine[fl.Name] = true })
	if o.configFile == "" {
		return nil, nil
	}
	data, err := os.ReadFile(o.configFile)
	if err != nil {
		return nil, fmt.Errorf("read config file: %w", err)
	}
	f, err := decodeKubeletConfig(data)
	if errors.Is(err, errNotKubeletConfig) {
		if err := applyConfigFile(fs, o.configFile); err != nil {
			return nil, err
		}
		return []string{fmt.Sprintf("config file %s has no apiVersion and kind: the format of flag names in camelCase is deprecated; write a %s %s instead (docs/configuration.md)",
			o.configFile, kubeletConfigAPIVersion, kubeletConfigKind)}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("config file %s: %w", o.configFile, err)
	}
	if err := f.check(); err != nil {
		return nil, fmt.Errorf("config file %s: %w", o.configFile, err)
	}
	for _, fv := range f.flagValues() {
		if o.kflags.fromCommandLine[fv.flag] || o.aliasChanged(fv.flag) {
			continue
		}
		if err := fs.Set(fv.flag, fv.value); err != nil {
			return nil, fmt.Errorf("config file %s: field %s: %w", o.configFile, fv.field, err)
		}
	}
	o.kubelet = f
	return f.warnings(), nil
}

// warnings names each field that is unknown or set but unsupported, one
// warning per field, sorted.
func (f *kubeletConfigFile) warnings() []string {
	var out []string
	for _, name := range f.unknown {
		out = append(out, fmt.Sprintf("%s field %s is unknown and ignored", kubeletConfigKind, name))
	}
	for _, u := range f.unsupported() {
		out = append(out, fmt.Sprintf("%s field %s is not supported by nodekit and is ignored: %s", kubeletConfigKind, u.field, u.reason))
	}
	return out
}
