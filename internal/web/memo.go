package web

import "sync"

// pageMemo keeps rendered public pages (the catalogue) with the cached
// answers they were made from: a page is reused only while the cache
// still holds those very answers, so a refresh of the data shows at once
// and nothing is ever served that the data would not render.
type pageMemo struct {
	mu    sync.RWMutex
	pages map[memoKey]memoPage
}

type memoKey struct {
	host, uri string
	signedIn  bool
}

type memoPage struct {
	site string
	deps [2]*cached
	body []byte
}

// memoMax bounds the memo; when full it starts over.
const memoMax = 4096

func (m *pageMemo) get(k memoKey, site string, a, b *cached) ([]byte, bool) {
	m.mu.RLock()
	p, ok := m.pages[k]
	m.mu.RUnlock()
	if !ok || p.site != site || p.deps != [2]*cached{a, b} {
		return nil, false
	}
	return p.body, true
}

func (m *pageMemo) put(k memoKey, site string, a, b *cached, body []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pages == nil || len(m.pages) >= memoMax {
		m.pages = map[memoKey]memoPage{}
	}
	m.pages[k] = memoPage{site: site, deps: [2]*cached{a, b}, body: append([]byte(nil), body...)}
}
