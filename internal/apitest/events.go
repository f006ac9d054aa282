package apitest

import (
	"slices"
	"testing"
)

// Recorded runs call (typed client calls) and fails the test unless the
// events they recorded on the default tenant are want, in order; an empty
// want requires none. It is a Scenario's Events for calls through the
// client.
func (e *Env) Recorded(t testing.TB, want []string, call func()) {
	t.Helper()
	before := e.LastEventID()
	call()
	if got := e.EventNames(before); !slices.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
}
