// Package clock lets code read the time through a value tests control, so
// expiry, deadlines and schedules are tested without sleeping.
package clock

import (
	"sync"
	"time"
)

// Clock tells the current time.
type Clock interface {
	Now() time.Time
}

// System is the real clock, in UTC.
type System struct{}

func (System) Now() time.Time { return time.Now().UTC() }

// Fake is a clock that moves only when told to.
type Fake struct {
	mu  sync.Mutex
	now time.Time
}

// NewFake returns a fake clock set to t.
func NewFake(t time.Time) *Fake { return &Fake{now: t.UTC()} }

func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Advance moves the clock forward by d.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
}

// Set moves the clock to t.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	f.now = t.UTC()
	f.mu.Unlock()
}

// Spent is the whole seconds a client says it spent since start, never
// more than the wall-clock time from start to now (and never negative):
// content reports its own time (a SCORM session_time, a cmi5 duration),
// and a claim of more time than has passed since its launch is cut to
// the time that has.
func Spent(claimed int64, start, now time.Time) int64 {
	elapsed := int64(now.Sub(start) / time.Second)
	return max(min(claimed, elapsed), 0)
}
