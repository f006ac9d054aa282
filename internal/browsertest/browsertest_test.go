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
