package kindtest_test

import (
	"archive/zip"
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/content/kindtest"
	"github.com/lms-platform/lms/internal/fixtures"
)

// The classes GET /api/admin/topics/types lists.
const (
	richTextClass    = `Lms\TopicTypes\Models\TopicContent\RichText`
	pdfClass         = `Lms\TopicTypes\Models\TopicContent\PDF`
	imageClass       = `Lms\TopicTypes\Models\TopicContent\Image`
	audioClass       = `Lms\TopicTypes\Models\TopicContent\Audio`
	videoClass       = `Lms\TopicTypes\Models\TopicContent\Video`
	oembedClass      = `Lms\TopicTypes\Models\TopicContent\OEmbed`
	projectClass     = `Lms\TopicTypeProject\Models\Project`
	h5pClass         = `Lms\TopicTypes\Models\TopicContent\H5P`
	layoutClass      = `Lms\TopicTypes\Models\TopicContent\Layout`
	quizClass        = `Lms\TopicTypeGift\Models\GiftQuiz`
	scormClass       = `Lms\TopicTypes\Models\TopicContent\ScormSco`
	cmi5Class        = `Lms\TopicTypes\Models\TopicContent\Cmi5Au`
	interactiveClass = `Lms\TopicTypes\Models\TopicContent\Interactive`
	liascriptClass   = `Lms\TopicTypeLiaScript\Models\LiaScript`
	ltiClass         = `Lms\TopicTypes\Models\TopicContent\LTI`
)

var (
	pdfData = []byte("%PDF-1.7\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n")
	mp3Data = append([]byte("ID3\x03\x00\x00\x00\x00\x00\x00"), bytes.Repeat([]byte{0}, 64)...)
	mp4Data = []byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom and the movie")
)

func file(name string, data []byte) *client.File {
	return &client.File{Name: name, Content: bytes.NewReader(data)}
}

func jsonInput(b client.PostAdminTopicsBody) kindtest.Input { return kindtest.Input{JSON: &b} }
func formInput(f client.PostAdminTopicsForm) kindtest.Input { return kindtest.Input{Form: &f} }

// fixed is an Invalid input that needs nothing from the world.
func fixed(in kindtest.Input) func(*testing.T, *kindtest.World) kindtest.Input {
	return func(*testing.T, *kindtest.World) kindtest.Input { return in }
}

// markDone completes a topic the way kinds without activity of their own
// complete: the learner's progress write.
func markDone(t *testing.T, w *kindtest.World, topic *client.View) {
	t.Helper()
	apitest.Must(w.Student.PatchCoursesProgressID(w.Ctx(), w.Course, client.WriteInputBody{
		Progress: []client.ProgressWrite{{TopicID: topic.ID, Status: 1}}}))(t)
}

func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, body := range files {
		f, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func cases(t *testing.T) []kindtest.Case {
	return []kindtest.Case{
		richText(), fileKind("pdf", pdfClass, "notes.pdf", pdfData), fileKind("image", imageClass, "pic.png", apitest.PNG(t)),
		fileKind("audio", audioClass, "talk.mp3", mp3Data), fileKind("video", videoClass, "movie.mp4", mp4Data),
		oembed(), project(), h5p(), layout(), quiz(), scorm(), cmi5(), interactive(), liascript(), lti(),
	}
}

func TestKinds(t *testing.T) {
	kindtest.Run(t, cases(t))
}

// TestEveryKindHasACase: a kind registered without a case here fails, so
// no kind escapes the suite.
func TestEveryKindHasACase(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	types := apitest.Must(env.ClientAs("admin").GetAdminTopicsTypes(t.Context()))(t)
	covered := map[string]bool{}
	for _, c := range cases(t) {
		covered[c.Class] = true
	}
	for _, tv := range types {
		if !covered[tv.Class] {
			t.Errorf("the kind %s (%s) has no case in the conformance suite", tv.Kind, tv.Class)
		}
	}
	if len(types) != len(covered) {
		t.Errorf("%d kinds registered, %d cases", len(types), len(covered))
	}
}

func richText() kindtest.Case {
	return kindtest.Case{Class: richTextClass, Kind: "richtext", NotEmpty: []string{"html", "markdown"},
		Create: fixed(jsonInput(client.PostAdminTopicsBody{Markdown: client.Ptr("# Soil\n\nWhat soil is made of.")})),
		Invalid: []kindtest.Invalid{
			{Name: "no content", Input: fixed(jsonInput(client.PostAdminTopicsBody{})), Status: 422, Field: "html"},
		},
		Complete: markDone,
	}
}

// fileKind is one of the file kinds: a file of the kind's type, refused
// when its content is not of the type its name says.
func fileKind(kind, class, name string, data []byte) kindtest.Case {
	var notEmpty []string
	if kind == "video" {
		notEmpty = []string{"videoSiteUrl"}
	}
	return kindtest.Case{Class: class, Kind: kind, Files: true, NotEmpty: notEmpty,
		Create: func(*testing.T, *kindtest.World) kindtest.Input {
			return formInput(client.PostAdminTopicsForm{File: file(name, data)})
		},
		Invalid: []kindtest.Invalid{
			{Name: "content not of its type", Status: 422, Field: "file", Input: func(*testing.T, *kindtest.World) kindtest.Input {
				return formInput(client.PostAdminTopicsForm{File: file(name, []byte("plain text, not the type its name says"))})
			}},
			{Name: "extension not accepted", Status: 422, Field: "file", Input: func(*testing.T, *kindtest.World) kindtest.Input {
				return formInput(client.PostAdminTopicsForm{File: file("program.exe", data)})
			}},
			{Name: "no file", Input: fixed(jsonInput(client.PostAdminTopicsBody{})), Status: 422},
		},
		Complete: markDone,
	}
}

// oembed serves a page with an oEmbed discovery link on the loopback
// network, which the server may fetch in this suite.
func oembed() kindtest.Case {
	var site *httptest.Server
	return kindtest.Case{Class: oembedClass, Kind: "oembed", NotEmpty: []string{"url"},
		Configure: func(c *config.Config) { c.FetchAllowPrivate = true },
		Setup: func(t *testing.T, w *kindtest.World) {
			mux := http.NewServeMux()
			mux.HandleFunc("/watch", func(rw http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(rw, `<html><head><link rel="alternate" type="application/json+oembed" href="/oembed?url=%s"></head><body>Video</body></html>`,
					url.QueryEscape("http://"+r.Host+"/watch"))
			})
			mux.HandleFunc("/oembed", func(rw http.ResponseWriter, r *http.Request) {
				rw.Header().Set("Content-Type", "application/json")
				json.NewEncoder(rw).Encode(map[string]any{"version": "1.0", "type": "video", "title": "A river",
					"provider_name": "Local videos", "width": 640, "height": 360,
					"html": `<iframe src="http://` + r.Host + `/embed/1" width="640" height="360"></iframe>`})
			})
			site = httptest.NewServer(mux)
			t.Cleanup(site.Close)
		},
		Create: func(*testing.T, *kindtest.World) kindtest.Input {
			return jsonInput(client.PostAdminTopicsBody{URL: client.Ptr(site.URL + "/watch")})
		},
		Invalid: []kindtest.Invalid{
			{Name: "not http", Input: fixed(jsonInput(client.PostAdminTopicsBody{URL: client.Ptr("ftp://example.com/x")})),
				Status: 422, Field: "url", Message: "http or https"},
			{Name: "page without oEmbed", Status: 422, Field: "url", Message: "no oEmbed", Input: func(*testing.T, *kindtest.World) kindtest.Input {
				return jsonInput(client.PostAdminTopicsBody{URL: client.Ptr(site.URL + "/missing")})
			}},
		},
		Complete: markDone,
	}
}

// project: the learner hands in a file, then marks the topic done.
func project() kindtest.Case {
	return kindtest.Case{Class: projectClass, Kind: "project", NotEmpty: []string{"max_size"}, Clears: []string{"instructions", "accept"},
		Create: fixed(jsonInput(client.PostAdminTopicsBody{Instructions: client.Ptr("Hand in your notes as a PDF."),
			Accept: client.Ptr("pdf")})),
		Invalid: []kindtest.Invalid{
			{Name: "size below zero", Input: fixed(jsonInput(client.PostAdminTopicsBody{Instructions: client.Ptr("x"),
				MaxSize: client.Ptr(int64(-1))})), Status: 422, Field: "max_size"},
		},
		Complete: func(t *testing.T, w *kindtest.World, topic *client.View) {
			apitest.Must(w.Student.PostTopicsIDProject(w.Ctx(), topic.ID, client.PostTopicsIDProjectForm{File: file("notes.pdf", pdfData)}))(t)
			markDone(t, w, topic)
		},
	}
}

// h5p: the package is uploaded with the topic; the player's xAPI
// statement of the whole content completes it.
func h5p() kindtest.Case {
	return kindtest.Case{Class: h5pClass, Kind: "h5p", Shared: []string{"h5p/"}, NotEmpty: []string{"content_id"},
		Create: func(t *testing.T, w *kindtest.World) kindtest.Input {
			return formInput(client.PostAdminTopicsForm{ExtraFiles: map[string]client.File{
				"package": *file("H5P.TrueFalse.h5p", fixtures.Read(t, "h5p/hub/H5P.TrueFalse.h5p"))}})
		},
		Invalid: []kindtest.Invalid{
			{Name: "not a package", Status: 422, Message: "H5P", Input: fixed(formInput(client.PostAdminTopicsForm{
				ExtraFiles: map[string]client.File{"package": *file("broken.h5p", []byte("not a zip"))}}))},
		},
		Complete: func(t *testing.T, w *kindtest.World, topic *client.View) {
			id, _ := apitest.Lookup(topic.Topicable, "content_id").(string)
			if id == "" {
				t.Fatalf("no content_id: %v", topic.Topicable)
			}
			object := "http://" + w.Env.Host + "/h5p/embed/play/" + id
			st := apitest.Must(w.Student.PostCoursesProgressIDH5P(w.Ctx(), topic.ID, map[string]any{"statement": map[string]any{
				"actor": map[string]any{"name": "Learner"}, "verb": map[string]any{"id": "http://adlnet.gov/expapi/verbs/completed"},
				"object": map[string]any{"id": object, "definition": map[string]any{
					"extensions": map[string]any{"http://h5p.org/x-api/h5p-local-content-id": id}}},
				"result": map[string]any{"score": map[string]any{"raw": 1.0, "max": 1.0}, "completion": true, "success": true},
			}}))(t)
			if !st.Completed {
				t.Fatalf("the statement did not complete the topic: %+v", st)
			}
		},
	}
}

// layout: a practice activity whose answers only a check reveals.
func layout() kindtest.Case {
	doc := []client.PostAdminTopicsBodyDocumentItem{
		{Component: "PracticeActivity", ID: client.Ptr("check"), Props: map[string]any{"title": "Check yourself", "questions": []any{
			map[string]any{"prompt": "2 + 2?", "options": []any{
				map[string]any{"text": "3", "correct": false}, map[string]any{"text": "4", "correct": true}},
				"hints": []any{"Count on your fingers twice."}, "solution": "Two and two make four, always."},
		}}},
	}
	return kindtest.Case{Class: layoutClass, Kind: "layout", SelfCompleting: true, NotEmpty: []string{"document", "fallback"},
		Create: fixed(jsonInput(client.PostAdminTopicsBody{Document: doc, Fallback: client.Ptr("Practise adding numbers.")})),
		Invalid: []kindtest.Invalid{
			{Name: "unknown component", Input: fixed(jsonInput(client.PostAdminTopicsBody{
				Document: []client.PostAdminTopicsBodyDocumentItem{{Component: "Marquee", Props: map[string]any{}}}})), Status: 422},
			{Name: "a bad node and an empty fallback", Input: fixed(jsonInput(client.PostAdminTopicsBody{Fallback: client.Ptr(""),
				Document: []client.PostAdminTopicsBodyDocumentItem{{Component: "Marquee", Props: map[string]any{}}}})), Status: 422,
				Fields: []string{"fallback"}, Says: []string{"Marquee"}},
			{Name: "problems in two nodes", Input: fixed(jsonInput(client.PostAdminTopicsBody{Fallback: client.Ptr("Practise."),
				Document: []client.PostAdminTopicsBodyDocumentItem{{Component: "Marquee", Props: map[string]any{}},
					{Component: "Callout", Props: map[string]any{"tone": "loud", "body": "x"}}}})), Status: 422,
				Fields: []string{"document[0].component", "document[1].props.tone"}},
		},
		Answers: []string{"correct", "fingers", "always"}, AuthorSees: true,
		Complete: func(t *testing.T, w *kindtest.World, topic *client.View) {
			res := apitest.Must(w.Student.PostTopicsIDPracticeCheck(w.Ctx(), topic.ID, client.CheckInput{Node: 0, Question: 0,
				Selected: []int64{1}}))(t)
			if !res.Correct {
				t.Errorf("the right option was not right: %+v", res)
			}
		},
	}
}

// quiz: an attempt answered and ended.
func quiz() kindtest.Case {
	return kindtest.Case{Class: quizClass, Kind: "quiz", SelfCompleting: true,
		NotEmpty: []string{"questions", "maxAttempts", "minPassScore", "review"}, Clears: []string{"intro"},
		Create: fixed(jsonInput(client.PostAdminTopicsBody{Value: "Read the chapter first.",
			Questions: []client.PostAdminTopicsBodyQuestionsItem{{Gift: client.Ptr("::Sun:: The sun is a star. {T#Think again.#Quite right, a star.}")}}})),
		Invalid: []kindtest.Invalid{
			{Name: "broken GIFT", Input: fixed(jsonInput(client.PostAdminTopicsBody{
				Questions: []client.PostAdminTopicsBodyQuestionsItem{{Gift: client.Ptr("Broken {=a")}}})), Status: 422,
				Field: "questions.0.gift", Message: "expected }"},
			{Name: "no right option", Input: fixed(jsonInput(client.PostAdminTopicsBody{
				Questions: []client.PostAdminTopicsBodyQuestionsItem{{Prompt: client.Ptr("Pick"),
					Options: []client.PostAdminTopicsBodyQuestionsItemOptionsItem{{Text: client.Ptr("a")}, {Text: client.Ptr("b")}}}}})),
				Status: 422, Field: "questions.0"},
			{Name: "no questions", Input: fixed(jsonInput(client.PostAdminTopicsBody{})), Status: 422},
		},
		Answers: []string{"Quite right", "Think again", "The sun is a star"},
		Complete: func(t *testing.T, w *kindtest.World, topic *client.View) {
			ctx := w.Ctx()
			at := apitest.Must(w.Student.PostQuizAttempts(ctx, client.StartInputBody{TopicID: topic.ID}))(t)
			if len(at.Questions) != 1 {
				t.Fatalf("attempt: %+v", at)
			}
			apitest.Must(w.Student.PostQuizAttemptsIDAnswer(ctx, at.ID, client.AnswerInputBody{QuestionID: at.Questions[0].ID,
				Answer: client.Response{Truth: client.Ptr(true)}}))(t)
			ended := apitest.Must(w.Student.PostQuizAttemptsIDEnd(ctx, at.ID))(t)
			if ended.Score == nil || *ended.Score != 1 {
				t.Errorf("ended attempt: %+v", ended)
			}
		},
	}
}

// scorm: the package is uploaded first; the SCO's commit of a completed
// lesson status completes the topic.
func scorm() kindtest.Case {
	var sco int64
	return kindtest.Case{Class: scormClass, Kind: "scorm", SelfCompleting: true, Shared: []string{"scorm/"},
		NotEmpty: []string{"package", "sco"},
		Create: func(t *testing.T, w *kindtest.World) kindtest.Input {
			pkg := apitest.Must(w.Admin.PostAdminScormUpload(w.Ctx(), client.PostAdminScormUploadForm{
				Package: file("golf.zip", fixtures.Read(t, "scorm/RuntimeBasicCalls_SCORM12.zip"))}))(t)
			if len(pkg.Scos) != 1 {
				t.Fatalf("package: %+v", pkg)
			}
			sco = pkg.Scos[0].ID
			return jsonInput(client.PostAdminTopicsBody{Package: client.Ptr(pkg.ID)})
		},
		Invalid: []kindtest.Invalid{
			{Name: "several SCOs, none chosen", Status: 422, Field: "sco", Input: func(t *testing.T, w *kindtest.World) kindtest.Input {
				pkg := apitest.Must(w.Admin.PostAdminScormUpload(w.Ctx(), client.PostAdminScormUploadForm{
					Package: file("multi.zip", fixtures.Read(t, "scorm/PrerequisitesTest_SCORM12.zip"))}))(t)
				return jsonInput(client.PostAdminTopicsBody{Package: client.Ptr(pkg.ID)})
			}},
			{Name: "not a package", Status: 422, Input: fixed(formInput(client.PostAdminTopicsForm{
				ExtraFiles: map[string]client.File{"package": *file("golf.zip", []byte("not a zip"))}}))},
			{Name: "a manifest with two problems", Status: 422, Field: "package", Says: []string{"<title>", "not in the package"},
				Input: func(t *testing.T, w *kindtest.World) kindtest.Input {
					return formInput(client.PostAdminTopicsForm{ExtraFiles: map[string]client.File{"package": *file("two.zip", zipOf(t, map[string]string{
						"imsmanifest.xml": `<manifest identifier="m"><organizations default="o"><organization identifier="o">` +
							`<item identifier="i" identifierref="r"><title>One</title></item></organization></organizations>` +
							`<resources><resource identifier="r" type="webcontent" adlcp:scormtype="sco" href="missing.html"/></resources></manifest>`,
					}))}})
				}},
		},
		Complete: func(t *testing.T, w *kindtest.World, topic *client.View) {
			ctx := w.Ctx()
			l := apitest.Must(w.Student.PostScormLaunchID(ctx, sco, client.LaunchInputBody{TopicID: topic.ID}))(t)
			apitest.Must(w.Anonymous.PostScormTracksIDCommit(ctx, sco, client.PostScormTracksIDCommitParams{XLmsTrackingToken: l.Token},
				client.CommitInput{Seq: 1, Terminate: client.Ptr(true), Cmi: map[string]any{"cmi.core.lesson_status": "completed",
					"cmi.core.score.raw": "90", "cmi.core.session_time": "0000:01:00.00", "cmi.core.exit": ""}}))(t)
		},
	}
}

// cmi5: the AU fetches its auth token, reads LMS.LaunchData and the
// learner preferences, and sends initialized and completed statements to
// the LRS.
func cmi5() kindtest.Case {
	return kindtest.Case{Class: cmi5Class, Kind: "cmi5", SelfCompleting: true, Shared: []string{"cmi5/"},
		NotEmpty: []string{"package", "au"},
		Create: func(t *testing.T, w *kindtest.World) kindtest.Input {
			pkg := apitest.Must(w.Admin.PostAdminCmi5(w.Ctx(), client.PostAdminCmi5Form{
				Package: file("course.zip", fixtures.Read(t, "cmi5/single_au_basic_responsive.zip"))}))(t)
			return jsonInput(client.PostAdminTopicsBody{Package: client.Ptr(pkg.ID)})
		},
		Invalid: []kindtest.Invalid{
			{Name: "several AUs, none chosen", Status: 422, Field: "au", Input: func(t *testing.T, w *kindtest.World) kindtest.Input {
				pkg := apitest.Must(w.Admin.PostAdminCmi5(w.Ctx(), client.PostAdminCmi5Form{
					Package: file("course.zip", fixtures.Read(t, "cmi5/multi_au_framed.zip"))}))(t)
				return jsonInput(client.PostAdminTopicsBody{Package: client.Ptr(pkg.ID)})
			}},
			{Name: "a course structure with two problems", Status: 422, Field: "package", Says: []string{"does not hold", "already used"},
				Input: func(t *testing.T, w *kindtest.World) kindtest.Input {
					au := `<au id="https://example.org/au/1"><title><langstring lang="en">AU</langstring></title>` +
						`<description><langstring lang="en">AU</langstring></description><url>index.html</url></au>`
					return formInput(client.PostAdminTopicsForm{ExtraFiles: map[string]client.File{"package": *file("two.zip", zipOf(t, map[string]string{
						"cmi5.xml": `<courseStructure xmlns="https://w3id.org/xapi/profiles/cmi5/v1/CourseStructure.xsd">` +
							`<course id="https://example.org/course"><title><langstring lang="en">C</langstring></title>` +
							`<description><langstring lang="en">C</langstring></description></course>` + au + au + `</courseStructure>`,
					}))}})
				}},
		},
		Complete: completeCmi5,
	}
}

func completeCmi5(t *testing.T, w *kindtest.World, topic *client.View) {
	ctx := w.Ctx()
	launch := apitest.Must(w.Student.PostCmi5LaunchID(ctx, topic.ID, client.LaunchInput{}))(t)
	u, err := url.Parse(launch.URL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	fetchURL, err := url.Parse(q.Get("fetch"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.Anonymous.PostCmi5Fetch(ctx, client.PostCmi5FetchParams{Code: client.Ptr(fetchURL.Query().Get("code"))})
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	var fetched struct {
		Token string `json:"auth-token"`
	}
	json.NewDecoder(res.Body).Decode(&fetched)
	res.Body.Close()
	if fetched.Token == "" {
		t.Fatal("the fetch URL gave no auth token")
	}
	au := w.Anonymous.WithHeader("Authorization", "Basic "+fetched.Token).WithHeader("X-Experience-API-Version", "1.0.3")
	var actor any
	json.Unmarshal([]byte(q.Get("actor")), &actor)
	activity := q.Get("activityId")
	read := func(path string, out any) {
		t.Helper()
		res, err := au.Do(ctx, "GET", "/api/xapi/"+path, nil, "")
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("GET %s: %v %v", path, err, res)
		}
		defer res.Body.Close()
		json.NewDecoder(res.Body).Decode(out)
	}
	var launchData struct {
		ContextTemplate json.RawMessage `json:"contextTemplate"`
	}
	read("activities/state?"+url.Values{"stateId": {"LMS.LaunchData"}, "activityId": {activity}, "agent": {q.Get("actor")},
		"registration": {q.Get("registration")}}.Encode(), &launchData)
	read("agents/profile?"+url.Values{"profileId": {"cmi5LearnerPreferences"}, "agent": {q.Get("actor")}}.Encode(), &map[string]any{})
	send := func(verb string, result map[string]any, moveOn bool) {
		t.Helper()
		category := []any{map[string]any{"id": "https://w3id.org/xapi/cmi5/context/categories/cmi5"}}
		if moveOn {
			category = append(category, map[string]any{"id": "https://w3id.org/xapi/cmi5/context/categories/moveon"})
		}
		var context map[string]any
		json.Unmarshal(launchData.ContextTemplate, &context)
		context["registration"] = q.Get("registration")
		context["contextActivities"].(map[string]any)["category"] = category
		st := map[string]any{"id": uuid(), "actor": actor, "verb": map[string]any{"id": verb},
			"object":    map[string]any{"id": activity, "objectType": "Activity"},
			"timestamp": time.Now().UTC().Format(time.RFC3339Nano), "context": context}
		if result != nil {
			st["result"] = result
		}
		raw, _ := json.Marshal(st)
		res, err := au.PostXapiStatements(ctx, bytes.NewReader(raw), "application/json")
		if err != nil {
			t.Fatalf("%s: %v", verb, err)
		}
		res.Body.Close()
	}
	send("http://adlnet.gov/expapi/verbs/initialized", nil, false)
	send("http://adlnet.gov/expapi/verbs/completed", map[string]any{"completion": true, "duration": "PT1M"}, true)
	send("http://adlnet.gov/expapi/verbs/terminated", map[string]any{"duration": "PT1M"}, false)
}

func uuid() string {
	b := make([]byte, 16)
	rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// interactive: the app's package comes with the topic; the app reports
// reaching its last step.
func interactive() kindtest.Case {
	manifest := `{"title":"Pendulum","entry":"index.html","steps":[{"id":"intro","title":"Intro"},{"id":"done","title":"Done"}]}`
	return kindtest.Case{Class: interactiveClass, Kind: "interactive", SelfCompleting: true, Shared: []string{"interactive/"},
		NotEmpty: []string{"package", "version", "completion", "display", "height", "acceptNetwork"},
		Clears:   []string{"text", "startStep", "endStep"},
		Create: func(t *testing.T, w *kindtest.World) kindtest.Input {
			return formInput(client.PostAdminTopicsForm{Text: client.Ptr("Watch it swing."), StartStep: client.Ptr("intro"),
				EndStep: client.Ptr("done"), File: file("app.zip", zipOf(t, map[string]string{
					"lms-interactive.json": manifest, "index.html": `<!doctype html><title>App</title><p>App</p>`}))})
		},
		Invalid: []kindtest.Invalid{
			{Name: "no manifest", Status: 422, Input: func(t *testing.T, w *kindtest.World) kindtest.Input {
				return formInput(client.PostAdminTopicsForm{File: file("app.zip", zipOf(t, map[string]string{"index.html": "<p>x</p>"}))})
			}},
			{Name: "pass score without on_score", Status: 422, Input: func(t *testing.T, w *kindtest.World) kindtest.Input {
				return formInput(client.PostAdminTopicsForm{PassScore: client.Ptr(int64(50)), File: file("app.zip", zipOf(t, map[string]string{
					"lms-interactive.json": manifest, "index.html": "<p>x</p>"}))})
			}},
		},
		Complete: func(t *testing.T, w *kindtest.World, topic *client.View) {
			apitest.Must(w.Student.PostInteractiveProgressID(w.Ctx(), topic.ID, client.AppProgressInput{Event: "open"}))(t)
			apitest.Must(w.Student.PostInteractiveProgressID(w.Ctx(), topic.ID, client.AppProgressInput{Event: "step",
				Step: client.Ptr("done")}))(t)
		},
	}
}

// liascript: the workshop course; the learner visits every section and
// solves every quiz.
func liascript() kindtest.Case {
	return kindtest.Case{Class: liascriptClass, Kind: "liascript", SelfCompleting: true, Shared: []string{"liascript/"},
		NotEmpty: []string{"markdown", "course", "liascriptCompletion"},
		Create: func(t *testing.T, w *kindtest.World) kindtest.Input {
			return jsonInput(client.PostAdminTopicsBody{Markdown: client.Ptr(string(fixtures.Read(t, "liascript/workshop.md")))})
		},
		Invalid: []kindtest.Invalid{
			{Name: "blank markdown", Input: fixed(jsonInput(client.PostAdminTopicsBody{Markdown: client.Ptr("  ")})), Status: 422},
			{Name: "unknown completion", Input: fixed(jsonInput(client.PostAdminTopicsBody{Markdown: client.Ptr("# Soil\n\nText."),
				LiascriptCompletion: client.Ptr("never")})), Status: 422, Field: "liascriptCompletion"},
			{Name: "unknown completion and blank markdown", Input: fixed(jsonInput(client.PostAdminTopicsBody{Markdown: client.Ptr("  "),
				LiascriptCompletion: client.Ptr("never")})), Status: 422, Fields: []string{"liascriptCompletion", "markdown"}},
		},
		Complete: func(t *testing.T, w *kindtest.World, topic *client.View) {
			sections, _ := apitest.Lookup(topic.Topicable, "structure.sections").([]any)
			quizzes, _ := apitest.Lookup(topic.Topicable, "structure.quizzes").(float64)
			if len(sections) == 0 {
				t.Fatalf("no sections in %v", topic.Topicable)
			}
			in := client.LiaProgressInput{}
			for i := range sections {
				in.Visited = append(in.Visited, int64(i))
			}
			for i := range int64(quizzes) {
				in.Quizzes = append(in.Quizzes, client.LiaQuizResult{Quiz: i, Solved: true})
			}
			apitest.Must(w.Student.PostLiascriptProgressID(w.Ctx(), topic.ID, in))(t)
		},
	}
}

// lti: an external tool whose key the test holds; the tool sends a
// completed score back through AGS.
func lti() kindtest.Case {
	var tool *client.ExternalTool
	var key *rsa.PrivateKey
	return kindtest.Case{Class: ltiClass, Kind: "lti", SelfCompleting: true, NotEmpty: []string{"tool", "score_maximum"},
		Clears: []string{"url", "custom"},
		Setup: func(t *testing.T, w *kindtest.World) {
			var err error
			if key, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
				t.Fatal(err)
			}
			der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
			if err != nil {
				t.Fatal(err)
			}
			pub := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
			tool = apitest.Must(w.Admin.PostAdminLTITools(w.Ctx(), client.ToolInput{Name: "Tool", PublicKey: &pub,
				LoginURL: "https://tool.example/login", TargetLinkURI: "https://tool.example/launch",
				RedirectUris: []string{"https://tool.example/launch"}}))(t)
		},
		Create: func(*testing.T, *kindtest.World) kindtest.Input {
			return jsonInput(client.PostAdminTopicsBody{Tool: client.Ptr(tool.ID), Custom: map[string]string{"chapter": "3"},
				URL: client.Ptr("https://tool.example/launch?chapter=3")})
		},
		Invalid: []kindtest.Invalid{
			{Name: "unknown tool", Input: fixed(jsonInput(client.PostAdminTopicsBody{Tool: client.Ptr(int64(999999))})), Status: 422,
				Field: "tool"},
			{Name: "no tool", Input: fixed(jsonInput(client.PostAdminTopicsBody{})), Status: 422, Field: "tool"},
		},
		Complete: func(t *testing.T, w *kindtest.World, topic *client.View) {
			ctx := w.Ctx()
			urls := apitest.Must(w.Admin.GetAdminLTIPlatform(ctx))(t)
			now := w.Env.Clock.Now()
			tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"iss": tool.ClientID, "sub": tool.ClientID,
				"aud": urls.Issuer + "/api/lti/token", "iat": now.Unix(), "exp": now.Add(time.Minute).Unix(), "jti": uuid()})
			assertion, err := tok.SignedString(key)
			if err != nil {
				t.Fatal(err)
			}
			form := url.Values{"grant_type": {"client_credentials"},
				"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"}, "client_assertion": {assertion},
				"scope": {"https://purl.imsglobal.org/spec/lti-ags/scope/lineitem https://purl.imsglobal.org/spec/lti-ags/scope/score"}}
			var issued struct {
				AccessToken string `json:"access_token"`
			}
			readJSON(t, must(t)(w.Anonymous.PostLTIToken(ctx, strings.NewReader(form.Encode()), "application/x-www-form-urlencoded")), &issued)
			toolClient := w.Anonymous.WithToken(issued.AccessToken)
			var item struct {
				ID string `json:"id"`
			}
			readJSON(t, must(t)(toolClient.PostLTIAgsIDLineitems(ctx, topic.ID, strings.NewReader(`{"label":"Week 1","scoreMaximum":10}`),
				"application/vnd.ims.lis.v2.lineitem+json")), &item)
			itemID, err := strconv.ParseInt(path.Base(item.ID), 10, 64)
			if err != nil {
				t.Fatalf("line item id %q: %v", item.ID, err)
			}
			score := fmt.Sprintf(`{"userId":"%d","scoreGiven":8,"scoreMaximum":10,"activityProgress":"Completed",`+
				`"gradingProgress":"FullyGraded","timestamp":"%s"}`, w.StudentID, now.UTC().Format("2006-01-02T15:04:05.000Z07:00"))
			res := must(t)(toolClient.PostLTIAgsIDLineitemsIDScores(ctx, topic.ID, itemID, strings.NewReader(score),
				"application/vnd.ims.lis.v1.score+json"))
			res.Body.Close()
		},
	}
}

// must fails the test on a failed raw call (an answer that is not the
// envelope) and returns the answer.
func must(t *testing.T) func(*http.Response, error) *http.Response {
	return func(res *http.Response, err error) *http.Response {
		t.Helper()
		if err != nil {
			t.Fatalf("API call: %v", err)
		}
		return res
	}
}

func readJSON(t *testing.T, res *http.Response, out any) {
	t.Helper()
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("answer %d: %v: %s", res.StatusCode, err, raw)
	}
}
