package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/lms-platform/lms/client"
)

// topicKind is a kind the "Add topic" flow offers: its topicable class,
// the file field it uploads (none, file or package) and the file types
// the picker suggests.
type topicKind struct {
	Name, Class string
	Upload      string
	Accept      string
}

const topicClassPrefix = `Lms\TopicTypes\Models\TopicContent\`

var topicKinds = []topicKind{
	{"richtext", topicClassPrefix + "RichText", "", ""},
	{"video", topicClassPrefix + "Video", "file", "video/mp4,video/webm,video/ogg,video/quicktime,.mp4,.webm,.ogv,.ogg,.mov"},
	{"audio", topicClassPrefix + "Audio", "file", "audio/mpeg,audio/ogg,.mp3,.ogg"},
	{"image", topicClassPrefix + "Image", "file", "image/*"},
	{"pdf", topicClassPrefix + "PDF", "file", "application/pdf,.pdf"},
	{"oembed", topicClassPrefix + "OEmbed", "", ""},
	{"h5p", topicClassPrefix + "H5P", "package", ".h5p"},
	{"scorm", topicClassPrefix + "ScormSco", "package", ".zip,application/zip"},
	{"cmi5", topicClassPrefix + "Cmi5Au", "package", ".zip,.xml,application/zip"},
	{"liascript", `Lms\TopicTypeLiaScript\Models\LiaScript`, "file", ".md,.zip"},
	{"lti", topicClassPrefix + "LTI", "", ""},
	{"quiz", `Lms\TopicTypeGift\Models\GiftQuiz`, "", ""},
	{"project", `Lms\TopicTypeProject\Models\Project`, "", ""},
	{"interactive", topicClassPrefix + "Interactive", "file", ".zip,application/zip"},
	{"layout", topicClassPrefix + "Layout", "", ""},
}

func kindNamed(name string) (topicKind, bool) {
	for _, k := range topicKinds {
		if k.Name == name {
			return k, true
		}
	}
	return topicKind{}, false
}

// topicFormData is the "Add topic" page: first the kinds, then the form
// of the chosen kind, shown again with the API's messages by field.
type topicFormData struct {
	teachPage
	Course  int64
	Lesson  int64
	Lessons []*teachLesson
	Kinds   []topicKind
	Kind    topicKind
	Values  url.Values
	Errors  map[string]string
	Tools   []client.ToolChoice
	// Choices of a package with several SCOs or AUs, and the package.
	Choices []choice
	Package int64
	Action  string
	// Layout is the layout form's palette and outline; failed is the
	// API's refusal of the form, if any.
	Layout layoutEditor
	failed error
	// H5PEditor is the H5P form's editor, instead of its upload, when the
	// author chose it (editor=1).
	H5PEditor *h5pEditor
}

type choice struct {
	ID    int64
	Title string
}

// V is a value the author typed.
func (d topicFormData) V(name string) string { return d.Values.Get(name) }

// E is the API's message for a field.
func (d topicFormData) E(name string) string { return d.Errors[name] }

// LiaRules are the completion rules of a LiaScript topic the API knows,
// the default first.
func (topicFormData) LiaRules() []string { return []string{"all", "sections", "quizzes"} }

func (h *Handler) teachNewTopic(w http.ResponseWriter, r *http.Request) {
	course, a := h.courseAuthor(w, r)
	if a == nil {
		return
	}
	q := r.URL.Query()
	d := &topicFormData{Course: course, Values: url.Values{"lesson": {q.Get("lesson")}, "editor": {q.Get("editor")}},
		Errors: map[string]string{}}
	if k, ok := kindNamed(q.Get("kind")); ok {
		d.Kind = k
	}
	h.showTopicForm(w, r, a, http.StatusOK, d)
}

func (h *Handler) showTopicForm(w http.ResponseWriter, r *http.Request, a *author, status int, d *topicFormData) {
	d.teachPage, d.Kinds = a.page(r), topicKinds
	if len(d.Errors) > 0 && d.Error == "" {
		d.Error = a.t.S("problem")
	}
	ctx := r.Context()
	prog, err := a.api.GetAdminCoursesIDProgram(ctx, d.Course)
	if err != nil {
		h.apiFailed(w, r, err)
		return
	}
	d.Lessons = flatLessons(teachProgram(d.Course, prog.Lessons, a.t), nil)
	if d.Kind.Name == "lti" {
		if tools, err := a.api.GetAdminLTIToolChoices(ctx); err == nil {
			d.Tools = tools
		}
	}
	if d.Kind.Name == "layout" {
		d.Layout = newLayoutEditor(ctx, a.api, d.V("document"), d.failed)
	}
	if d.Kind.Name == "h5p" && d.V("editor") == "1" {
		// After a refusal the content saved by the editor is edited again.
		id := d.V("content_id")
		if !isID(id) {
			id = ""
		}
		d.H5PEditor = h.newH5PEditor(r, a, id)
	}
	d.Action = "/teach/courses/" + strconv.FormatInt(d.Course, 10) + "/topics/new?kind=" + d.Kind.Name
	h.teachRender(w, r, a, status, "teach-topic-new", a.t.S("add_topic"), d)
}

func flatLessons(ls []*teachLesson, into []*teachLesson) []*teachLesson {
	for _, l := range ls {
		into = append(into, l)
		into = flatLessons(l.Lessons, into)
	}
	return into
}

// Limits of what the topic form holds besides its one upload.
const (
	maxTopicText = 4 << 20
	maxGIFTFile  = 1 << 20
)

// teachCreateTopic reads the "Add topic" form part by part: text fields
// (and a GIFT file) into values, and the one upload, the form's last
// field, streamed to the API as it arrives.
func (h *Handler) teachCreateTopic(w http.ResponseWriter, r *http.Request) {
	course, a := h.courseAuthor(w, r)
	if a == nil {
		return
	}
	kind, ok := kindNamed(r.URL.Query().Get("kind"))
	if !ok {
		h.notFound(w, r)
		return
	}
	d := &topicFormData{Course: course, Kind: kind, Values: url.Values{}, Errors: map[string]string{}}
	var upload *client.File
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "multipart/form-data" {
		mr, err := r.MultipartReader()
		if err != nil {
			h.errorPage(w, r, http.StatusBadRequest, a.t.S("failed"), a.t.S("form_unreadable"))
			return
		}
		text := 0
		for {
			part, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				h.errorPage(w, r, http.StatusBadRequest, a.t.S("failed"), a.t.S("form_unreadable"))
				return
			}
			name := part.FormName()
			if part.FileName() == "" {
				b, _ := io.ReadAll(io.LimitReader(part, int64(maxTopicText-text+1)))
				if text += len(b); text > maxTopicText {
					h.errorPage(w, r, http.StatusRequestEntityTooLarge, a.t.S("failed"), a.t.S("form_too_large"))
					return
				}
				d.Values.Add(name, string(b))
				continue
			}
			if name == "gift_file" {
				b, _ := io.ReadAll(io.LimitReader(part, maxGIFTFile))
				d.Values.Set("gift", string(b))
				continue
			}
			if name == kind.Upload {
				upload = &client.File{Name: part.FileName(), Content: part}
				break
			}
		}
	} else {
		d.Values = r.PostForm
	}
	lesson, _ := strconv.ParseInt(d.V("lesson"), 10, 64)
	form := client.PostAdminTopicsForm{Lesson: lesson, Title: strings.TrimSpace(d.V("title")), Topicable: kind.Class,
		Extra: map[string]string{}}
	opt := func(name string) *string {
		if v := strings.TrimSpace(d.V(name)); v != "" {
			return &v
		}
		return nil
	}
	num := func(name string) *int64 {
		if n, err := strconv.ParseInt(strings.TrimSpace(d.V(name)), 10, 64); err == nil {
			return &n
		}
		return nil
	}
	switch kind.Name {
	case "richtext":
		form.Markdown = client.Ptr(d.V("markdown"))
	case "video":
		form.VideoSiteURL = opt("videoSiteUrl")
	case "oembed":
		form.URL = client.Ptr(strings.TrimSpace(d.V("url")))
	case "liascript":
		form.Markdown = opt("markdown")
		if c := opt("completion"); c != nil {
			form.Extra["completion"] = *c
		}
	case "lti":
		form.Tool = num("tool")
	case "project":
		form.Instructions, form.Accept = opt("instructions"), opt("accept")
	case "interactive":
		form.Height = num("height")
	case "layout":
		form.Extra["document"] = d.V("document")
		form.Fallback = client.Ptr(d.V("fallback"))
	case "quiz":
		form.MaxAttempts = num("maxAttempts")
		if v := opt("minPassScore"); v != nil {
			if f, err := strconv.ParseFloat(strings.Replace(*v, ",", ".", 1), 64); err == nil {
				form.MinPassScore = &f
			} else {
				d.Errors["minPassScore"] = a.t.S("bad_number")
			}
		}
		for _, q := range splitGIFT(d.V("gift")) {
			form.Questions = append(form.Questions, client.PostAdminTopicsFormQuestionsItem{Gift: client.Ptr(q)})
		}
		if form.Questions == nil {
			form.Questions = []client.PostAdminTopicsFormQuestionsItem{}
		}
	case "scorm":
		if pkg := num("package"); pkg != nil {
			form.Extra["package"] = strconv.FormatInt(*pkg, 10)
		}
		if sco := opt("sco"); sco != nil {
			form.Sco = *sco
		}
	case "h5p":
		// Made in the H5P editor: the content it saved.
		if id := d.V("content_id"); isID(id) {
			form.Extra["content_id"] = id
		}
	case "cmi5":
		form.Au = num("au")
		if pkg := num("package"); pkg != nil {
			form.Extra["package"] = strconv.FormatInt(*pkg, 10)
		}
	}
	ctx := r.Context()
	if upload != nil && kind.Name == "cmi5" {
		// The AU is chosen from the imported package, kept by id so that
		// it is not uploaded twice.
		pkg, err := a.api.PostAdminCmi5(ctx, client.PostAdminCmi5Form{Package: upload})
		if msg, ok := fieldErrors(err, d.Errors); ok {
			d.Error = msg
			if d.Errors["package"] == "" {
				d.Errors["package"] = msg
			}
			h.showTopicForm(w, r, a, http.StatusUnprocessableEntity, d)
			return
		}
		if err != nil {
			h.apiFailed(w, r, err)
			return
		}
		upload = nil
		form.Extra["package"] = strconv.FormatInt(pkg.ID, 10)
		d.Values.Set("package", form.Extra["package"])
		if len(pkg.Aus) == 1 {
			form.Au = &pkg.Aus[0].ID
		}
	}
	if upload != nil {
		if kind.Upload == "file" {
			form.File = upload
		} else {
			form.ExtraFiles = map[string]client.File{kind.Upload: *upload}
		}
	}
	var topic *client.View
	err := errors.New("invalid")
	if len(d.Errors) == 0 {
		topic, err = a.api.PostAdminTopicsMultipart(ctx, form)
	}
	if msg, ok := fieldErrors(err, d.Errors); ok || len(d.Errors) > 0 {
		d.Error, d.failed = msg, err
		d.Choices, d.Package = choicesOf(err)
		if d.Package != 0 {
			d.Values.Set("package", strconv.FormatInt(d.Package, 10))
		}
		if p, _ := strconv.ParseInt(d.V("package"), 10, 64); p != 0 {
			d.Package = p
		}
		if len(d.Choices) > 0 {
			d.Error = ""
			delete(d.Errors, "sco")
			delete(d.Errors, "au")
		}
		h.showTopicForm(w, r, a, http.StatusUnprocessableEntity, d)
		return
	}
	if err != nil {
		h.apiFailed(w, r, err)
		return
	}
	http.Redirect(w, r, "/teach/courses/"+strconv.FormatInt(course, 10)+"/topics/"+strconv.FormatInt(topic.ID, 10)+
		"?notice=topic_added", http.StatusSeeOther)
}

// choicesOf reads the SCOs or AUs a 422 offers (details.choices) and the
// package it names.
func choicesOf(err error) ([]choice, int64) {
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Details == nil {
		return nil, 0
	}
	var out []choice
	list, _ := ae.Details["choices"].([]any)
	for _, c := range list {
		m, _ := c.(map[string]any)
		id, _ := m["id"].(float64)
		title, _ := m["title"].(string)
		if id > 0 {
			if title == "" {
				title, _ = m["identifier"].(string)
			}
			out = append(out, choice{ID: int64(id), Title: title})
		}
	}
	pkg, _ := ae.Details["package"].(float64)
	return out, int64(pkg)
}

// splitGIFT cuts a GIFT text into its questions: they are separated by
// blank lines; comment lines (//) alone are no question, and a $CATEGORY
// line is kept with the question after it.
func splitGIFT(text string) []string {
	var out []string
	var cur []string
	category := ""
	flush := func() {
		block := strings.TrimSpace(strings.Join(cur, "\n"))
		cur = nil
		if block == "" {
			return
		}
		meaningful := false
		for _, line := range strings.Split(block, "\n") {
			t := strings.TrimSpace(line)
			if t != "" && !strings.HasPrefix(t, "//") {
				meaningful = true
			}
		}
		if !meaningful {
			return
		}
		if strings.HasPrefix(block, "$CATEGORY:") && !strings.Contains(block, "{") {
			category = block
			return
		}
		if category != "" {
			block = category + "\n\n" + block
		}
		out = append(out, block)
	}
	depth := 0
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if strings.TrimSpace(line) == "" && depth == 0 {
			flush()
			continue
		}
		for i := 0; i < len(line); i++ {
			switch line[i] {
			case '\\':
				i++
			case '{':
				depth++
			case '}':
				if depth > 0 {
					depth--
				}
			}
		}
		cur = append(cur, line)
	}
	flush()
	return out
}

// topicPageData is a topic's page for its author: what the API made of
// it (the parsed questions of a quiz with their right answers, the
// transcoding state of a video) and the form that edits it, filled from
// the topic or, after a 422, with what the author typed and the API's
// messages by field.
type topicPageData struct {
	teachPage
	Course     int64
	Topic      *client.View
	Kind       string
	Questions  []quizRow
	Quiz       quizContent
	File       fileContent
	Processing string
	Values     url.Values
	Errors     map[string]string
	Action     string
	Layout     layoutEditor
	// H5P is an H5P topic's content, and H5PEditor its editor when the
	// author opened it (editor=1).
	H5P       h5pContent
	H5PEditor *h5pEditor
}

// V is a value of the edit form.
func (d *topicPageData) V(name string) string { return d.Values.Get(name) }

// E is the API's message for a field of the edit form.
func (d *topicPageData) E(name string) string { return d.Errors[name] }

type quizRow struct {
	ID     int64
	Stem   string
	Right  []string
	Score  float64
	Source string
}

func (h *Handler) teachTopic(w http.ResponseWriter, r *http.Request) {
	a, d := h.loadTopic(w, r)
	if d == nil {
		return
	}
	if d.Kind == "layout" {
		d.Layout = newLayoutEditor(r.Context(), a.api, d.V("document"), nil)
	}
	if r.URL.Query().Get("editor") == "1" {
		h.openH5PEditor(r, a, d)
	}
	h.teachRender(w, r, a, http.StatusOK, "teach-topic", d.Topic.Title, d)
}

// loadTopic reads the topic of the path and fills its edit form from it;
// nil: answered.
func (h *Handler) loadTopic(w http.ResponseWriter, r *http.Request) (*author, *topicPageData) {
	course, ok := h.pathID(w, r, "course")
	if !ok {
		return nil, nil
	}
	id, ok := h.pathID(w, r, "topic")
	if !ok {
		return nil, nil
	}
	a := h.authorOf(w, r)
	if a == nil {
		return nil, nil
	}
	ctx := r.Context()
	t, err := a.api.GetAdminTopicsID(ctx, id)
	if err != nil {
		h.apiFailed(w, r, err)
		return nil, nil
	}
	d := &topicPageData{teachPage: a.page(r), Course: course, Topic: t, Kind: t.Kind,
		Values: url.Values{"title": {t.Title}}, Errors: map[string]string{},
		Action: "/teach/courses/" + strconv.FormatInt(course, 10) + "/topics/" + strconv.FormatInt(id, 10)}
	switch t.Kind {
	case "quiz":
		remarshal(t.Topicable, &d.Quiz)
		qs, err := a.api.GetAdminTopicsIDGiftQuestions(ctx, id)
		if err != nil {
			h.apiFailed(w, r, err)
			return nil, nil
		}
		var gift []string
		for _, q := range qs {
			d.Questions = append(d.Questions, quizRow{ID: q.ID, Stem: q.Gift.Stem.Text, Right: rightAnswers(q.Gift),
				Score: q.Score, Source: q.Value})
			gift = append(gift, q.Value)
		}
		d.Values.Set("gift", strings.Join(gift, "\n\n"))
		if d.Quiz.MaxAttempts > 0 {
			d.Values.Set("maxAttempts", strconv.Itoa(d.Quiz.MaxAttempts))
		}
		if d.Quiz.MinPassScore != nil {
			d.Values.Set("minPassScore", strconv.FormatFloat(*d.Quiz.MinPassScore, 'f', -1, 64))
		}
	case "h5p":
		remarshal(t.Topicable, &d.H5P)
	case "video", "audio", "image", "pdf":
		remarshal(t.Topicable, &d.File)
		d.Processing = d.File.Processing
	case "richtext":
		var c struct{ HTML, Markdown string }
		remarshal(t.Topicable, &c)
		// Text written as Markdown is edited as Markdown; older HTML-only
		// text as HTML.
		if c.Markdown != "" || c.HTML == "" {
			d.Values.Set("markdown", c.Markdown)
		} else {
			d.Values.Set("html", c.HTML)
		}
	case "oembed":
		var c struct{ URL string }
		remarshal(t.Topicable, &c)
		d.Values.Set("url", c.URL)
	case "project":
		var c struct {
			Instructions, Markdown string
			Accept                 []string
		}
		remarshal(t.Topicable, &c)
		if c.Markdown != "" {
			c.Instructions = c.Markdown
		}
		d.Values.Set("instructions", c.Instructions)
		d.Values.Set("accept", strings.Join(c.Accept, ", "))
	case "layout":
		var c struct {
			Document json.RawMessage
			Fallback string
		}
		remarshal(t.Topicable, &c)
		var doc bytes.Buffer
		if json.Indent(&doc, c.Document, "", "  ") == nil {
			d.Values.Set("document", doc.String())
		}
		d.Values.Set("fallback", c.Fallback)
	}
	return a, d
}

// teachSaveTopic saves the edit form with PATCH /api/admin/topics/{id}:
// the title, and the fields of the kinds edited here. A quiz's questions
// keep their ids (and so their answers' history) when their GIFT text is
// unchanged.
func (h *Handler) teachSaveTopic(w http.ResponseWriter, r *http.Request) {
	a, d := h.loadTopic(w, r)
	if d == nil {
		return
	}
	in := r.PostForm
	d.Values = url.Values{"title": {in.Get("title")}}
	form := client.PatchAdminTopicsIDForm{Title: client.Ptr(strings.TrimSpace(in.Get("title"))), Extra: map[string]string{}}
	text := func(name string) *string {
		d.Values.Set(name, in.Get(name))
		return client.Ptr(in.Get(name))
	}
	switch d.Kind {
	case "richtext":
		if in.Has("html") {
			form.HTML = text("html")
		} else {
			form.Markdown = text("markdown")
		}
	case "oembed":
		form.URL = client.Ptr(strings.TrimSpace(*text("url")))
	case "project":
		form.Instructions, form.Accept = text("instructions"), text("accept")
	case "layout":
		form.Extra["document"], form.Fallback = *text("document"), text("fallback")
	case "quiz":
		ids := map[string]int64{}
		for _, q := range d.Questions {
			ids[strings.TrimSpace(q.Source)] = q.ID
		}
		form.Questions = []client.PatchAdminTopicsIDFormQuestionsItem{}
		for _, q := range splitGIFT(*text("gift")) {
			item := client.PatchAdminTopicsIDFormQuestionsItem{Gift: client.Ptr(q)}
			if id, ok := ids[strings.TrimSpace(q)]; ok {
				item.ID = client.Ptr(id)
			}
			form.Questions = append(form.Questions, item)
		}
		if v := strings.TrimSpace(*text("maxAttempts")); v != "" {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				form.MaxAttempts = &n
			} else {
				d.Errors["maxAttempts"] = a.t.S("bad_number")
			}
		}
		if v := strings.TrimSpace(*text("minPassScore")); v != "" {
			if f, err := strconv.ParseFloat(strings.Replace(v, ",", ".", 1), 64); err == nil {
				form.MinPassScore = &f
			} else {
				d.Errors["minPassScore"] = a.t.S("bad_number")
			}
		}
	}
	err := errors.New("invalid")
	if len(d.Errors) == 0 {
		_, err = a.api.PatchAdminTopicsIDMultipart(r.Context(), d.Topic.ID, form)
	}
	if msg, ok := fieldErrors(err, d.Errors); ok || len(d.Errors) > 0 {
		d.Error = msg
		if d.Error == "" {
			d.Error = a.t.S("problem")
		}
		if d.Kind == "layout" {
			d.Layout = newLayoutEditor(r.Context(), a.api, d.V("document"), err)
		}
		if in.Get("editor") == "1" {
			h.openH5PEditor(r, a, d)
		}
		h.teachRender(w, r, a, http.StatusUnprocessableEntity, "teach-topic", d.Topic.Title, d)
		return
	}
	if err != nil {
		h.apiFailed(w, r, err)
		return
	}
	http.Redirect(w, r, d.Action+"?notice=saved", http.StatusSeeOther)
}

// rightAnswers lists what counts as right in a parsed GIFT question.
func rightAnswers(q client.Question) []string {
	var out []string
	if q.Truth != nil {
		return []string{strconv.FormatBool(*q.Truth)}
	}
	for _, p := range q.Pairs {
		out = append(out, p.Question.Text+" → "+p.Answer)
	}
	for _, ans := range q.Answers {
		switch {
		case ans.Weight <= 0:
		case ans.Range != nil && *ans.Range && ans.Min != nil && ans.Max != nil:
			out = append(out, fmt.Sprintf("%g … %g", *ans.Min, *ans.Max))
		case ans.Text.Text != "":
			out = append(out, ans.Text.Text)
		case ans.Min != nil:
			out = append(out, fmt.Sprintf("%g", *ans.Min))
		}
	}
	return out
}

// remarshal reads a decoded JSON value (a topic's content) into out.
func remarshal(v any, out any) {
	if b, err := json.Marshal(v); err == nil {
		json.Unmarshal(b, out)
	}
}

// teachDeepLink asks a tool for content for a lesson (LTI Deep Linking,
// POST /api/lti/deep-links) and sends the browser on to the tool, which
// the form opened in a new window: the tool's content items come back to
// the API, which makes them lti topics of the lesson, while the author's
// page stays where it was.
func (h *Handler) teachDeepLink(w http.ResponseWriter, r *http.Request) {
	course, a := h.courseAuthor(w, r)
	if a == nil {
		return
	}
	lesson, errL := strconv.ParseInt(r.PostFormValue("lesson"), 10, 64)
	tool, errT := strconv.ParseInt(r.PostFormValue("tool"), 10, 64)
	if errL != nil || errT != nil {
		h.errorPage(w, r, http.StatusBadRequest, a.t.S("failed"), a.t.S("form_unreadable"))
		return
	}
	var kept cookieKeeper
	l, err := h.api.keeping(h.apiHost(r), a.s.token, &kept).PostLTIDeepLinks(r.Context(),
		client.DeepLinkInputBody{Lesson: lesson, Tool: tool})
	if msg, refused := fieldErrors(err, map[string]string{}); refused {
		h.errorPage(w, r, http.StatusUnprocessableEntity, a.t.S("failed"), msg)
		return
	}
	if err != nil {
		h.apiFailed(w, r, err)
		return
	}
	h.handToTool(w, r, kept.cookies, l.URL, "/teach/courses/"+strconv.FormatInt(course, 10)+"#program", a.t.S("back_to_course"))
}
