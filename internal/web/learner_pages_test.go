package web

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// TestKindLabels: every kind of topic of the contract has a name of its
// own that a learner understands: not the name of a standard or tool,
// not the generic "Activity", not "Lesson" (the outline's word for what
// holds topics), and the kinds that play packages and apps are told
// apart (only SCORM and cmi5, both e-learning modules to a learner,
// share one).
func TestKindLabels(t *testing.T) {
	kinds := []string{"richtext", "video", "audio", "image", "pdf", "oembed", "h5p", "scorm", "liascript", "lti", "cmi5",
		"quiz", "project", "interactive", "layout"}
	jargon := regexp.MustCompile(`(?i)scorm|cmi5|h5p|liascript|lti|oembed|richtext`)
	byLabel := map[string][]string{}
	for _, k := range kinds {
		l := kindLabel(k)
		if l == "Activity" || l == "Lesson" || jargon.MatchString(l) {
			t.Errorf("kind %s is shown as %q", k, l)
		}
		byLabel[l] = append(byLabel[l], k)
	}
	for l, ks := range byLabel {
		if len(ks) > 1 && strings.Join(ks, " ") != "scorm cmi5" {
			t.Errorf("kinds %v are all shown as %q", ks, l)
		}
	}
	if l := kindLabel("a kind of tomorrow"); l != "Activity" {
		t.Errorf("an unknown kind is shown as %q", l)
	}
}

// TestFavicon: pages link the site's icon, which is served, and so is
// the address browsers ask for on their own.
func TestFavicon(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	page := s.must(req{path: "/courses"}, http.StatusOK)
	link := regexp.MustCompile(`<link rel="icon" href="(/assets/favicon\.svg\?v=[0-9a-f]+)" type="image/svg\+xml">`).FindStringSubmatch(page.text())
	if link == nil {
		t.Fatalf("the page links no icon: %.600s", page.text())
	}
	for _, path := range []string{link[1], "/favicon.ico"} {
		r := s.must(req{path: path}, http.StatusOK)
		if r.header.Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(r.text(), "<svg") {
			t.Errorf("%s: %s %.80s", path, r.header.Get("Content-Type"), r.text())
		}
	}
}
