package apitest

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/fixtures"
)

// Tracked names the topics TrackedTopics made, one of each kind whose
// learners leave records a tutor reads in the gradebook.
type Tracked struct {
	Quiz, SCORM, CMI5, H5P int64
}

// Topic classes and the cmi5 names the learner's steps use, as the
// contract spells them (the kinds' packages import this one in their
// tests, so it cannot import them).
const (
	quizClass    = `Lms\TopicTypeGift\Models\GiftQuiz`
	scormClass   = `Lms\TopicTypes\Models\TopicContent\ScormSco`
	cmi5Class    = `Lms\TopicTypes\Models\TopicContent\Cmi5Au`
	h5pClass     = `Lms\TopicTypes\Models\TopicContent\H5P`
	cmi5Category = "https://w3id.org/xapi/cmi5/context/categories/cmi5"
	verbs        = "http://adlnet.gov/expapi/verbs/"
)

// TrackedTopics adds to a lesson, as an author (author's token), a quiz,
// a SCORM, a cmi5 and an H5P topic from the shared fixtures, and has the
// learner (assigned to the course) leave a track in each through the
// API, as their players would: a quiz attempt ended with a right, a
// wrong and an essay answer; a SCORM 1.2 commit with a score, a bookmark,
// suspend data and an interaction; a cmi5 session initialized and
// completed; an H5P "answered" statement scored 3 of 4.
func (e *Env) TrackedTopics(t testing.TB, author string, lesson int64, learner *User) Tracked {
	t.Helper()
	ctx, c, lc := t.Context(), e.Client("", author), e.UserClient(learner)
	var out Tracked

	out.Quiz = Must(c.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: lesson, Title: "Check", Topicable: quizClass,
		Questions: []client.PostAdminTopicsBodyQuestionsItem{{Gift: client.Ptr("Clay is fired in a kiln. {T}")},
			{Gift: client.Ptr("Which clay is whitest? {=Porcelain ~Terracotta ~Stoneware}")},
			{Gift: client.Ptr("Describe wedging. {}")}}}))(t).ID
	a := Must(lc.PostQuizAttempts(ctx, client.StartInputBody{TopicID: out.Quiz}))(t)
	for i, answer := range []client.Response{{Truth: client.Ptr(true)}, {Choices: []int64{1}}, {Text: client.Ptr("Press and fold.")}} {
		Must(lc.PostQuizAttemptsIDAnswer(ctx, a.ID, client.AnswerInputBody{QuestionID: a.Questions[i].ID, Answer: answer}))(t)
	}
	Must(lc.PostQuizAttemptsIDEnd(ctx, a.ID))(t)

	pkg := Must(c.PostAdminScormUpload(ctx, client.PostAdminScormUploadForm{Package: &client.File{Name: "golf.zip",
		Content: bytes.NewReader(fixtures.Read(t, "scorm/RuntimeBasicCalls_SCORM12.zip"))}}))(t)
	out.SCORM = Must(c.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: lesson, Title: "Golf", Topicable: scormClass,
		Package: &pkg.ID}))(t).ID
	sco := strconv.FormatInt(pkg.Scos[0].ID, 10)
	launch := e.Call(t, 200, "POST", "/api/scorm/launch/"+sco, learner.Token, map[string]any{"topic_id": out.SCORM})
	e.Clock.Advance(2 * time.Minute)
	commit := e.Do(Request{Method: "POST", Path: "/api/scorm/tracks/" + sco + "/commit",
		Headers: map[string]string{"X-Lms-Tracking-Token": launch.String("data.token")},
		Body: map[string]any{"seq": 1, "cmi": map[string]any{"cmi.core.lesson_status": "incomplete", "cmi.core.score.raw": "70",
			"cmi.core.lesson_location": "page-3", "cmi.suspend_data": "abcdef", "cmi.core.session_time": "0000:01:30.00",
			"cmi.core.exit": "suspend", "cmi.interactions.0.id": "par-1", "cmi.interactions.0.type": "choice",
			"cmi.interactions.0.student_response": "b", "cmi.interactions.0.result": "wrong",
			"cmi.interactions.0.correct_responses.0.pattern": "a"}}})
	if commit.Status != 200 {
		t.Fatalf("SCORM commit: %d %s", commit.Status, commit.Body)
	}

	au := Must(c.PostAdminCmi5(ctx, client.PostAdminCmi5Form{Package: &client.File{Name: "au.zip",
		Content: bytes.NewReader(fixtures.Read(t, "cmi5/single_au_basic_responsive.zip"))}}))(t)
	out.CMI5 = Must(c.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: lesson, Title: "Glazes", Topicable: cmi5Class,
		Package: &au.ID}))(t).ID
	e.cmi5Session(t, learner, out.CMI5)

	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	w.WriteField("lesson", strconv.FormatInt(lesson, 10))
	w.WriteField("title", "Pictures")
	w.WriteField("topicable", h5pClass)
	part, _ := w.CreateFormFile("package", "content.h5p")
	part.Write(fixtures.Read(t, "h5p/valid/valid3-3-images.h5p"))
	w.Close()
	created := e.Do(Request{Method: "POST", Path: "/api/admin/topics", Token: author, Body: b.Bytes(), Type: w.FormDataContentType()})
	if created.Status != 201 {
		t.Fatalf("H5P topic: %d %s", created.Status, created.Body)
	}
	out.H5P = int64(created.Number("data.id"))
	e.Call(t, 201, "POST", "/api/courses/progress/"+strconv.FormatInt(out.H5P, 10)+"/h5p", learner.Token, map[string]any{
		"statement": map[string]any{"verb": map[string]any{"id": verbs + "answered", "display": map[string]any{"en-US": "answered"}},
			"object": map[string]any{"id": "https://h5p.example/pictures", "definition": map[string]any{"name": map[string]any{"en-US": "Pictures"}}},
			"result": map[string]any{"score": map[string]any{"raw": 3, "max": 4}, "duration": "PT42S"}}})
	return out
}

// cmi5Session launches the learner's session of a cmi5 topic, fetches
// its token and sends the initialized and completed statements an AU
// sends, on the context template the LMS gives it.
func (e *Env) cmi5Session(t testing.TB, learner *User, topic int64) {
	t.Helper()
	l := Must(e.UserClient(learner).PostCmi5LaunchID(t.Context(), topic, client.LaunchInput{}))(t)
	u, err := url.Parse(l.URL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	f, _ := url.Parse(q.Get("fetch"))
	auth := e.Do(Request{Method: "POST", Path: f.Path + "?" + f.RawQuery}).String("auth-token")
	xapi := func(method, path string, body any) *Response {
		return e.Do(Request{Method: method, Path: "/api/xapi/" + path, Body: body,
			Headers: map[string]string{"Authorization": "Basic " + auth, "X-Experience-API-Version": "1.0.3"}})
	}
	state := xapi("GET", "activities/state?stateId=LMS.LaunchData&activityId="+url.QueryEscape(q.Get("activityId"))+
		"&agent="+url.QueryEscape(q.Get("actor"))+"&registration="+q.Get("registration"), nil)
	if state.Status != 200 {
		t.Fatalf("cmi5 launch data: %d %s", state.Status, state.Body)
	}
	// An AU reads the learner's preferences before it may initialize.
	if p := xapi("GET", "agents/profile?profileId=cmi5LearnerPreferences&agent="+url.QueryEscape(q.Get("actor")), nil); p.Status != 200 {
		t.Fatalf("cmi5 preferences: %d %s", p.Status, p.Body)
	}
	var actor any
	json.Unmarshal([]byte(q.Get("actor")), &actor)
	for _, st := range []struct {
		verb   string
		result map[string]any
	}{{"initialized", nil}, {"completed", map[string]any{"completion": true, "duration": "PT3M"}}} {
		var ctx map[string]any
		raw, _ := json.Marshal(state.Get("contextTemplate"))
		json.Unmarshal(raw, &ctx)
		ctx["registration"] = q.Get("registration")
		category := []any{map[string]any{"id": cmi5Category}}
		if st.result != nil {
			category = append(category, map[string]any{"id": "https://w3id.org/xapi/cmi5/context/categories/moveon"})
		}
		ctx["contextActivities"].(map[string]any)["category"] = category
		body := map[string]any{"id": uuid.NewString(), "actor": actor,
			"verb":      map[string]any{"id": verbs + st.verb, "display": map[string]any{"en-US": st.verb}},
			"object":    map[string]any{"id": q.Get("activityId"), "objectType": "Activity"},
			"timestamp": e.Clock.Now().UTC().Format(time.RFC3339Nano), "context": ctx}
		if st.result != nil {
			body["result"] = st.result
		}
		if res := xapi("POST", "statements", body); res.Status != 200 {
			t.Fatalf("cmi5 %s: %d %s", st.verb, res.Status, res.Body)
		}
	}
}
