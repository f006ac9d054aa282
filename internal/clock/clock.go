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
	mu     sync.Mutex
	now    time.Time
	timers []fakeTimer
}

// fakeTimer is a channel waiting for the fake time to reach at.
type fakeTimer struct {
	at time.Time
	ch chan time.Time
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
	f.fire()
	f.mu.Unlock()
}

// Set moves the clock to t.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	f.now = t.UTC()
	f.fire()
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

// After returns a channel that receives the fake time once Advance or Set
// moves it d or more past now, as time.After does for the real clock.
func (f *Fake) After(d time.Duration) <-chan time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan time.Time, 1)
	at := f.now.Add(d)
	if d <= 0 {
		ch <- f.now
		return ch
	}
	f.timers = append(f.timers, fakeTimer{at: at, ch: ch})
	return ch
}

// fire sends the time to the timers it reached; f.mu is held.
func (f *Fake) fire() {
	kept := f.timers[:0]
	for _, tm := range f.timers {
		if !f.now.Before(tm.at) {
			tm.ch <- f.now
			continue
		}
		kept = append(kept, tm)
	}
	f.timers = kept
}

// After waits on c's own timers when it has them (a Fake), else on the
// real time: code that sleeps until a time read from c uses it, so tests
// wake it by moving the clock.
func After(c Clock, d time.Duration) <-chan time.Time {
	if a, ok := c.(interface {
		After(time.Duration) <-chan time.Time
	}); ok {
		return a.After(d)
	}
	return time.After(d)
}
