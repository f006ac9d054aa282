package apitest

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

// Scenario is one request and what must come back.
type Scenario struct {
	Name    string
	As      string // "", "student", "tutor", "admin", "other-admin"
	Method  string
	Path    string
	Body    any
	Headers map[string]string
	Status  int
	// JSON maps dotted paths to expected values; the value Present only
	// requires the path to exist.
	JSON map[string]any
	// Events are the event names the request must record, in order; nil
	// skips the check, an empty slice requires none.
	Events []string
	// Check runs after the other assertions, for what they cannot say.
	Check func(t *testing.T, env *Env, res *Response)
}

// Present matches any value at a path in Scenario.JSON.
var Present = presence{}

type presence struct{}

// Run runs the scenarios in order against env.
func Run(t *testing.T, env *Env, scenarios []Scenario) {
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			RunOne(t, env, sc)
		})
	}
}

// RunOne runs one scenario and returns its response.
func RunOne(t *testing.T, env *Env, sc Scenario) *Response {
	t.Helper()
	req := Request{Method: sc.Method, Path: sc.Path, Body: sc.Body, Headers: sc.Headers}
	if sc.As != "" {
		u := env.As(sc.As)
		req.Token = u.Token
		if sc.As == "other-admin" {
			// The other tenant's token, sent to the default tenant.
			req.Host = env.Host
		}
	}
	before := env.LastEventID()
	res := env.Do(req)
	if res.Status != sc.Status {
		t.Fatalf("%s %s as %q: status %d, want %d; body %s", sc.Method, sc.Path, sc.As, res.Status, sc.Status, res.Body)
	}
	for path, want := range sc.JSON {
		got := res.Get(path)
		if _, ok := want.(presence); ok {
			if got == nil {
				t.Errorf("%s: %s missing in %s", sc.Name, path, res.Body)
			}
			continue
		}
		if !equalJSON(got, want) {
			t.Errorf("%s: %s = %#v, want %#v; body %s", sc.Name, path, got, want, res.Body)
		}
	}
	if sc.Events != nil {
		got := env.EventNames(before)
		if !slices.Equal(got, sc.Events) {
			t.Errorf("%s: events %v, want %v", sc.Name, got, sc.Events)
		}
	}
	if sc.Check != nil {
		sc.Check(t, env, res)
	}
	return res
}

// equalJSON compares a decoded JSON value with a Go value by passing the
// Go value through JSON too, so 3 equals 3.0 and structs equal maps.
func equalJSON(got, want any) bool {
	raw, err := json.Marshal(want)
	if err != nil {
		return false
	}
	var norm any
	if err := json.Unmarshal(raw, &norm); err != nil {
		return false
	}
	return reflect.DeepEqual(got, norm)
}
