package httpx

// Redirect is a huma answer that sends the browser on: a 3xx status and
// its Location, never stored by a cache (the locations carry one-time
// codes and states).
type Redirect struct {
	Status       int
	Location     string `header:"Location"`
	CacheControl string `header:"Cache-Control"`
}

// RedirectTo is the answer that sends the browser to location with status.
func RedirectTo(status int, location string) *Redirect {
	return &Redirect{Status: status, Location: location, CacheControl: "no-store"}
}
