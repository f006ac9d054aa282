package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
)

// LoadDefaults returns the operator's defaults: the file at path (none when
// path is empty) overridden by LMS_SETTING_* variables of environ.
func LoadDefaults(path string, environ []string) (map[string]any, error) {
	file, err := LoadDefaultsFile(path)
	if err != nil {
		return nil, err
	}
	env, err := DefaultsFromEnv(environ)
	if err != nil {
		return nil, err
	}
	if file == nil && env == nil {
		return nil, nil
	}
	out := map[string]any{}
	maps.Copy(out, file)
	maps.Copy(out, env)
	return out, nil
}

// LoadDefaultsFile reads a JSON object of setting key → value. Keys may
// also be nested objects, as GET /api/config answers them
// ({"lms_auth": {"registration": "disabled"}}). An empty path reads
// nothing. Unknown keys and values that break a rule are errors naming the
// key.
func LoadDefaultsFile(path string) (map[string]any, error) {
	if path == "" {
		return nil, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("settings: read defaults: %w", err)
	}
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("settings: defaults file %s: %w", path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("settings: defaults file %s: more than one JSON value", path)
	}
	flat := map[string]any{}
	flatten(flat, "", doc)
	out, err := ValidateDefaults(flat)
	if err != nil {
		return nil, fmt.Errorf("settings: defaults file %s: %w", path, err)
	}
	return out, nil
}

// flatten copies the leaves of doc into out under dotted keys. An object
// whose path is a setting stays whole, so its rule can refuse it.
func flatten(out map[string]any, prefix string, doc map[string]any) {
	for k, v := range doc {
		name := k
		if prefix != "" {
			name = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok {
			if _, isKey := byName[name]; !isKey {
				flatten(out, name, sub)
				continue
			}
		}
		out[name] = v
	}
}

// DefaultsFromEnv reads LMS_SETTING_<KEY>=<value> entries of environ
// (os.Environ() form), where <KEY> is the key upper-cased with "." written
// "__". A value is read as JSON when it parses (and the result fits the
// rule), else as a plain string. Unknown names and values that break a rule
// are errors naming the variable.
func DefaultsFromEnv(environ []string) (map[string]any, error) {
	var out map[string]any
	var errs []error
	for _, entry := range environ {
		name, raw, ok := strings.Cut(entry, "=")
		if !ok || !strings.HasPrefix(name, envPrefix) {
			continue
		}
		i, ok := byEnv[name]
		if !ok {
			errs = append(errs, fmt.Errorf("settings: %s names no setting", name))
			continue
		}
		k := registry[i]
		v, msg := envValue(k, raw)
		if msg != "" {
			errs = append(errs, fmt.Errorf("settings: %s: %s", name, msg))
			continue
		}
		if out == nil {
			out = map[string]any{}
		}
		out[k.Name] = v
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// envValue reads raw as JSON, falling back to the plain string when raw is
// not JSON or only the string fits the rule (a numeric API key, say).
func envValue(k Key, raw string) (any, string) {
	var parsed any
	if err := json.Unmarshal([]byte(raw), &parsed); err == nil {
		v, msg := k.Validate(parsed)
		if msg == "" {
			return v, ""
		}
		if v, rawMsg := k.Validate(raw); rawMsg == "" {
			return v, ""
		}
		return nil, msg
	}
	return k.Validate(raw)
}

// ValidateDefaults checks a map of setting key → value, as an operator's
// defaults, and returns it with values normalized by their rules. Read-only
// keys are allowed: the operator configures them.
func ValidateDefaults(values map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(values))
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(values)) {
		k, ok := Lookup(name)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: the setting does not exist", name))
			continue
		}
		v, err := normalize(values[name])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: not a JSON value: %w", name, err))
			continue
		}
		v, msg := k.Validate(v)
		if msg != "" {
			errs = append(errs, fmt.Errorf("%s: %s", name, msg))
			continue
		}
		out[name] = v
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}
