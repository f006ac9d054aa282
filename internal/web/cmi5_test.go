package web

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
)

// ownWindowXML is a bare course structure of one AU hosted elsewhere that
// asks for a window of its own.
const ownWindowXML = `<?xml version="1.0"?>
<courseStructure xmlns="https://w3id.org/xapi/profiles/cmi5/v1/CourseStructure.xsd">
 <course id="https://example.com/own"><title><langstring>Own</langstring></title><description><langstring>D</langstring></description></course>
 <au id="https://example.com/own/au" launchMethod="OwnWindow"><title><langstring>Away</langstring></title>
  <description><langstring>A</langstring></description><url>https://cdn.example.com/au.html?lang=en</url></au>
</courseStructure>`

// TestCmi5Pages checks the cmi5 routes of the frontend without a
// browser: the topic page's start form, the launch that sends the frame
// to the AU on the content origin (endpoint and fetch URL too), the
// pass-through of the package files, the one-time fetch URL and the LRS
// there (with the launch's token, never the session; the frontend's
// origin serves none of them), the page the AU returns to, and an AU
// hosted elsewhere that keeps its address.
func TestCmi5Pages(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		admin := s.env.As("admin").Token
		c := seedCourse(t, s.env, s.env.Host, admin, "cmi5 pages")
		pkg, aus := cmi5Package(t, s.env, admin, "cmi5/single_au_basic_responsive.zip")
		topic := cmi5Topic(t, s.env, admin, c.lesson, pkg, aus[0], "Geology")
		u := s.env.NewUser("student")
		page := "/learn/" + id(c.course) + "/" + id(topic)

		r := s.must(req{path: page}, http.StatusOK)
		if strings.Contains(r.text(), `id="cmi5-launch"`) || !strings.Contains(r.text(), "to start this activity") {
			t.Fatal("an anonymous visitor is asked to sign in")
		}
		s.must(req{method: "POST", path: page + "/cmi5"}, http.StatusSeeOther)

		r = s.must(req{method: "POST", path: "/login", form: url.Values{"email": {u.Email}, "password": {u.Password}}}, http.StatusSeeOther)
		tok := r.cookie(sessionCookie).Value
		// Opening the page marks the topic in progress (its first ping):
		// the button must not speak of continuing what was never started.
		s.env.Call(t, 200, "PUT", "/api/courses/progress/"+id(topic)+"/ping", u.Token, nil)
		r = s.must(req{path: page, token: tok}, http.StatusOK)
		if !strings.Contains(r.text(), `data-status="2"`) || strings.Contains(r.text(), "Continue") {
			t.Fatalf("in progress by its ping alone, the page offers to continue: %s", r.text())
		}
		for _, want := range []string{`action="` + page + `/cmi5" target="cmi5-frame"`, `name="cmi5-frame"`, `/assets/cmi5.js?v=`, `title="E-learning module: Geology"`, ">Open the activity<"} {
			if !strings.Contains(r.text(), want) {
				t.Fatalf("the topic page lacks %s", want)
			}
		}

		// The launch sends the frame to the AU, on the content origin.
		origin := "http://" + s.env.Host
		content := "http://" + s.env.Host + ":" + s.contentPort
		r = s.must(req{method: "POST", path: page + "/cmi5", token: tok}, http.StatusSeeOther)
		loc, err := url.Parse(r.header.Get("Location"))
		if err != nil || !strings.HasPrefix(loc.String(), content+"/api/cmi5/content/") || !strings.HasSuffix(loc.Path, "/index.html") {
			t.Fatalf("launch: %q", r.header.Get("Location"))
		}
		q := loc.Query()
		if q.Get("endpoint") != content+"/api/xapi/" || !strings.HasPrefix(q.Get("fetch"), content+"/api/cmi5/fetch?code=") ||
			q.Get("registration") == "" || q.Get("actor") == "" || q.Get("activityId") == "" {
			t.Fatalf("launch parameters: %v", q)
		}
		r = s.must(req{path: loc.RequestURI(), content: true}, http.StatusOK)
		if !strings.Contains(r.text(), "Introduction to Geology") {
			t.Fatal("the AU's page passes through")
		}
		if r.header.Get("Set-Cookie") != "" || !strings.Contains(strings.Join(r.header.Values("Content-Security-Policy"), ","), "frame-ancestors 'self' ") {
			t.Fatalf("content origin headers: %v", r.header)
		}
		s.must(req{path: strings.Replace(loc.Path, "index.html", "js/cmi5.min.js", 1), content: true}, http.StatusOK)
		// The frontend's origin serves no package file.
		s.must(req{path: loc.RequestURI(), token: tok}, http.StatusNotFound)
		// Launching and anything but the files and the fetch URL are
		// not passed: they need a token the browser does not hold.
		s.must(req{method: "POST", path: "/api/cmi5/launch/" + id(topic), token: tok, content: true}, http.StatusNotFound)
		s.must(req{method: "POST", path: "/api/cmi5/nothing", token: tok, content: true}, http.StatusNotFound)
		s.must(req{method: "POST", path: "/api/cmi5/launch/" + id(topic), token: tok}, http.StatusNotFound)

		fetch, _ := url.Parse(q.Get("fetch"))
		s.must(req{method: "POST", path: fetch.RequestURI()}, http.StatusNotFound)
		r = s.must(req{method: "POST", path: fetch.RequestURI(), content: true}, http.StatusOK)
		auth, _ := r.get("auth-token").(string)
		if auth == "" {
			t.Fatalf("fetch: %s", r.body)
		}
		// Later calls answer cmi5's error object, with 200 (section 8.2.1).
		if r = s.must(req{method: "POST", path: fetch.RequestURI(), content: true}, http.StatusOK); r.get("error-code") != "1" {
			t.Fatalf("second fetch: %s", r.body)
		}

		// The LRS: LMS.LaunchData names the return page on this origin.
		state := "/api/xapi/activities/state?" + url.Values{"stateId": {"LMS.LaunchData"}, "activityId": {q.Get("activityId")},
			"agent": {q.Get("actor")}, "registration": {q.Get("registration")}}.Encode()
		xapi := map[string]string{"X-Experience-API-Version": "1.0.3"}
		// The session cookie is no credential there.
		s.must(req{path: state, token: tok, headers: xapi, content: true}, http.StatusUnauthorized)
		xapi["Authorization"] = "Basic " + auth
		s.must(req{path: state, headers: xapi}, http.StatusNotFound)
		r = s.must(req{path: state, headers: xapi, content: true}, http.StatusOK)
		if r.get("returnURL") != origin+page+"/cmi5/return" || r.get("launchMode") != "Normal" {
			t.Fatalf("launch data: %s", r.body)
		}
		if r.header.Get("X-Experience-API-Version") == "" || r.header.Get("ETag") == "" {
			t.Fatalf("LRS headers: %v", r.header)
		}
		// A document written through the frontend, with its concurrency.
		bm := strings.Replace(state, "LMS.LaunchData", "suspendData", 1)
		xapi["Content-Type"] = "application/json"
		xapi["If-None-Match"] = "*"
		s.must(req{method: "PUT", path: bm, headers: xapi, body: strings.NewReader(`{"bookmark":"page3"}`), content: true}, http.StatusNoContent)
		s.must(req{method: "PUT", path: bm, headers: xapi, body: strings.NewReader(`{"bookmark":"page4"}`), content: true}, http.StatusPreconditionFailed)

		// The page the AU returns to.
		r = s.must(req{path: page + "/cmi5/return"}, http.StatusOK)
		if !strings.Contains(r.text(), `data-topic="`+page+`"`) || r.header.Get("Content-Security-Policy") == "" {
			t.Fatalf("return page: %s", r.body)
		}
		s.must(req{path: "/learn/x/1/cmi5/return"}, http.StatusNotFound)

		// An AU hosted elsewhere, in its own window: its address stays,
		// its endpoint and fetch URL are on the content origin.
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		part, _ := w.CreateFormFile("package", "cmi5.xml")
		part.Write([]byte(ownWindowXML))
		w.Close()
		res := s.env.Do(apitest.Request{Method: "POST", Path: "/api/admin/cmi5", Token: admin, Body: b.Bytes(), Type: w.FormDataContentType()})
		if res.Status != 201 {
			t.Fatalf("upload: %d %s", res.Status, res.Body)
		}
		own := cmi5Topic(t, s.env, admin, c.lesson, int64(res.Number("data.id")), int64(res.Number("data.aus.0.id")), "Away")
		ownPage := "/learn/" + id(c.course) + "/" + id(own)
		r = s.must(req{path: ownPage, token: tok}, http.StatusOK)
		if !strings.Contains(r.text(), `target="_blank"`) || strings.Contains(r.text(), `name="cmi5-frame"`) {
			t.Fatal("an OwnWindow AU opens a window, not a frame")
		}
		r = s.must(req{method: "POST", path: ownPage + "/cmi5", token: tok}, http.StatusSeeOther)
		loc, _ = url.Parse(r.header.Get("Location"))
		if loc.Host != "cdn.example.com" || loc.Query().Get("lang") != "en" || loc.Query().Get("endpoint") != content+"/api/xapi/" {
			t.Fatalf("launch elsewhere: %s", loc)
		}
	})
}
