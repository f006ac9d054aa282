package limit

import (
	"errors"
	"time"
)

// minRetryAfter keeps a denial from telling a client to retry after 0s, which
// clients read as "now".
const minRetryAfter = time.Second

// fixedWindow returns the number of the window of the given length that holds
// now, and when that window ends. Windows are counted from the Unix epoch so
// every replica puts the same instant in the same window.
func fixedWindow(now time.Time, length time.Duration) (number int64, end time.Time) {
	ns, l := now.UnixNano(), int64(length)
	number = ns / l
	if ns%l < 0 { // round toward minus infinity before 1970
		number--
	}
	return number, time.Unix(0, (number+1)*l)
}

func checkArgs(limit int, window time.Duration) error {
	if window <= 0 {
		return errors.New("limit: window must be positive")
	}
	if limit < 0 {
		return errors.New("limit: limit must not be negative")
	}
	return nil
}

// decide turns the count of hits in the window, this one included, into a
// decision.
func decide(count int64, limit int, now, end time.Time) Decision {
	d := Decision{Allowed: count <= int64(limit), Limit: limit}
	if d.Allowed {
		d.Remaining = limit - int(count)
		return d
	}
	d.RetryAfter = max(end.Sub(now), minRetryAfter)
	return d
}
