package oembed

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzHTML feeds untrusted markup to the scanner, discovery and the
// sanitiser. Whatever comes in, discovery yields an http(s) URL or
// nothing, and the sanitiser yields nothing or exactly one iframe with
// an https src, the fixed sandbox and known attributes only.
func FuzzHTML(f *testing.F) {
	for _, seed := range []string{
		youtubeHTML,
		`<head><link rel="alternate" type="application/json+oembed" href="/o?url=x&amp;y=1"></head>`,
		`<head><LINK REL=alternate TYPE=text/json+oembed HREF=//cdn.test/o></head><body>`,
		`<!-- <iframe src="https://a.test/"> --><script>"<iframe src='https://b.test/'>"</script>`,
		`<iframe src="//a.test/x" width=640 height="100%" title='a"b' allow="autoplay; camera" allowfullscreen>`,
		`<iframe src=https://a.test/ onload=alert(1) srcdoc="<script>x</script>"></iframe><img src=x onerror=y>`,
		`<iframe src="&#x6a;avascript:alert(1)"></iframe><iframe src="https://a.test/&quot;onload=&quot;x">`,
		`<a href='x' <iframe src="https://a.test/">`,
		`<plaintext><iframe src="https://a.test/">`,
		`</ifr<iframe/src="https://a.test/"/>`,
	} {
		f.Add(seed)
	}
	base, _ := url.Parse("https://site.test/page")
	f.Fuzz(func(t *testing.T, doc string) {
		for range tags(doc) {
		}
		if ep := discover(doc, base); ep != "" {
			u, err := url.Parse(ep)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				t.Fatalf("discover gave %q", ep)
			}
		}
		checkIframe(t, embedHTML(doc, func(string) bool { return true }))
		checkIframe(t, embedHTML(doc, func(h string) bool { return h == "a.test" }))
		if img := photoHTML(doc, doc, 10, 10); img != "" {
			if !strings.HasPrefix(img, `<img src="https://`) || strings.Count(img, "<") != 1 ||
				strings.Count(img, ">") != 1 || !strings.HasSuffix(img, ">") {
				t.Fatalf("photoHTML gave %s", img)
			}
		}
	})
}

var iframeAttrs = map[string]bool{
	"src": true, "width": true, "height": true, "title": true, "allow": true, "allowfullscreen": true,
	"sandbox": true, "referrerpolicy": true, "loading": true, "frameborder": true,
}

func checkIframe(t *testing.T, out string) {
	t.Helper()
	if out == "" {
		return
	}
	if !strings.HasPrefix(out, `<iframe src="https://`) || !strings.HasSuffix(out, `></iframe>`) ||
		strings.Count(out, "<") != 2 || strings.Count(out, ">") != 2 {
		t.Fatalf("embedHTML gave %s", out)
	}
	var got []tag
	for tg := range tags(out) {
		got = append(got, tg)
	}
	if len(got) != 2 || got[0].name != "iframe" || got[0].end || got[1].name != "iframe" || !got[1].end {
		t.Fatalf("embedHTML gave %s: tags %+v", out, got)
	}
	for _, a := range got[0].attrs {
		if !iframeAttrs[a.name] {
			t.Fatalf("embedHTML gave attribute %q: %s", a.name, out)
		}
	}
	if s, _ := got[0].attr("sandbox"); s != iframeSandbox {
		t.Fatalf("sandbox %q: %s", s, out)
	}
	if src, _ := got[0].attr("src"); httpsURL(src) == nil || !strings.HasPrefix(src, "https://") {
		t.Fatalf("src %q: %s", src, out)
	}
}
