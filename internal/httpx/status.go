package httpx

import "net/http"

// StatusOf is the status answered so far on w, a writer the request log
// (Observe) wraps, possibly under other wrappers that Unwrap; 0 when none
// was written or w is not behind Observe. Middleware that needs the status
// after its handler ran (the agent audit) reads it here instead of
// wrapping the writer once more; it holds even for handlers that write to
// a writer other than the one they were given.
func StatusOf(w http.ResponseWriter) int {
	for {
		if r, ok := w.(*recorder); ok {
			return r.status
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return 0
		}
		w = u.Unwrap()
	}
}
