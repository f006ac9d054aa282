package web

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/browsertest"
	"github.com/lms-platform/lms/internal/config"
)

// standInH5PEditor plays the part of the H5P editor client, which is not
// on npm: the constructor and getContent the embed page relies on. A new
// content is a True/False question (LIBRARY and PARAMS), titled "Made in
// the editor"; an existing one keeps its parameters and is retitled
// "Edited in the editor". It also reports what it can reach: the grant it
// was given, and whether the frontend's session cookie is visible.
const standInH5PEditor = `window.H5PEditor = window.H5PEditor || {};
H5PEditor.Editor = function (library, params, container, loaded) {
  var given = JSON.parse(params);
  container.textContent = 'Editing ' + (library || 'new content');
  document.body.dataset.cookie = document.cookie;
  document.body.dataset.grant = (window.LmsH5PEmbed.token() || '').split('.')[0];
  this.getContent = function (done) {
    done({ library: library || LIBRARY,
      params: JSON.stringify({ params: library ? given.params : PARAMS,
        metadata: { title: library ? 'Edited in the editor' : 'Made in the editor' } }) });
  };
  setTimeout(loaded, 0);
};`

// TestTeachH5PEditorInBrowser walks a tutor through the H5P editor of the
// authoring pages in Chromium: a new H5P topic made in the editor, then
// its content edited again from the topic's page. The editor runs on the
// content origin, given an edit grant, never the session.
func TestTeachH5PEditorInBrowser(t *testing.T) {
	editorDir := t.TempDir()
	env := apitest.New(t, "sqlite", apitest.Options{Configure: func(c *config.Config) { c.H5PEditorDir = editorDir }})
	api := newCountingAPI(t, env.Server.Handler)
	f := newFront(t, api.srv.URL, "platform.test", frontOptions{clock: env.Clock})
	f.host = env.Host
	ctx := t.Context()
	_, frontPort, _ := strings.Cut(strings.TrimPrefix(f.srv.URL, "http://"), ":")
	origin := "http://" + env.Host + ":" + frontPort
	contentOrigin := "http://" + env.Host + ":" + f.contentPort

	// The admin installs True/False by uploading a package; the tutor's
	// course is the tutor's own.
	admin, tutor := env.ClientAs("admin"), env.NewUser("tutor")
	raw, err := os.ReadFile(fixture(t, "h5p/hub/H5P.TrueFalse.h5p"))
	if err != nil {
		t.Fatal(err)
	}
	up := apitest.Must(admin.PostH5PContentsUpload(ctx, client.PostH5PContentsUploadForm{
		H5PFile: &client.File{Name: "tf.h5p", Content: bytes.NewReader(raw)}}))(t)
	tf := apitest.Must(admin.GetH5PContentsID(ctx, up.ContentID))(t)
	library, params := tf.MainLibrary+" "+tf.LibraryVersion, tf.Parameters
	tc := env.Client(env.Host, tutor.Token)
	course := apitest.Must(tc.PostAdminCourses(ctx, client.CourseBody{Title: "Made here"}))(t).ID
	lesson := apitest.Must(tc.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: course, Title: "One"}))(t).ID
	paramsJSON, _ := json.Marshal(params)
	script := strings.NewReplacer("LIBRARY", `'`+library+`'`, "PARAMS", string(paramsJSON)).Replace(standInH5PEditor)
	if err := os.MkdirAll(filepath.Join(editorDir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(editorDir, "scripts", "h5peditor-editor.js"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}

	b := &browserRun{t: t, ctx: newBrowser(t, env.Host)}
	b.run("sign in", signIn(origin, tutor), chromedp.WaitVisible(`a[href="/teach"][aria-current="page"]`, chromedp.ByQuery))
	newTopic := origin + "/teach/courses/" + id(course) + "/topics/new?kind=h5p&lesson=" + id(lesson)
	b.run("the H5P form", chromedp.Navigate(newTopic), chromedp.Click(`#h5p-open-editor`, chromedp.ByID),
		chromedp.WaitVisible(`#h5p-editor`, chromedp.ByID))
	var src, grant string
	b.run("frame", chromedp.Evaluate(`document.getElementById('h5p-editor').src`, &src),
		chromedp.Evaluate(`document.getElementById('h5p-editor').dataset.grant`, &grant))
	if !strings.HasPrefix(src, contentOrigin+"/h5p/embed/edit/new?") || strings.Contains(src, "lms_h5p") ||
		!strings.HasPrefix(grant, "lms_h5pedit.") {
		t.Fatalf("the editor frame is at %s, with grant %.20s", src, grant)
	}
	b.run("editor loaded", waitJS(`document.getElementById('h5p-editor').dataset.loaded === '1'`))
	inside := b.frame(`#h5p-editor`)
	var cookie, held string
	b.run("what the editor holds",
		chromedp.AttributeValue(`body`, "data-cookie", &cookie, nil, chromedp.ByQuery, chromedp.FromNode(inside)),
		chromedp.AttributeValue(`body`, "data-grant", &held, nil, chromedp.ByQuery, chromedp.FromNode(inside)))
	if cookie != "" || held != "lms_h5pedit" {
		t.Errorf("the editor holds cookie %q and grant %q", cookie, held)
	}
	b.run("save", chromedp.SendKeys(`#title`, "True or false?", chromedp.ByID), chromedp.Click(`form.teach-topic-form button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#topic-view`, chromedp.ByID))
	var here string
	b.run("location", chromedp.Location(&here))
	if !strings.Contains(here, "notice=topic_added") {
		t.Fatalf("after the save: %s", here)
	}
	b.screenshot("teach-h5p-editor-added")

	program := apitest.Must(tc.GetAdminCoursesIDProgram(ctx, course))(t)
	if len(program.Lessons) != 1 || len(program.Lessons[0].Topics) != 1 {
		t.Fatalf("program %+v", program)
	}
	topic := apitest.Must(tc.GetAdminTopicsID(ctx, program.Lessons[0].Topics[0].ID))(t)
	var h5p struct {
		ContentID string `json:"content_id"`
	}
	remarshal(topic.Topicable, &h5p)
	made := apitest.Must(tc.GetH5PContentsID(ctx, h5p.ContentID))(t)
	if topic.Kind != "h5p" || topic.Title != "True or false?" || made.Title != "Made in the editor" ||
		made.UserID != id(tutor.ID) || made.ID == up.ContentID {
		t.Fatalf("topic %s %q, content %+v", topic.Kind, topic.Title, made)
	}

	// Its content, edited again from the topic's page.
	b.run("edit the content", chromedp.Click(`#h5p-open-editor`, chromedp.ByID), chromedp.WaitVisible(`#h5p-editor`, chromedp.ByID),
		waitJS(`document.getElementById('h5p-editor').dataset.loaded === '1'`))
	b.run("frame of the content", chromedp.Evaluate(`document.getElementById('h5p-editor').src`, &src))
	if !strings.HasPrefix(src, contentOrigin+"/h5p/embed/edit/"+h5p.ContentID+"?") {
		t.Errorf("the editor of the topic is at %s", src)
	}
	b.screenshot("teach-h5p-editor-edit")
	for _, width := range pageWidths {
		b.run("width", chromedp.EmulateViewport(width, 900))
		vs, err := browsertest.Axe(b.ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range browsertest.Severe(vs) {
			t.Errorf("the editor's page at %d px: %s", width, v)
		}
	}
	b.run("desktop", chromedp.EmulateViewport(1280, 900))
	b.run("save again", chromedp.Click(`#topic-save`, chromedp.ByID), chromedp.WaitVisible(`#topic-view .notice, .notice-ok`, chromedp.ByQuery),
		chromedp.Location(&here))
	if !strings.Contains(here, "notice=saved") {
		t.Fatalf("after the second save: %s", here)
	}
	if got := apitest.Must(tc.GetH5PContentsID(ctx, h5p.ContentID))(t); got.Title != "Edited in the editor" {
		t.Errorf("after the edit: %+v", got)
	}
}
