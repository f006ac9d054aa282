package browsertest

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserRendersPage checks the harness itself: the browser starts,
// loads a local page, runs its script and reports the DOM.
func TestBrowserRendersPage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!doctype html><title>t</title><p id="out"></p><script>document.getElementById('out').textContent = 'ran ' + (2 + 3)</script>`))
	}))
	defer srv.Close()
	ctx := New(t, 30*time.Second)
	var text string
	if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL), chromedp.Text("#out", &text)); err != nil {
		t.Fatal(err)
	}
	if text != "ran 5" {
		t.Fatalf("page text %q, want %q", text, "ran 5")
	}
	if p := Screenshot(t, ctx, "smoke"); p == "" {
		t.Fatal("no screenshot path")
	}
}

// TestAxeFindsViolations checks the accessibility helper: axe-core runs in
// a page whose policy allows no injected script and reports an image
// without a text alternative and a button without a name as serious or
// critical, and nothing of a clean page.
func TestAxeFindsViolations(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self'")
		if r.URL.Path == "/clean" {
			w.Write([]byte(`<!doctype html><html lang="en"><title>Clean</title><main><h1>Clean</h1><button>Go</button></main></html>`))
			return
		}
		w.Write([]byte(`<!doctype html><html lang="en"><title>Broken</title><main><img src="/x.png"><button></button></main></html>`))
	}))
	defer srv.Close()
	ctx := New(t, time.Minute)
	if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/broken")); err != nil {
		t.Fatal(err)
	}
	vs, err := Axe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, v := range Severe(vs) {
		found[v.ID] = true
	}
	if !found["image-alt"] || !found["button-name"] {
		t.Fatalf("axe-core found %v", vs)
	}
	if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/clean")); err != nil {
		t.Fatal(err)
	}
	if vs, err := Axe(ctx); err != nil || len(Severe(vs)) > 0 {
		t.Fatalf("a clean page: %v %v", vs, err)
	}
}
