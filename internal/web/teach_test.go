package web

import (
	"bytes"
	"html"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/kinds/interactive/interactivetest"
	"github.com/lms-platform/lms/internal/media/mediatest"
)

// multipartReq is a form of the authoring pages as a browser sends it:
// the CSRF token first, then the fields, then at most one file.
func multipartReq(path, token string, fields [][2]string, fileField, fileName string, data []byte) req {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	w.WriteField(csrfField, csrfMAC(testCSRFSecret, csrfForm))
	for _, f := range fields {
		w.WriteField(f[0], f[1])
	}
	if fileField != "" {
		part, _ := w.CreateFormFile(fileField, fileName)
		part.Write(data)
	}
	w.Close()
	return req{method: "POST", path: path, token: token, body: &b,
		headers: map[string]string{"Content-Type": w.FormDataContentType()}}
}

func readFixture(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(fixture(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var topicLink = regexp.MustCompile(`/teach/courses/\d+/topics/(\d+)`)

// addTopic posts the "Add topic" form and returns the new topic's id
// (from the redirect to its page).
func (s *stack) addTopic(t *testing.T, course int64, token, kind string, fields [][2]string, fileField, fileName string, data []byte) int64 {
	t.Helper()
	r := s.must(multipartReq("/teach/courses/"+id(course)+"/topics/new?kind="+kind, token, fields, fileField, fileName, data),
		http.StatusSeeOther)
	m := topicLink.FindStringSubmatch(r.header.Get("Location"))
	if m == nil {
		t.Fatalf("%s: redirected to %q", kind, r.header.Get("Location"))
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// TestTeachCourseAuthoring walks the authoring pages over HTTP as a tutor:
// the dashboard, a course created and edited, lessons added, moved,
// cloned and deleted, topics of several kinds added (with the API's
// messages next to their fields), and the permissions of each role.
func TestTeachCourseAuthoring(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		ctx := t.Context()
		tutor, student := s.env.NewUser("tutor"), s.env.NewUser("student")

		// Who may author.
		s.must(req{path: "/teach", token: student.Token}, http.StatusForbidden)
		if r := s.must(req{path: "/teach"}, http.StatusSeeOther); !strings.HasPrefix(r.header.Get("Location"), "/login") {
			t.Fatalf("anonymous: %s", r.header.Get("Location"))
		}
		r := s.must(req{path: "/teach", token: tutor.Token, headers: map[string]string{"Accept-Language": "pl-PL,pl;q=0.9"}}, http.StatusOK)
		if !strings.Contains(r.text(), "Nowy kurs") || !strings.Contains(r.text(), `lang="pl"`) {
			t.Fatalf("the Polish dashboard: %.600s", r.body)
		}

		// Sign-in lands tutors on the dashboard, learners on their courses.
		for _, c := range []struct {
			u    *apitest.User
			want string
		}{{tutor, "/teach"}, {student, "/my"}} {
			r := s.must(req{method: "POST", path: "/login", form: url.Values{"email": {c.u.Email}, "password": {c.u.Password}}}, http.StatusSeeOther)
			if r.header.Get("Location") != c.want {
				t.Errorf("%s lands on %s, want %s", c.u.Email, r.header.Get("Location"), c.want)
			}
		}

		// Create: the API's message next to the empty title.
		bad := s.must(multipartReq("/teach/courses/new", tutor.Token, [][2]string{{"title", ""}, {"status", "draft"}}, "", "", nil),
			http.StatusUnprocessableEntity)
		if !strings.Contains(bad.text(), `id="title-error"`) {
			t.Fatalf("no message next to the title: %.2000s", bad.body)
		}
		r = s.must(multipartReq("/teach/courses/new", tutor.Token, [][2]string{{"title", "Birds of the coast"},
			{"summary", "Gulls, terns and waders."}, {"status", "draft"}, {"tags", "birds, coast"}, {"active_from", "2026-01-01"}},
			"image", "gull.png", apitest.PNG(t)), http.StatusSeeOther)
		loc := r.header.Get("Location")
		m := regexp.MustCompile(`^/teach/courses/(\d+)\?notice=created$`).FindStringSubmatch(loc)
		if m == nil {
			t.Fatalf("created: %s", loc)
		}
		course, _ := strconv.ParseInt(m[1], 10, 64)
		api := s.env.Client(s.env.Host, tutor.Token)
		c := apitest.Must(api.GetAdminCoursesID(ctx, course))(t)
		if c.Title != "Birds of the coast" || strings.Join(c.Tags, ",") != "birds,coast" || c.ImageURL == nil || c.ActiveFrom == nil {
			t.Fatalf("the course as created: %+v", c)
		}
		// Edit: publish.
		s.must(multipartReq("/teach/courses/"+id(course), tutor.Token, [][2]string{{"title", "Birds of the coast"},
			{"summary", "Gulls, terns and waders."}, {"status", "published"}, {"tags", "birds"}}, "", "", nil), http.StatusSeeOther)
		if c := apitest.Must(api.GetAdminCoursesID(ctx, course))(t); c.Status != "published" || len(c.Tags) != 1 {
			t.Fatalf("the course as saved: %+v", c)
		}
		// Another tutor's course is not this tutor's to edit.
		other := s.env.NewUser("tutor")
		s.must(req{path: "/teach/courses/" + id(course), token: other.Token}, http.StatusForbidden)

		// Lessons.
		for _, title := range []string{"Gulls", "Terns"} {
			s.must(req{method: "POST", path: "/teach/courses/" + id(course) + "/lessons", token: tutor.Token,
				form: url.Values{"title": {title}}}, http.StatusSeeOther)
		}
		prog := apitest.Must(api.GetAdminCoursesIDProgram(ctx, course))(t)
		gulls, terns := prog.Lessons[0].ID, prog.Lessons[1].ID

		// Topics of several kinds.
		reading := s.addTopic(t, course, tutor.Token, "richtext", [][2]string{{"lesson", id(gulls)}, {"title", "About gulls"},
			{"markdown", "# Gulls\n\nLoud **birds**."}}, "", "", nil)
		quiz := s.addTopic(t, course, tutor.Token, "quiz", [][2]string{{"lesson", id(gulls)}, {"title", "Gull quiz"},
			{"gift", string(readFixture(t, "gift/TFTwoFeedback.gift")) + "\n\nWhich bird dives? {=tern ~gull}\n"},
			{"maxAttempts", "3"}, {"minPassScore", "1"}}, "", "", nil)
		page := s.must(req{path: "/teach/courses/" + id(course) + "/topics/" + id(quiz), token: tutor.Token}, http.StatusOK)
		if !strings.Contains(page.text(), "Which bird dives?") || !strings.Contains(page.text(), `<span class="teach-answer">tern</span>`) {
			t.Fatalf("the quiz's parsed questions: %.3000s", page.body)
		}
		image := s.addTopic(t, course, tutor.Token, "image", [][2]string{{"lesson", id(terns)}, {"title", "A tern"}}, "file", "tern.png", apitest.PNG(t))
		h5p := s.addTopic(t, course, tutor.Token, "h5p", [][2]string{{"lesson", id(terns)}, {"title", "Greeting"}},
			"package", "greeting.h5p", readFixture(t, "h5p/valid/valid2.h5p"))
		// A SCORM package of several SCOs: the SCO is chosen next.
		multi := s.must(multipartReq("/teach/courses/"+id(course)+"/topics/new?kind=scorm", tutor.Token,
			[][2]string{{"lesson", id(terns)}, {"title", "Modules"}}, "package", "modules.zip", readFixture(t, "scorm/PrerequisitesTest_SCORM12.zip")),
			http.StatusUnprocessableEntity)
		pkg := regexp.MustCompile(`name="package" value="(\d+)"`).FindStringSubmatch(multi.text())
		sco := regexp.MustCompile(`name="sco" value="(\d+)"`).FindAllStringSubmatch(multi.text(), -1)
		if pkg == nil || len(sco) != 4 {
			t.Fatalf("the SCO choice: %.3000s", multi.body)
		}
		scorm := s.addTopic(t, course, tutor.Token, "scorm", [][2]string{{"lesson", id(terns)}, {"title", "Modules"},
			{"package", pkg[1]}, {"sco", sco[1][1]}}, "", "", nil)
		// A broken H5P package: the service's message next to the upload.
		broken := s.must(multipartReq("/teach/courses/"+id(course)+"/topics/new?kind=h5p", tutor.Token,
			[][2]string{{"lesson", id(terns)}, {"title", "Broken"}}, "package", "broken.h5p", readFixture(t, "h5p/invalid/corrupt_archive.h5p")),
			http.StatusUnprocessableEntity)
		if !strings.Contains(broken.text(), `class="field-error" id="upload-error"`) {
			t.Fatalf("no message next to the package: %.3000s", broken.body)
		}

		edit := s.must(req{path: "/teach/courses/" + id(course), token: tutor.Token}, http.StatusOK).text()
		for _, n := range []int64{reading, quiz, image, h5p, scorm} {
			if !strings.Contains(edit, `id="topic-`+id(n)+`"`) {
				t.Errorf("topic %d is not in the program", n)
			}
		}

		// Reorder: the quiz up before the reading, the terns lesson first
		// (the drag-and-drop way: to=1).
		s.must(req{method: "POST", path: "/teach/courses/" + id(course) + "/topics/" + id(quiz) + "/move", token: tutor.Token,
			form: url.Values{"dir": {"up"}}}, http.StatusSeeOther)
		s.must(req{method: "POST", path: "/teach/courses/" + id(course) + "/lessons/" + id(terns) + "/move", token: tutor.Token,
			form: url.Values{"to": {"1"}}, headers: map[string]string{"X-Requested-With": "fetch"}}, http.StatusNoContent)
		prog = apitest.Must(api.GetAdminCoursesIDProgram(ctx, course))(t)
		if prog.Lessons[0].ID != terns || prog.Lessons[1].Topics[0].ID != quiz || prog.Lessons[1].Topics[1].ID != reading {
			t.Fatalf("the order after moving: %+v", prog.Lessons)
		}

		// Clone a lesson, then delete the clone after its confirmation page.
		s.must(req{method: "POST", path: "/teach/courses/" + id(course) + "/lessons/" + id(gulls) + "/clone", token: tutor.Token}, http.StatusSeeOther)
		prog = apitest.Must(api.GetAdminCoursesIDProgram(ctx, course))(t)
		if len(prog.Lessons) != 3 || len(prog.Lessons[2].Topics) != 2 {
			t.Fatalf("after cloning: %+v", prog.Lessons)
		}
		clone := prog.Lessons[2].ID
		confirm := s.must(req{path: "/teach/courses/" + id(course) + "/lessons/" + id(clone) + "/delete", token: tutor.Token}, http.StatusOK)
		if !strings.Contains(confirm.text(), "Gulls") {
			t.Fatalf("the confirmation page: %.1000s", confirm.body)
		}
		s.must(req{method: "POST", path: "/teach/courses/" + id(course) + "/lessons/" + id(clone) + "/delete", token: tutor.Token}, http.StatusSeeOther)
		if n := len(apitest.Must(api.GetAdminCoursesIDProgram(ctx, course))(t).Lessons); n != 2 {
			t.Fatalf("%d lessons after deleting the clone", n)
		}
		// Forms need their token.
		s.must(req{method: "POST", path: "/teach/courses/" + id(course) + "/delete", token: tutor.Token, noCSRF: true}, http.StatusForbidden)
		// The course list shows it with its learners and their
		// completion (the gradebook's summary), in each language.
		apitest.Must(s.env.Client(s.env.Host, s.env.As("admin").Token).PostAdminCoursesIDAccess(ctx, course,
			client.AssignInputBody{Users: []client.GrantBody{{ID: student.ID}}}))(t)
		for lang, words := range map[string]string{"en": "0 finished · average 0%", "pl": "0 ukończyło · średnio 0%", "zh": "0 人已完成 · 平均 0%"} {
			list := s.must(req{path: "/teach/courses", token: tutor.Token, headers: map[string]string{"Accept-Language": lang}}, http.StatusOK).text()
			if !regexp.MustCompile(`Birds of the coast</a></td>\s*<td><span class="pill status-pill status-published">[^<]+</span></td>\s*` +
				`<td data-learners="1">1</td>\s*<td data-finished="0" data-percent="0"><a href="/teach/courses/` + id(course) + `/progress">` +
				regexp.QuoteMeta(words) + `<span`).MatchString(list) {
				t.Fatalf("the course list in %s: %.3000s", lang, list)
			}
		}
		// Delete the course.
		s.must(req{path: "/teach/courses/" + id(course) + "/delete", token: tutor.Token}, http.StatusOK)
		s.must(req{method: "POST", path: "/teach/courses/" + id(course) + "/delete", token: tutor.Token}, http.StatusSeeOther)
		if _, err := api.GetAdminCoursesID(ctx, course); client.StatusOf(err) != http.StatusNotFound {
			t.Fatalf("the deleted course: %v", err)
		}
	})
}

// TestTeachWordsComplete keeps the three languages of the authoring pages
// complete.
func TestTeachWordsComplete(t *testing.T) {
	for lang, words := range teachText {
		for key := range teachText["en"] {
			if words[key] == "" {
				t.Errorf("%s lacks %q", lang, key)
			}
		}
		for key := range words {
			if _, ok := teachText["en"][key]; !ok {
				t.Errorf("%s has %q, which English lacks", lang, key)
			}
		}
	}
}

// TestTeachTopicKinds adds topics of the other kinds through the "Add
// topic" form: a project, a PDF, a LiaScript course, a layout, an
// interactive app, a video (with its transcoding state), an LTI
// tool (as an admin, who may list the tools) and a cmi5 package of
// several AUs, whose AU is chosen next; wrong input of each kind comes
// back with the API's message next to its field.
func TestTeachTopicKinds(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		ctx := t.Context()
		admin := s.env.As("admin")
		api := s.env.Client(s.env.Host, admin.Token)
		course := apitest.Must(api.PostAdminCourses(ctx, client.CourseBody{Title: "Kinds"}))(t).ID
		lesson := id(apitest.Must(api.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: course, Title: "All"}))(t).ID)
		tool := apitest.Must(api.PostAdminLTITools(ctx, client.ToolInput{Name: "Lab tool", LoginURL: "https://tool.example/login",
			TargetLinkURI: "https://tool.example/launch", RedirectUris: []string{"https://tool.example/launch"},
			JwksURL: client.Ptr("https://tool.example/jwks")}))(t)

		s.addTopic(t, course, admin.Token, "project", [][2]string{{"lesson", lesson}, {"title", "Essay"},
			{"instructions", "Write one page."}, {"accept", "pdf, txt"}}, "", "", nil)
		s.addTopic(t, course, admin.Token, "pdf", [][2]string{{"lesson", lesson}, {"title", "Handout"}}, "file", "handout.pdf",
			[]byte("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"))
		// LiaScript, with the completion rule the author chose.
		form := s.must(req{path: "/teach/courses/" + id(course) + "/topics/new?kind=liascript&lesson=" + lesson, token: admin.Token}, http.StatusOK)
		if !strings.Contains(form.text(), `<option value="quizzes">every quiz is solved</option>`) {
			t.Fatalf("the completion rules are not offered: %.3000s", form.body)
		}
		lia := s.addTopic(t, course, admin.Token, "liascript", [][2]string{{"lesson", lesson}, {"title", "Workshop"},
			{"markdown", string(readFixture(t, "liascript/workshop.md"))}, {"completion", "quizzes"}}, "", "", nil)
		if c := apitest.Lookup(apitest.Must(api.GetAdminTopicsID(ctx, lia))(t).Topicable, "completion"); c != "quizzes" {
			t.Errorf("the LiaScript topic's rule: %v", c)
		}
		s.addTopic(t, course, admin.Token, "layout", [][2]string{{"lesson", lesson}, {"title", "Study page"},
			{"document", `[{"component":"Callout","props":{"tone":"tip","body":"Take notes."}}]`}, {"fallback", "Take notes."}}, "", "", nil)
		form = s.must(req{path: "/teach/courses/" + id(course) + "/topics/new?kind=lti&lesson=" + lesson, token: admin.Token}, http.StatusOK)
		if !strings.Contains(form.text(), `<option value="`+id(tool.ID)+`"`) {
			t.Fatalf("the tool is not offered: %.3000s", form.body)
		}
		s.addTopic(t, course, admin.Token, "lti", [][2]string{{"lesson", lesson}, {"title", "Lab"}, {"tool", id(tool.ID)}}, "", "", nil)

		// GIFT files uploaded: each question parsed, with its right answers.
		for file, want := range map[string]string{"numerical1": "Questions (10)", "totara_moodle_match": " → "} {
			quiz := s.addTopic(t, course, admin.Token, "quiz", [][2]string{{"lesson", lesson}, {"title", file}}, "gift_file",
				file+".gift", readFixture(t, "gift/"+file+".gift"))
			page := s.must(req{path: "/teach/courses/" + id(course) + "/topics/" + id(quiz), token: admin.Token}, http.StatusOK).text()
			if !strings.Contains(page, want) {
				t.Errorf("%s: %q is not on its page: %.3000s", file, want, page)
			}
		}
		s.addTopic(t, course, admin.Token, "interactive", [][2]string{{"lesson", lesson}, {"title", "Steps"}, {"height", "480"}},
			"file", "app.zip", interactivetest.Zip(t, stepsApp))
		// A video: its page shows the transcoding state, which its script
		// reads again until the video is ready; the page itself does not
		// reload (no meta refresh, which would drop the author's typing).
		apitest.Must(api.PostAdminConfig(ctx, client.UpdateInputBody{Config: []client.Item{{Key: "lms_video.enable", Value: true}}}))(t)
		video := s.addTopic(t, course, admin.Token, "video", [][2]string{{"lesson", lesson}, {"title", "Clip"}}, "file", "clip.mp4",
			mediatest.MP4(t, 1))
		page := s.must(req{path: "/teach/courses/" + id(course) + "/topics/" + id(video), token: admin.Token}, http.StatusOK).text()
		if !strings.Contains(page, `data-watch-processing>Check again</a>`) || strings.Contains(page, `http-equiv="refresh"`) || !strings.Contains(page, "Processing: <strong>waiting in line</strong>") {
			t.Fatalf("the video's page: %.3000s", page)
		}

		// cmi5: eight AUs to choose from.
		multi := s.must(multipartReq("/teach/courses/"+id(course)+"/topics/new?kind=cmi5", admin.Token,
			[][2]string{{"lesson", lesson}, {"title", "Framed"}}, "package", "framed.zip", readFixture(t, "cmi5/multi_au_framed.zip")),
			http.StatusUnprocessableEntity)
		pkg := regexp.MustCompile(`name="package" value="(\d+)"`).FindStringSubmatch(multi.text())
		aus := regexp.MustCompile(`name="au" value="(\d+)"`).FindAllStringSubmatch(multi.text(), -1)
		if pkg == nil || len(aus) != 8 {
			t.Fatalf("the AU choice: %.3000s", multi.body)
		}
		au := s.addTopic(t, course, admin.Token, "cmi5", [][2]string{{"lesson", lesson}, {"title", "Framed"}, {"package", pkg[1]},
			{"au", aus[2][1]}}, "", "", nil)
		if k := apitest.Must(api.GetAdminTopicsID(ctx, au))(t).Kind; k != "cmi5" {
			t.Fatalf("the cmi5 topic is a %s", k)
		}

		// Wrong input, each kind's message next to its field.
		for _, c := range []struct {
			kind   string
			fields [][2]string
			field  string
		}{
			{"quiz", [][2]string{{"gift", "What is it? {=yes ~no"}}, `id="gift-error"`},
			{"oembed", [][2]string{{"url", "not a link"}}, `id="url-error"`},
			{"layout", [][2]string{{"document", `[{"component":"Carousel","props":{}}]`}, {"fallback", "x"}}, `<p class="field-error">`},
			{"lti", [][2]string{{"tool", "999999"}}, `<p class="field-error">`},
		} {
			fields := append([][2]string{{"lesson", lesson}, {"title", "Wrong " + c.kind}}, c.fields...)
			r := s.must(multipartReq("/teach/courses/"+id(course)+"/topics/new?kind="+c.kind, admin.Token, fields, "", "", nil),
				http.StatusUnprocessableEntity)
			if !strings.Contains(r.text(), c.field) {
				t.Errorf("%s: no message at %s: %.3000s", c.kind, c.field, r.body)
			}
		}
	})
}

// TestTeachTopicEdit edits topics from their page over HTTP: the title
// and the fields of each kind saved with the API's PATCH (a quiz's
// unchanged questions keep their ids), the API's messages next to their
// fields, and a learner refused.
func TestTeachTopicEdit(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		ctx := t.Context()
		admin := s.env.As("admin")
		api := s.env.Client(s.env.Host, admin.Token)
		course := apitest.Must(api.PostAdminCourses(ctx, client.CourseBody{Title: "Edits"}))(t).ID
		lesson := id(apitest.Must(api.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: course, Title: "One"}))(t).ID)
		path := func(topic int64) string { return "/teach/courses/" + id(course) + "/topics/" + id(topic) }
		save := func(topic int64, form url.Values, status int) *resp {
			t.Helper()
			return s.must(req{method: "POST", path: path(topic), token: admin.Token, form: form}, status)
		}
		content := func(topic int64) map[string]any {
			t.Helper()
			v := apitest.Must(api.GetAdminTopicsID(ctx, topic))(t)
			m, _ := v.Topicable.(map[string]any)
			return m
		}

		text := s.addTopic(t, course, admin.Token, "richtext", [][2]string{{"lesson", lesson}, {"title", "Notes"},
			{"markdown", "First *draft*."}}, "", "", nil)
		page := s.must(req{path: path(text), token: admin.Token}, http.StatusOK).text()
		if !strings.Contains(page, `value="Notes"`) || !strings.Contains(page, "First *draft*.</textarea>") {
			t.Fatalf("the edit form is not filled: %.3000s", page)
		}
		r := save(text, url.Values{"title": {"Notes, final"}, "markdown": {"Final **text**."}}, http.StatusSeeOther)
		if r.header.Get("Location") != path(text)+"?notice=saved" {
			t.Fatalf("saved to %s", r.header.Get("Location"))
		}
		if v := apitest.Must(api.GetAdminTopicsID(ctx, text))(t); v.Title != "Notes, final" ||
			!strings.Contains(content(text)["html"].(string), "<strong>text</strong>") {
			t.Fatalf("the text topic: %q %v", v.Title, v.Topicable)
		}

		quiz := s.addTopic(t, course, admin.Token, "quiz", [][2]string{{"lesson", lesson}, {"title", "Check"},
			{"gift", "Sky? {=blue ~green}\n\nGrass? {=green ~blue}"}}, "", "", nil)
		before := apitest.Must(api.GetAdminTopicsIDGiftQuestions(ctx, quiz))(t)
		if len(before) != 2 {
			t.Fatalf("questions: %+v", before)
		}
		save(quiz, url.Values{"title": {"Check"}, "gift": {before[0].Value + "\n\nSnow? {=white ~black}"},
			"maxAttempts": {"3"}}, http.StatusSeeOther)
		after := apitest.Must(api.GetAdminTopicsIDGiftQuestions(ctx, quiz))(t)
		if len(after) != 2 || after[0].ID != before[0].ID || !strings.Contains(after[1].Value, "Snow?") {
			t.Fatalf("questions after the edit: %+v", after)
		}
		if n, _ := content(quiz)["max_attempts"].(float64); n != 3 {
			t.Fatalf("the quiz: %v", content(quiz))
		}

		project := s.addTopic(t, course, admin.Token, "project", [][2]string{{"lesson", lesson}, {"title", "Essay"},
			{"instructions", "Write one page."}, {"accept", "pdf"}}, "", "", nil)
		save(project, url.Values{"title": {"Essay"}, "instructions": {"Write two pages."}, "accept": {"pdf, txt"}}, http.StatusSeeOther)
		if c := content(project); !strings.Contains(c["instructions"].(string)+c["markdown"].(string), "two pages") ||
			len(c["accept"].([]any)) != 2 {
			t.Fatalf("the project: %v", c)
		}

		layout := s.addTopic(t, course, admin.Token, "layout", [][2]string{{"lesson", lesson}, {"title", "Study page"},
			{"document", `[{"component":"Callout","props":{"tone":"tip","body":"Take notes."}}]`}, {"fallback", "Take notes."}}, "", "", nil)
		save(layout, url.Values{"title": {"Study page"}, "document": {`[{"component":"Callout","props":{"tone":"tip","body":"Read twice."}}]`},
			"fallback": {"Read twice."}}, http.StatusSeeOther)
		if c := content(layout); c["fallback"] != "Read twice." {
			t.Fatalf("the layout: %v", c)
		}

		// Wrong input: the API's message next to its field, what was
		// typed kept, nothing saved.
		for _, c := range []struct {
			topic int64
			form  url.Values
			field string
		}{
			{quiz, url.Values{"title": {"Check"}, "gift": {"What is it? {=yes ~no"}}, `id="gift-error"`},
			{layout, url.Values{"title": {"Study page"}, "document": {`[{"component":"Carousel","props":{}}]`}, "fallback": {"x"}}, `id="layout-node-1" class="has-error"`},
			{text, url.Values{"title": {""}, "markdown": {"Kept."}}, `id="title-error"`},
		} {
			r := save(c.topic, c.form, http.StatusUnprocessableEntity)
			if !strings.Contains(r.text(), c.field) || !strings.Contains(r.text(), `role="alert"`) {
				t.Errorf("topic %d: no message at %s: %.3000s", c.topic, c.field, r.body)
			}
		}
		if v := apitest.Must(api.GetAdminTopicsID(ctx, text))(t); v.Title != "Notes, final" {
			t.Fatalf("a refused edit changed the title to %q", v.Title)
		}

		learner := s.env.NewUser("student")
		s.must(req{method: "POST", path: path(text), token: learner.Token, form: url.Values{"title": {"Mine"}}}, http.StatusForbidden)
		s.must(req{method: "POST", path: path(text), token: admin.Token, form: url.Values{"title": {"Mine"}}, noCSRF: true},
			http.StatusForbidden)
	})
}

// TestTeachLayoutEditor: the layout form offers every approved component
// with its example node, and a refused document lists its nodes with the
// API's messages next to the node each is about.
func TestTeachLayoutEditor(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		ctx := t.Context()
		tutor := s.env.As("tutor")
		api := s.env.Client(s.env.Host, tutor.Token)
		course := apitest.Must(api.PostAdminCourses(ctx, client.CourseBody{Title: "Layouts"}))(t).ID
		lesson := id(apitest.Must(api.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: course, Title: "One"}))(t).ID)
		path := "/teach/courses/" + id(course) + "/topics/new?kind=layout&lesson=" + lesson
		page := s.must(req{path: path, token: tutor.Token}, http.StatusOK).text()
		catalogue := apitest.Must(api.GetAdminLayoutComponents(ctx))(t)
		for _, c := range catalogue.Components {
			if !strings.Contains(page, `data-layout-insert="{`) || !strings.Contains(page, "<strong>"+c.Name+"</strong>") {
				t.Errorf("the palette lacks %s", c.Name)
			}
		}
		if !strings.Contains(page, html.EscapeString(`"tone": "tip"`)) {
			t.Errorf("the Callout's example is not shown: %.3000s", page)
		}

		// The second node is wrong twice; the first is right.
		doc := `[{"component":"Callout","props":{"tone":"tip","body":"Fine."}},
			{"component":"Callout","id":"warn","props":{"tone":"loud","body":""}}]`
		res := s.do(multipartReq(path, tutor.Token, [][2]string{{"lesson", lesson}, {"title", "Page"}, {"document", doc},
			{"fallback", "Fine."}}, "", "", nil))
		if res.status != http.StatusUnprocessableEntity {
			t.Fatalf("a wrong document: %d", res.status)
		}
		first, second := nodeItem(t, res.text(), 1), nodeItem(t, res.text(), 2)
		if strings.Contains(first, "field-error") || !strings.Contains(first, "<strong>Callout</strong>") {
			t.Errorf("the right node: %s", first)
		}
		if !strings.Contains(second, "#warn") || !strings.Contains(second, "props.tone: ") ||
			!strings.Contains(second, "props.body: ") {
			t.Errorf("the wrong node does not carry its two messages: %s", second)
		}
		if n := apitest.Must(api.GetAdminCoursesIDProgram(ctx, course))(t); len(n.Lessons[0].Topics) != 0 {
			t.Errorf("a refused document made a topic")
		}

		// A document that is not an array: no outline, and it says why.
		res = s.do(multipartReq(path, tutor.Token, [][2]string{{"lesson", lesson}, {"title", "Page"}, {"document", `{"component"`},
			{"fallback", "Fine."}}, "", "", nil))
		if res.status != http.StatusUnprocessableEntity || !strings.Contains(res.text(), `id="layout-broken"`) ||
			strings.Contains(res.text(), `id="layout-node-1"`) {
			t.Errorf("a document that is not JSON: %d %.3000s", res.status, res.body)
		}

		// The edit page of a saved layout outlines its nodes too.
		topic := s.addTopic(t, course, tutor.Token, "layout", [][2]string{{"lesson", lesson}, {"title", "Page"},
			{"document", `[{"component":"Steps","props":{"steps":[{"title":"Look"}]}}]`}, {"fallback", "Look."}}, "", "", nil)
		edit := s.must(req{path: "/teach/courses/" + id(course) + "/topics/" + id(topic), token: tutor.Token}, http.StatusOK).text()
		if !strings.Contains(nodeItem(t, edit, 1), "<strong>Steps</strong>") || !strings.Contains(edit, `id="layout-palette"`) {
			t.Errorf("the edit page: %.3000s", edit)
		}
	})
}

// nodeItem is the outline's item of node n in a page.
func nodeItem(t *testing.T, page string, n int) string {
	t.Helper()
	start := strings.Index(page, `<li id="layout-node-`+strconv.Itoa(n)+`"`)
	if start < 0 {
		t.Fatalf("no node %d in the outline: %.3000s", n, page)
	}
	end := strings.Index(page[start:], "</li>")
	return page[start : start+end]
}

// TestTeachDeepLink: a tutor chooses content in a registered tool (LTI
// Deep Linking): the page sends the browser on to the tool's login URL
// with the cookie that binds its login hint to this browser; a student,
// a form without its CSRF token and a lesson the tutor may not edit are
// refused.
func TestTeachDeepLink(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		ctx := t.Context()
		tutor := s.env.As("tutor")
		api := s.env.Client(s.env.Host, tutor.Token)
		admin := s.env.ClientAs("admin")
		course := apitest.Must(api.PostAdminCourses(ctx, client.CourseBody{Title: "Labs"}))(t).ID
		lesson := apitest.Must(api.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: course, Title: "One"}))(t).ID
		foreign := apitest.Must(admin.PostAdminCourses(ctx, client.CourseBody{Title: "Not the tutor's"}))(t).ID
		foreignLesson := apitest.Must(admin.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: foreign, Title: "X"}))(t).ID
		tool := apitest.Must(admin.PostAdminLTITools(ctx, client.ToolInput{Name: "Lab tool", LoginURL: "https://tool.example/login",
			TargetLinkURI: "https://tool.example/launch", RedirectUris: []string{"https://tool.example/launch"},
			JwksURL: client.Ptr("https://tool.example/jwks")}))(t)

		// The tutor's form offers the tool, for a topic and for choosing.
		form := s.must(req{path: "/teach/courses/" + id(course) + "/topics/new?kind=lti&lesson=" + id(lesson), token: tutor.Token},
			http.StatusOK).text()
		if !strings.Contains(form, `<option value="`+id(tool.ID)+`">Lab tool</option>`) || !strings.Contains(form, `id="deep-link-form"`) {
			t.Fatalf("the tutor's LTI form: %.4000s", form)
		}

		post := func(token string, lessonID int64, noCSRF bool) *resp {
			return s.do(req{method: "POST", path: "/teach/courses/" + id(course) + "/topics/deep-link", token: token, noCSRF: noCSRF,
				form: url.Values{"lesson": {id(lessonID)}, "tool": {id(tool.ID)}}})
		}
		res := post(tutor.Token, lesson, false)
		if res.status != http.StatusOK {
			t.Fatalf("deep link: %d %s", res.status, res.body)
		}
		m := regexp.MustCompile(`<a href="([^"]+)" id="lti-continue">`).FindStringSubmatch(res.text())
		if m == nil {
			t.Fatalf("no way on to the tool: %s", res.body)
		}
		to, err := url.Parse(html.UnescapeString(m[1]))
		if err != nil || to.Host != "tool.example" || to.Path != "/login" || to.Query().Get("login_hint") == "" ||
			to.Query().Get("lti_message_hint") == "" {
			t.Errorf("the tool's login URL: %s", m[1])
		}
		var bound bool
		for _, c := range res.header.Values("Set-Cookie") {
			bound = bound || strings.Contains(c, "Path=/api/lti/authorize") && strings.Contains(c, "HttpOnly")
		}
		if !bound {
			t.Errorf("the login hint is not bound to the browser: %v", res.header.Values("Set-Cookie"))
		}

		if res := post(tutor.Token, foreignLesson, false); res.status < 400 || res.status >= 500 {
			t.Errorf("a lesson of another author's course: %d", res.status)
		}
		if res := post(s.env.As("student").Token, lesson, false); res.status != http.StatusForbidden {
			t.Errorf("a student: %d", res.status)
		}
		if res := post(tutor.Token, lesson, true); res.status != http.StatusForbidden {
			t.Errorf("without the CSRF token: %d", res.status)
		}
	})
}
