package httpx

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// overlapMux is the mux huma registers routes on. It passes each pattern
// to the ServeMux, which refuses two patterns that both match some path
// while neither is more specific: the interface has such pairs, like
// "GET /api/admin/courses/search/{category_id}" and
// "GET /api/admin/courses/{id}/edit". A refused pattern is served instead
// through a shared, more general pattern (its literal segments from the
// right turned into wildcards until the ServeMux takes it), whose handler
// picks the most specific of its routes that matches: at the first
// segment where two routes differ, a literal beats a wildcard. A path
// that both a refused route and a registered one match goes to the
// registered one, as the ServeMux decides.
type overlapMux struct {
	mux    *http.ServeMux
	mu     sync.Mutex
	shared map[string]*sharedRoutes
	// shapes holds each registered pattern with its wildcards unnamed, so
	// that a route registered twice still fails loudly.
	shapes map[string]bool
}

func newOverlapMux(mux *http.ServeMux) *overlapMux {
	return &overlapMux{mux: mux, shared: map[string]*sharedRoutes{}, shapes: map[string]bool{}}
}

// wildcardName matches a named wildcard; {$} (end of path) is a literal
// here, so that /x/{$} and /x/{rest...} are two routes.
var wildcardName = regexp.MustCompile(`\{[^}$][^}]*\}`)

// HandleFunc registers h for pattern ("METHOD /path/{name}").
func (m *overlapMux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	shape := wildcardName.ReplaceAllString(pattern, "{}")
	if m.shapes[shape] {
		panic(fmt.Sprintf("httpx: pattern %q is registered twice", pattern))
	}
	m.shapes[shape] = true
	err := register(m.mux, pattern, http.HandlerFunc(h))
	if err == nil {
		return
	}
	method, path, ok := strings.Cut(pattern, " ")
	// Only plain patterns are shared: no host, no trailing slash, no
	// multi-segment or end-of-path wildcards.
	if !ok || !strings.HasPrefix(path, "/") || strings.HasSuffix(path, "/") || strings.Contains(path, "...}") ||
		strings.Contains(path, "{$}") {
		panic(err)
	}
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for j := len(segs) - 1; j >= 0; j-- {
		if isWildcard(segs[j]) {
			continue
		}
		general := make([]string, len(segs))
		copy(general, segs[:j])
		for k := j; k < len(segs); k++ {
			general[k] = fmt.Sprintf("{seg%d}", k)
		}
		key := method + " /" + strings.Join(general, "/")
		if s, ok := m.shared[key]; ok {
			s.add(path, h)
			return
		}
		s := &sharedRoutes{}
		if register(m.mux, key, s) == nil {
			s.add(path, h)
			m.shared[key] = s
			return
		}
	}
	panic(err)
}

// ServeHTTP serves through the ServeMux (huma's adapter serves through
// the mux it registers on; the server serves the ServeMux itself).
func (m *overlapMux) ServeHTTP(w http.ResponseWriter, r *http.Request) { m.mux.ServeHTTP(w, r) }

// register is ServeMux.Handle with its refusal as an error.
func register(mux *http.ServeMux, pattern string, h http.Handler) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	mux.Handle(pattern, h)
	return nil
}

func isWildcard(seg string) bool { return strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") }

// sharedRoutes serves the routes behind one general pattern.
type sharedRoutes struct {
	routes []sharedRoute
}

type sharedRoute struct {
	segs    []string
	handler http.HandlerFunc
}

func (s *sharedRoutes) add(path string, h http.HandlerFunc) {
	s.routes = append(s.routes, sharedRoute{segs: strings.Split(strings.TrimPrefix(path, "/"), "/"), handler: h})
}

func (s *sharedRoutes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
	segs := make([]string, len(raw))
	for i, seg := range raw {
		v, err := url.PathUnescape(seg)
		if err != nil {
			writeNotFound(w)
			return
		}
		segs[i] = v
	}
	var best *sharedRoute
	for i := range s.routes {
		rt := &s.routes[i]
		if rt.matches(segs) && (best == nil || rt.beats(best)) {
			best = rt
		}
	}
	if best == nil {
		writeNotFound(w)
		return
	}
	for i, seg := range best.segs {
		if isWildcard(seg) {
			r.SetPathValue(seg[1:len(seg)-1], segs[i])
		}
	}
	best.handler(w, r)
}

func (rt *sharedRoute) matches(segs []string) bool {
	if len(segs) != len(rt.segs) {
		return false
	}
	for i, seg := range rt.segs {
		if segs[i] == "" || (!isWildcard(seg) && seg != segs[i]) {
			return false
		}
	}
	return true
}

// beats reports whether rt is more specific than other: a literal at the
// first segment where they differ in kind.
func (rt *sharedRoute) beats(other *sharedRoute) bool {
	for i, seg := range rt.segs {
		if a, b := isWildcard(seg), isWildcard(other.segs[i]); a != b {
			return !a
		}
	}
	return false
}
