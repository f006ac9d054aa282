package web

import (
	"encoding/json"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/lms-platform/lms/client"
)

type learnData struct {
	Program  *program
	Continue string
	SignedIn bool
}

// learn shows a course's program: lessons, their topics and the caller's
// status in each.
func (h *Handler) learn(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("course")
	if !isID(id) {
		h.notFound(w, r)
		return
	}
	prog, ok := h.programOrLogin(w, r, id)
	if !ok {
		return
	}
	s := h.readSession(r) != nil
	h.render(w, r, http.StatusOK, "learn", view{Title: prog.Title, Nav: "my", SignedIn: s,
		Data: learnData{Program: prog, Continue: continueURL(prog), SignedIn: s}})
}

// programOrLogin loads a program for a learn page; anonymous callers of a
// course that is not public are sent to sign in first.
func (h *Handler) programOrLogin(w http.ResponseWriter, r *http.Request, id string) (*program, bool) {
	prog, err := h.program(w, r, id)
	if err == nil {
		return prog, true
	}
	st := client.StatusOf(err)
	if st == http.StatusUnauthorized || (st == http.StatusForbidden && h.readSession(r) == nil) {
		http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.Path), http.StatusSeeOther)
		return nil, false
	}
	if st == http.StatusForbidden {
		h.errorPage(w, r, http.StatusForbidden, "No access to this course",
			"This course is open to enrolled learners only. Ask your teacher or administrator to give you access.")
		return nil, false
	}
	h.apiFailed(w, r, err)
	return nil, false
}

// Kind-specific content of a topic page.
type (
	fileContent struct {
		URL          string `json:"url"`
		Name         string `json:"name"`
		Size         int64  `json:"size"`
		ContentType  string `json:"content_type"`
		VideoSiteURL string `json:"video_site_url"`
		Processing   string `json:"processing"`
		// A transcoded video: its HLS master playlist and poster.
		HLSURL    string `json:"hls_url"`
		PosterURL string `json:"poster_url"`
	}
	oembedContent struct {
		URL          string `json:"url"`
		ProviderName string `json:"provider_name"`
		Type         string `json:"type"`
		Title        string `json:"title"`
		HTML         string `json:"html"`
		ThumbnailURL string `json:"thumbnail_url"`
	}
	projectContent struct {
		Instructions string   `json:"instructions"`
		Accept       []string `json:"accept"`
		MaxSize      int64    `json:"max_size"`
	}
	quizContent struct {
		Intro         string   `json:"intro"`
		MaxAttempts   int      `json:"max_attempts"`
		MinPassScore  *float64 `json:"min_pass_score"`
		QuestionCount int      `json:"question_count"`
		MaxScore      float64  `json:"max_score"`
		// PassScore is MinPassScore as shown; empty without one.
		PassScore string `json:"-"`
	}
	h5pContent struct {
		ContentID string `json:"content_id"`
		Title     string `json:"title"`
		Library   string `json:"library"`
		EmbedURL  string `json:"embed_url"`
	}
)

type topicData struct {
	Program  *program
	Lesson   *lesson
	Topic    *topic
	Status   int
	SignedIn bool
	// Mode is how the topic completes: read (rich text read to its end),
	// open (shown), ended (media played to the end), xapi (an H5P
	// completed or passed statement), upload (a project submitted),
	// practice (a layout's first checked answer), quiz (an attempt passed,
	// or ended without a pass score), app (an interactive app's reports),
	// lia (a LiaScript course's reports), tool (an LTI tool's score) or
	// manual.
	Mode string
	// Manual offers a "mark as complete" button (and the no-script way).
	Manual     bool
	Closed     bool
	Prev, Next *topic
	HTML       template.HTML
	File       *fileContent
	OEmbed     *oembedContent
	Project    *projectContent
	Quiz       *quizContent
	H5P        *h5pContent
	Scorm      *scormContent
	Cmi5       *cmi5Content
	Layout     *layoutContent
	EmbedSrc   string
	App        *appContent
	Lia        *liaContent
	// VideoEmbed is the player address of a video site URL the page
	// knows how to frame (YouTube, Vimeo); empty: a link is shown.
	VideoEmbed string
	Accept     string
	Notice     string
	Error      string
}

// topicPage plays one topic of a course.
func (h *Handler) topicPage(w http.ResponseWriter, r *http.Request) {
	h.showTopic(w, r, http.StatusOK, "")
}

func (h *Handler) showTopic(w http.ResponseWriter, r *http.Request, status int, errMsg string) {
	cid, tid := r.PathValue("course"), r.PathValue("topic")
	if !isID(cid) || !isID(tid) {
		h.notFound(w, r)
		return
	}
	prog, ok := h.programOrLogin(w, r, cid)
	if !ok {
		return
	}
	topicID, _ := strconv.ParseInt(tid, 10, 64)
	d := topicData{Program: prog, SignedIn: h.readSession(r) != nil, Error: errMsg}
	var order []*topic
	walkTopics(prog.Lessons, func(l *lesson, t *topic) {
		if t.ID == topicID {
			d.Lesson, d.Topic = l, t
			if len(order) > 0 {
				d.Prev = order[len(order)-1]
			}
		} else if d.Topic != nil && d.Next == nil {
			d.Next = t
		}
		order = append(order, t)
	})
	if d.Topic == nil {
		h.notFound(w, r)
		return
	}
	if d.Topic.Progress != nil {
		d.Status = d.Topic.Progress.Status
	}
	switch r.URL.Query().Get("done") {
	case "project":
		d.Notice = "Your work was submitted. Well done!"
	case "1":
		d.Notice = "Marked as complete."
	}
	h.fillContent(&d)
	h.contentLinks(r, &d)
	h.launchScorm(w, r, &d)
	h.render(w, r, status, "topic", view{Title: d.Topic.Title, Nav: "my", SignedIn: d.SignedIn, Data: d})
}

// fillContent decodes the topic's content for its kind and decides how it
// completes.
func (h *Handler) fillContent(d *topicData) {
	t := d.Topic
	raw := t.Topicable
	if len(raw) == 0 || string(raw) == "null" {
		d.Closed = true
		d.Mode = "none"
		return
	}
	switch t.Kind {
	case "richtext":
		var v struct {
			HTML string `json:"html"`
		}
		json.Unmarshal(raw, &v)
		// The API sanitises rich text on the way in.
		d.HTML = template.HTML(v.HTML)
		d.Mode, d.Manual = "read", true
	case "image", "pdf":
		d.File = &fileContent{}
		json.Unmarshal(raw, d.File)
		d.Mode, d.Manual = "open", true
	case "audio", "video":
		d.File = &fileContent{}
		json.Unmarshal(raw, d.File)
		d.Mode, d.Manual = "ended", t.CanSkip
		if d.File.VideoSiteURL != "" {
			d.Mode, d.Manual = "open", true
			d.VideoEmbed = videoEmbed(d.File.VideoSiteURL)
		}
	case "oembed":
		d.OEmbed = &oembedContent{}
		json.Unmarshal(raw, d.OEmbed)
		// The API rebuilds provider markup as one sandboxed iframe.
		d.HTML = template.HTML(d.OEmbed.HTML)
		d.Mode, d.Manual = "open", true
	case "project":
		d.Project = &projectContent{}
		json.Unmarshal(raw, d.Project)
		d.HTML = template.HTML(d.Project.Instructions)
		d.Accept = strings.Join(d.Project.Accept, ", ")
		d.Mode = "upload"
	case "layout":
		d.Layout = decodeLayout(raw, t.ID)
		if d.Layout == nil {
			// The document cannot be rendered: the fallback stands in.
			var v struct {
				FallbackHTML string `json:"fallback_html"`
			}
			json.Unmarshal(raw, &v)
			d.HTML = template.HTML(v.FallbackHTML)
		}
		d.Mode, d.Manual = "open", true
		if d.Layout != nil && d.Layout.Practice {
			d.Mode, d.Manual = "practice", false
		}
	case "quiz":
		d.Quiz = &quizContent{}
		json.Unmarshal(raw, d.Quiz)
		// The API renders the intro's Markdown to sanitised HTML.
		d.HTML = template.HTML(d.Quiz.Intro)
		if d.Quiz.MinPassScore != nil {
			d.Quiz.PassScore = strconv.FormatFloat(*d.Quiz.MinPassScore, 'f', -1, 64)
		}
		d.Mode = "quiz"
	case "h5p":
		d.H5P = &h5pContent{}
		json.Unmarshal(raw, d.H5P)
		if isID(d.H5P.ContentID) {
			// The learner's H5P state is kept per topic, so the same
			// content in two topics keeps two states.
			d.EmbedSrc = "/h5p/embed/play/" + d.H5P.ContentID + "?contextId=topic-" + strconv.FormatInt(t.ID, 10)
		}
		d.Mode, d.Manual = "xapi", t.CanSkip
	case "scorm":
		// The SCO completes the topic through its tracking (package scorm).
		d.Scorm = &scormContent{}
		json.Unmarshal(raw, d.Scorm)
		d.Mode = "scorm"
	case "cmi5":
		// The AU completes the topic through its statements (package cmi5).
		d.Cmi5 = &cmi5Content{}
		json.Unmarshal(raw, d.Cmi5)
		d.Mode = "cmi5"
	case "interactive":
		d.App = &appContent{}
		json.Unmarshal(raw, d.App)
		// The API renders the text's Markdown to sanitised HTML.
		d.HTML = template.HTML(d.App.TextHTML)
		switch {
		case d.App.Disabled:
			// The site has switched interactive content off: nothing
			// plays, so nothing completes.
			d.Mode = "none"
		case d.App.Completion == "on_open":
			d.Mode, d.Manual = "open", true
		default:
			d.Mode = "app"
		}
	case "lti":
		// The external tool completes the topic with its score (AGS,
		// package lti); the page only launches it.
		d.Mode = "tool"
	case "liascript":
		// The player page reports visits and solved quizzes; the server
		// completes the topic by its rule (package liascript).
		d.Lia = &liaContent{}
		json.Unmarshal(raw, d.Lia)
		d.Mode = "lia"
	default:
		d.Mode, d.Manual = "manual", true
	}
}

// contentLinks moves the play links of interactive apps, LiaScript
// courses and H5P embeds onto the content origin; without one they are
// not played.
func (h *Handler) contentLinks(r *http.Request, d *topicData) {
	if d.H5P != nil && d.EmbedSrc != "" {
		d.EmbedSrc = h.h5pEmbed(r, d.EmbedSrc)
	}
	if d.App != nil && d.App.PlayURL != "" {
		d.App.PlayURL = h.onContent(r, d.App.PlayURL)
	}
	if d.Lia != nil && d.Lia.PlayURL != "" {
		d.Lia.PlayURL = h.onContent(r, d.Lia.PlayURL)
	}
	if d.Layout != nil {
		for i := range d.Layout.Nodes {
			if n := &d.Layout.Nodes[i]; n.LiaSrc != "" {
				n.LiaSrc = h.onContent(r, n.LiaSrc)
			}
			if n := &d.Layout.Nodes[i]; n.H5PSrc != "" {
				n.H5PSrc = h.h5pEmbed(r, n.H5PSrc)
			}
		}
	}
}

// h5pEmbed is an H5P embed page's link on the content origin, naming the
// frontend's origin, the only one the page talks to (frontOrigin); ""
// without a content origin.
func (h *Handler) h5pEmbed(r *http.Request, path string) string {
	src := h.onContent(r, path)
	if src == "" {
		return ""
	}
	return src + "&" + frontParam + "=" + url.QueryEscape(h.origin(r))
}

// liaContent is what the page shows of a LiaScript topic: the player
// page's frame, and the course's structure the reports are checked
// against.
type liaContent struct {
	PlayURL   string `json:"play_url"`
	Structure struct {
		Sections []struct {
			Title string `json:"title"`
		} `json:"sections"`
		Quizzes int `json:"quizzes"`
	} `json:"structure"`
}

// appContent is what the page shows of an interactive topic: the app's
// sandboxed frame, the played range and the lesson text.
type appContent struct {
	PlayURL    string `json:"play_url"`
	Display    string `json:"display"`
	Height     int    `json:"height"`
	StartStep  string `json:"start_step"`
	EndStep    string `json:"end_step"`
	Completion string `json:"completion"`
	TextHTML   string `json:"text_html"`
	// Disabled: the site has interactive topics switched off, and the
	// topic has no play link.
	Disabled bool `json:"disabled"`
}

// completeTopic is the no-script way to complete a topic (and the button
// scripts use when the learner asks).
func (h *Handler) completeTopic(w http.ResponseWriter, r *http.Request) {
	courseID, topicID, s := h.topicPost(w, r)
	if s == nil {
		return
	}
	body := client.WriteInputBody{Progress: []client.ProgressWrite{{TopicID: topicID, Status: statusComplete}}}
	err := h.userCall(w, r, s, func(api *client.Client) error {
		_, err := api.PatchCoursesProgressID(r.Context(), courseID, body)
		return err
	})
	if err != nil {
		h.apiFailed(w, r, err)
		return
	}
	http.Redirect(w, r, topicPath(courseID, topicID)+"?done=1", http.StatusSeeOther)
}

// topicPost reads the course and topic of a form posted from a topic page,
// and the learner's session. It answers itself, with 404 for a bad path or
// the sign-in page without a session, and then returns a nil session.
func (h *Handler) topicPost(w http.ResponseWriter, r *http.Request) (courseID, topicID int64, s *session) {
	cid, tid := r.PathValue("course"), r.PathValue("topic")
	if !isID(cid) || !isID(tid) {
		h.notFound(w, r)
		return 0, 0, nil
	}
	if s = h.readSession(r); s == nil {
		http.Redirect(w, r, "/login?next="+url.QueryEscape("/learn/"+cid+"/"+tid), http.StatusSeeOther)
		return 0, 0, nil
	}
	courseID, _ = strconv.ParseInt(cid, 10, 64)
	topicID, _ = strconv.ParseInt(tid, 10, 64)
	return courseID, topicID, s
}

// topicPath is the page of a topic.
func topicPath(courseID, topicID int64) string {
	return "/learn/" + strconv.FormatInt(courseID, 10) + "/" + strconv.FormatInt(topicID, 10)
}

// maxProject caps a project upload through the frontend; the API applies
// the topic's own, smaller, limit.
const maxProject = 512 << 20

// submitProject streams a project upload (multipart field file) to the
// API, which completes the topic.
func (h *Handler) submitProject(w http.ResponseWriter, r *http.Request) {
	cid, tid := r.PathValue("course"), r.PathValue("topic")
	if !isID(cid) || !isID(tid) {
		h.notFound(w, r)
		return
	}
	s := h.readSession(r)
	if s == nil {
		http.Redirect(w, r, "/login?next="+url.QueryEscape("/learn/"+cid+"/"+tid), http.StatusSeeOther)
		return
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		h.showTopic(w, r, http.StatusUnprocessableEntity, "Choose a file to upload.")
		return
	}
	ctx := r.Context()
	h.maybeRefresh(ctx, w, r, s)
	res, err := h.api.do(ctx, apiCall{Method: http.MethodPost, Path: "/api/topics/" + tid + "/project",
		Host: h.apiHost(r), Token: s.token, Body: http.MaxBytesReader(w, r.Body, maxProject),
		ContentLength: r.ContentLength, Header: http.Header{"Content-Type": {r.Header.Get("Content-Type")},
			"Accept": {"application/json"}}})
	if err != nil {
		h.apiFailed(w, r, err)
		return
	}
	defer res.Body.Close()
	if err := readAnswer(res); err != nil {
		var msg string
		if ae, ok := err.(*client.Error); ok && ae.Status < 500 {
			msg = ae.Message
			for _, m := range ae.Errors {
				msg += " " + strings.Join(m, " ")
			}
		}
		if msg == "" {
			h.apiFailed(w, r, err)
			return
		}
		io.Copy(io.Discard, r.Body)
		h.showTopic(w, r, http.StatusUnprocessableEntity, "Your file was not accepted: "+strings.TrimSpace(msg))
		return
	}
	http.Redirect(w, r, "/learn/"+cid+"/"+tid+"?done=project", http.StatusSeeOther)
}

var videoID = regexp.MustCompile(`^[A-Za-z0-9_-]{6,20}$`)

// videoEmbed turns the page address of a YouTube or Vimeo video into the
// address of its embeddable player.
func videoEmbed(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" && u.Scheme != "http" {
		return ""
	}
	host := strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
	path := strings.Trim(u.Path, "/")
	var id string
	switch host {
	case "youtube.com", "m.youtube.com", "youtube-nocookie.com":
		switch {
		case path == "watch":
			id = u.Query().Get("v")
		case strings.HasPrefix(path, "embed/"), strings.HasPrefix(path, "shorts/"):
			_, id, _ = strings.Cut(path, "/")
		}
		if videoID.MatchString(id) {
			return "https://www.youtube-nocookie.com/embed/" + id
		}
	case "youtu.be":
		if videoID.MatchString(path) {
			return "https://www.youtube-nocookie.com/embed/" + path
		}
	case "vimeo.com", "player.vimeo.com":
		path = strings.TrimPrefix(path, "video/")
		if isID(path) {
			return "https://player.vimeo.com/video/" + path
		}
	}
	return ""
}
