package lmsctl

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"

	"github.com/lms-platform/lms/internal/gift"
)

// topicType is one type of `lmsctl create-topic`: its content class, the
// flags it adds to the common ones, and how it turns them into the body
// of POST /api/admin/topics: prepare checks and converts the flags before
// any request, upload (when the type has one) sends files first and says
// what it left on the server. Each new type the API supports is one more
// entry of topicTypes.
type topicType struct {
	class   string
	summary string
	flags   []topicFlag
	prepare func(v topicValues, body map[string]any) error
	upload  func(ctx context.Context, c *Caller, v topicValues, body map[string]any) (*leftover, error)
	// extensions, when set, make --file a local file of one of them, sent
	// with the topic as multipart form data.
	extensions []string
}

type topicFlag struct {
	name, usage string
}

// leftover is what an upload left on the server. When creating the topic
// then fails, the failure names it under details[key] and its message
// says what exists and how to finish the topic or remove it.
type leftover struct {
	key   string
	value any
	note  string
}

// topicValues are the type's flags as given ("" when not).
type topicValues map[string]string

var topicTypes = map[string]topicType{
	"richtext": {
		class:   `Lms\TopicTypes\Models\TopicContent\RichText`,
		summary: "rich text from Markdown (converted to HTML here) or HTML",
		flags: []topicFlag{
			{"markdown", "Markdown text, or @file.md"},
			{"html", "HTML text, or @file.html"},
		},
		prepare: prepareRichText,
	},
	"pdf":   fileTopic("PDF", "a PDF document", ".pdf"),
	"image": fileTopic("Image", "an image", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg"),
	"audio": fileTopic("Audio", "an audio file", ".mp3", ".ogg"),
	"video": {
		class:   `Lms\TopicTypes\Models\TopicContent\Video`,
		summary: "a video file (processed by the server afterwards) or a video site URL",
		flags: []topicFlag{
			{"file", "the video file (.mp4 .ogg .webm .mov)"},
			{"video-site-url", "URL of the video on a video site, instead of a file"},
		},
		prepare: func(v topicValues, body map[string]any) error {
			if (v["file"] == "") == (v["video-site-url"] == "") {
				return usagef("create-topic video: give exactly one of --file and --video-site-url")
			}
			if u := v["video-site-url"]; u != "" {
				body["videoSiteUrl"] = u
				return nil
			}
			return checkFile("file", v["file"], ".mp4", ".ogg", ".webm", ".mov")
		},
		extensions: []string{".mp4", ".ogg", ".webm", ".mov"},
	},
	"oembed": {
		class:   `Lms\TopicTypes\Models\TopicContent\OEmbed`,
		summary: "an embedded URL of an oEmbed provider",
		flags:   []topicFlag{{"url", "page URL of the video or content"}},
		prepare: func(v topicValues, body map[string]any) error {
			if v["url"] == "" {
				return usagef("create-topic oembed: --url is required")
			}
			body["url"] = v["url"]
			return nil
		},
	},
	"project": {
		class:   `Lms\TopicTypeProject\Models\Project`,
		summary: "a project learners submit files to",
		flags: []topicFlag{
			{"instructions", "instructions in Markdown, or @file.md"},
			{"accept", "accepted extensions, separated by commas"},
			{"max-size", "largest submission in bytes"},
		},
		prepare: prepareProject,
	},
	"layout": {
		class:   `Lms\TopicTypes\Models\TopicContent\Layout`,
		summary: "a structured lesson of approved components (GET /api/admin/layout/components) with a Markdown fallback",
		flags: []topicFlag{
			{"document", "the JSON list of nodes {component, props, id?}, or @file.json"},
			{"fallback", "Markdown shown where layouts are not rendered, without hints or solutions, or @file.md"},
		},
		prepare: prepareLayout,
	},
	"quiz": {
		class:   `Lms\TopicTypeGift\Models\GiftQuiz`,
		summary: "a quiz: questions {prompt, options:[{text, correct}], score?} (converted to GIFT here) or {gift, score?}",
		flags: []topicFlag{
			{"questions", "the JSON list of questions, or @file.json"},
			{"gift", "questions in GIFT, blank-line separated, or @file.gift (instead of --questions)"},
			{"max-attempts", "attempts a learner has (0: no limit)"},
			{"min-pass-score", "points needed to pass"},
			{"review", "when learners see the right answers: after_end (default), after_answer (each answer is then final) or never"},
			{"intro", "the quiz's introduction in Markdown, or @file.md"},
		},
		prepare: prepareQuiz,
	},
	"interactive": {
		class: `Lms\TopicTypes\Models\TopicContent\Interactive`,
		summary: "a sandboxed web app: a .zip with lms-interactive.json (--file) or an uploaded package (--package); " +
			"completion on_open, on_range_end (default), on_complete or on_score",
		flags: []topicFlag{
			{"file", "the app's .zip, with lms-interactive.json at its root"},
			{"package", "id of a package uploaded with post-admin-interactive, instead of --file"},
			{"version", "the package version to pin (default: the current one)"},
			{"follow-latest", "true: play every new version"},
			{"start-step", "first step id of the played range"},
			{"end-step", "last step id of the played range"},
			{"completion", "on_open, on_range_end, on_complete or on_score"},
			{"pass-score", "pass percentage (0-100) with on_score"},
			{"display", "inline (default) or background"},
			{"height", "inline height in pixels (240-2000)"},
			{"text", "lesson text in Markdown, or @file.md"},
			{"accept-network", "true: accept the network origins the manifest lists"},
		},
		prepare:    prepareInteractive,
		extensions: []string{".zip"},
	},
	"liascript": {
		class:   `Lms\TopicTypeLiaScript\Models\LiaScript`,
		summary: "a LiaScript course: Markdown (--markdown) or an .md or .zip with its assets (--file)",
		flags: []topicFlag{
			{"markdown", "the course's Markdown, or @file.md"},
			{"file", "the course as .md, or a .zip with the .md and its assets"},
			{"completion", "all (default: every section visited and quiz solved), sections or quizzes"},
		},
		prepare: func(v topicValues, body map[string]any) error {
			if (v["markdown"] == "") == (v["file"] == "") {
				return usagef("create-topic liascript: give exactly one of --markdown and --file")
			}
			if v["completion"] != "" {
				body["liascriptCompletion"] = v["completion"]
			}
			if v["file"] != "" {
				return checkFile("file", v["file"], ".md", ".zip")
			}
			text, err := textArg("markdown", v["markdown"])
			body["markdown"] = text
			return err
		},
		extensions: []string{".md", ".zip"},
	},
	"h5p": {
		class:   `Lms\TopicTypes\Models\TopicContent\H5P`,
		summary: "an H5P package (.h5p), uploaded to the H5P service first",
		flags:   []topicFlag{{"package", "the .h5p file"}},
		prepare: checkH5P,
		upload:  uploadH5P,
	},
	"scorm": {
		class: `Lms\TopicTypes\Models\TopicContent\ScormSco`,
		summary: "a SCO of a SCORM 1.2 or 2004 package (.zip), uploaded first; a package with several SCOs needs --sco " +
			"(without it lmsctl exits with code 2 and details.choices lists them)",
		flags: []topicFlag{
			{"package", "the SCORM package (.zip), or the id of an uploaded package"},
			{"sco", "id of the SCO to play (from details.choices or the upload's scos)"},
		},
		prepare: preparePackage("sco", ".zip"),
		upload:  uploadPackage("/api/admin/scorm/upload", "sco", "delete-admin-scorm-package --package"),
	},
	"cmi5": {
		class:   `Lms\TopicTypes\Models\TopicContent\Cmi5Au`,
		summary: "one AU of a cmi5 course package (.zip, or cmi5.xml with absolute AU URLs), uploaded first; a package with several AUs needs --au (without it lmsctl exits with code 2 and details.choices lists them)",
		flags: []topicFlag{
			{"package", "the package file (.zip or .xml), or the id of an uploaded package"},
			{"au", "the AU id (from details.choices or the upload's aus)"},
		},
		prepare: preparePackage("au", ".zip", ".xml"),
		upload:  uploadPackage("/api/admin/cmi5", "au", ""),
	},
	"lti": {
		class:   `Lms\TopicTypes\Models\TopicContent\LTI`,
		summary: "an external LTI 1.3 tool (GET /api/admin/lti/tools), launched from the topic",
		flags: []topicFlag{
			{"tool", "id of the external tool"},
			{"url", "the resource's target link (default: the tool's)"},
			{"custom", "custom parameters as a JSON object of strings, or @file.json"},
			{"score-maximum", "scoreMaximum of the resource link's line item (AGS; default 100)"},
		},
		prepare: prepareLTI,
	},
}

// markdown renders like the server's rich-text kind (GitHub-flavoured);
// the server still sanitises the HTML it receives.
var markdown = goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(html.WithUnsafe()))

func prepareRichText(v topicValues, body map[string]any) error {
	md, ht := v["markdown"], v["html"]
	if (md == "") == (ht == "") {
		return usagef("create-topic richtext: give exactly one of --markdown and --html")
	}
	if ht != "" {
		text, err := textArg("html", ht)
		body["html"] = text
		return err
	}
	text, err := textArg("markdown", md)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := markdown.Convert([]byte(text), &out); err != nil {
		return usagef("--markdown: %v", err)
	}
	body["html"] = out.String()
	return nil
}

// prepareLayout sends the document as given (the server checks every node
// and answers all problems at once) once it is a JSON list.
func prepareLayout(v topicValues, body map[string]any) error {
	if v["document"] == "" || v["fallback"] == "" {
		return usagef("create-topic layout: --document and --fallback are required")
	}
	text, err := textArg("document", v["document"])
	if err != nil {
		return err
	}
	var doc []any
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		return usagef("--document: not a JSON list of nodes: %v", err)
	}
	fallback, err := textArg("fallback", v["fallback"])
	if err != nil {
		return err
	}
	body["document"], body["fallback"] = doc, fallback
	return nil
}

// prepareQuiz sends every question as GIFT: a question {prompt, options}
// is converted here, by the function the server converts with, and each
// question of a GIFT file is sent on its own; the server parses and
// checks the GIFT.
func prepareQuiz(v topicValues, body map[string]any) error {
	if (v["questions"] == "") == (v["gift"] == "") {
		return usagef("create-topic quiz: give exactly one of --questions and --gift")
	}
	var questions []quizQuestion
	if v["questions"] != "" {
		text, err := textArg("questions", v["questions"])
		if err != nil {
			return err
		}
		var given []struct {
			Prompt  string        `json:"prompt"`
			Options []gift.Option `json:"options"`
			GIFT    string        `json:"gift"`
			Score   *float64      `json:"score"`
		}
		if err := json.Unmarshal([]byte(text), &given); err != nil || len(given) == 0 {
			return usagef("--questions: not a non-empty JSON list of questions {prompt, options, score?} or {gift, score?}")
		}
		for i, q := range given {
			if q.GIFT != "" && (q.Prompt != "" || len(q.Options) > 0) {
				return usagef("--questions: question %d: give either gift or prompt with options, not both", i+1)
			}
			if q.GIFT == "" {
				if q.GIFT, err = gift.FromOptions(q.Prompt, q.Options); err != nil {
					return usagef("--questions: question %d: %v", i+1, err)
				}
			}
			questions = append(questions, quizQuestion{GIFT: q.GIFT, Score: q.Score})
		}
	} else {
		text, err := textArg("gift", v["gift"])
		if err != nil {
			return err
		}
		for _, q := range giftQuestions(text) {
			questions = append(questions, quizQuestion{GIFT: q})
		}
		if len(questions) == 0 {
			return usagef("--gift: no question in the text")
		}
	}
	body["questions"] = questions
	for flag, field := range map[string]string{"max-attempts": "maxAttempts", "min-pass-score": "minPassScore"} {
		if v[flag] == "" {
			continue
		}
		n, err := strconv.ParseFloat(v[flag], 64)
		if err != nil || n < 0 {
			return usagef("--%s: not a number of 0 or more", flag)
		}
		body[field] = n
	}
	if v["review"] != "" {
		// The server checks the value and names the allowed ones.
		body["review"] = v["review"]
	}
	if v["intro"] != "" {
		text, err := textArg("intro", v["intro"])
		if err != nil {
			return err
		}
		body["value"] = text
	}
	return nil
}

// quizQuestion is one question of a quiz topic as lmsctl sends it.
type quizQuestion struct {
	GIFT  string   `json:"gift"`
	Score *float64 `json:"score,omitempty"`
}

var blankLine = regexp.MustCompile(`\r?\n[ \t]*\r?\n`)

// giftQuestions splits a GIFT text into its questions: GIFT separates
// questions by blank lines. Blocks of comments and category lines only
// are no questions.
func giftQuestions(text string) []string {
	var out []string
	for _, block := range blankLine.Split(strings.TrimSpace(text), -1) {
		question := false
		for _, line := range strings.Split(block, "\n") {
			line = strings.TrimSpace(line)
			if line != "" && !strings.HasPrefix(line, "//") && !strings.HasPrefix(line, "$CATEGORY:") {
				question = true
			}
		}
		if question {
			out = append(out, strings.TrimSpace(block))
		}
	}
	return out
}

// fileTopic is a topic of one uploaded file whose extension says its type.
func fileTopic(class, what string, exts ...string) topicType {
	return topicType{
		class:   `Lms\TopicTypes\Models\TopicContent\` + class,
		summary: what + " (" + strings.Join(exts, " ") + ")",
		flags:   []topicFlag{{"file", "the file (" + strings.Join(exts, " ") + ")"}},
		prepare: func(v topicValues, _ map[string]any) error {
			if v["file"] == "" {
				return usagef("--file is required")
			}
			return checkFile("file", v["file"], exts...)
		},
		extensions: exts,
	}
}

// checkFile refuses, before any request, a file that is missing or whose
// extension the type does not take.
func checkFile(flag, path string, exts ...string) error {
	if !slices.Contains(exts, strings.ToLower(filepath.Ext(path))) {
		return usagef("--%s: %s is not one of %s", flag, path, strings.Join(exts, " "))
	}
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return usagef("--%s: %s is not a readable file", flag, path)
	}
	return nil
}

func prepareProject(v topicValues, body map[string]any) error {
	if v["instructions"] != "" {
		text, err := textArg("instructions", v["instructions"])
		if err != nil {
			return err
		}
		body["instructions"] = text
	}
	if v["accept"] != "" {
		body["accept"] = v["accept"]
	}
	if v["max-size"] != "" {
		n, err := strconv.ParseInt(v["max-size"], 10, 64)
		if err != nil || n <= 0 {
			return usagef("--max-size: %q is not a positive integer", v["max-size"])
		}
		body["max_size"] = n
	}
	return nil
}

// prepareInteractive passes the interactive flags under the API's names;
// the server checks them against the package's manifest.
func prepareInteractive(v topicValues, body map[string]any) error {
	if (v["file"] == "") == (v["package"] == "") {
		return usagef("create-topic interactive: give exactly one of --file and --package")
	}
	names := map[string]string{"package": "package", "version": "version", "follow-latest": "followLatest",
		"start-step": "startStep", "end-step": "endStep", "completion": "completion", "pass-score": "passScore",
		"display": "display", "height": "height", "accept-network": "acceptNetwork"}
	for flag, field := range names {
		if v[flag] != "" {
			body[field] = v[flag]
		}
	}
	if v["text"] != "" {
		text, err := textArg("text", v["text"])
		if err != nil {
			return err
		}
		body["text"] = text
	}
	if v["file"] != "" {
		return checkFile("file", v["file"], ".zip")
	}
	return nil
}

func prepareLTI(v topicValues, body map[string]any) error {
	tool, err := strconv.ParseInt(v["tool"], 10, 64)
	if err != nil || tool <= 0 {
		return usagef("create-topic lti: --tool must be the id of an external tool")
	}
	body["tool"] = tool
	if v["url"] != "" {
		body["url"] = v["url"]
	}
	if v["custom"] != "" {
		text, err := textArg("custom", v["custom"])
		if err != nil {
			return err
		}
		var custom map[string]string
		if err := json.Unmarshal([]byte(text), &custom); err != nil {
			return usagef("--custom: a JSON object of strings: %v", err)
		}
		body["custom"] = custom
	}
	if v["score-maximum"] != "" {
		n, err := strconv.ParseFloat(v["score-maximum"], 64)
		if err != nil || !(n > 0) || math.IsInf(n, 0) {
			return usagef("--score-maximum: %q is not a number greater than 0", v["score-maximum"])
		}
		body["score_maximum"] = n
	}
	return nil
}

// sendWithFile creates the topic as multipart form data: the body's
// fields and the file.
func sendWithFile(ctx context.Context, c *Caller, body map[string]any, path string) (Result, error) {
	form, ctype, err := multipartForm(body, map[string]string{"file": path})
	if err != nil {
		return Result{}, err
	}
	return c.send(ctx, "POST", "/api/admin/topics", form, ctype)
}

// textArg reads a text argument: @path names a file holding it.
func textArg(flag, s string) (string, error) {
	if !strings.HasPrefix(s, "@") {
		return s, nil
	}
	raw, err := os.ReadFile(s[1:])
	if err != nil {
		return "", usagef("--%s: %v", flag, err)
	}
	return string(raw), nil
}

func checkH5P(v topicValues, _ map[string]any) error {
	if v["package"] == "" {
		return usagef("create-topic h5p: --package is required")
	}
	return checkFile("package", v["package"], ".h5p")
}

// uploadH5P uploads the package to the H5P service; the topic then names
// the new content.
func uploadH5P(ctx context.Context, c *Caller, v topicValues, body map[string]any) (*leftover, error) {
	form, ctype, err := multipartForm(nil, map[string]string{"h5p_file": v["package"]})
	if err != nil {
		return nil, err
	}
	res, err := c.send(ctx, "POST", "/h5p/contents/upload", form, ctype)
	if err != nil {
		return nil, err
	}
	var up struct {
		ContentID string `json:"contentId"`
	}
	if err := json.Unmarshal(res.Data, &up); err != nil || up.ContentID == "" {
		return nil, fmt.Errorf("the H5P service answered no content id")
	}
	body["content_id"] = up.ContentID
	id := up.ContentID
	return &leftover{key: "created", value: map[string]any{"h5pContentId": id},
		note: fmt.Sprintf("The H5P content %s was uploaded but no topic was created: retry with "+
			"`lmsctl post-admin-topics --body '{\"lesson\":%v,\"title\":...,\"topicable\":...,\"content_id\":\"%s\"}'`, "+
			"or remove it with `lmsctl delete-h5p-contents-id --id %s`.", id, body["lesson"], id, id)}, nil
}

// preparePackage checks --package (a file of one of exts, or an
// uploaded package's id) and the part to play, named by the flag choice
// and sent as the same field (a SCORM package's sco, a cmi5 AU).
func preparePackage(choice string, exts ...string) func(v topicValues, body map[string]any) error {
	return func(v topicValues, body map[string]any) error {
		if v["package"] == "" {
			return usagef("--package is required")
		}
		if s := v[choice]; s != "" {
			id, err := strconv.ParseInt(s, 10, 64)
			if err != nil || id < 1 {
				return usagef("--%s: %q is not an id", choice, s)
			}
			body[choice] = id
		}
		if id, err := strconv.ParseInt(v["package"], 10, 64); err == nil && id > 0 {
			body["package"] = id
			return nil
		}
		return checkFile("package", v["package"], exts...)
	}
}

// uploadPackage uploads a package file to path (an id given to --package
// is used as it is); the topic then names it by id, so when creating the
// topic fails (exit code 2 without a choice) the retry can reuse it.
// choice is the flag of the part to play; remove is the command and flag
// that delete an unused package ("" when the API has none).
func uploadPackage(path, choice, remove string) func(ctx context.Context, c *Caller, v topicValues, body map[string]any) (*leftover, error) {
	return func(ctx context.Context, c *Caller, v topicValues, body map[string]any) (*leftover, error) {
		if _, ok := body["package"]; ok {
			return nil, nil
		}
		form, ctype, err := multipartForm(nil, map[string]string{"package": v["package"]})
		if err != nil {
			return nil, err
		}
		res, err := c.send(ctx, "POST", path, form, ctype)
		if err != nil {
			return nil, err
		}
		var up struct {
			ID int64 `json:"id"`
		}
		if err := json.Unmarshal(res.Data, &up); err != nil || up.ID == 0 {
			return nil, fmt.Errorf("%s answered no package id", path)
		}
		body["package"] = up.ID
		note := fmt.Sprintf("The package %d was uploaded but no topic was created: retry with --package %d "+
			"(and --%s when it has several) to reuse it", up.ID, up.ID, choice)
		if remove != "" {
			note += fmt.Sprintf(", or remove it with `lmsctl %s %d`.", remove, up.ID)
		} else {
			note += "; the API has no operation that removes an unused package of this kind."
		}
		return &leftover{key: "package", value: up.ID, note: note}, nil
	}
}

func (a *app) createTopic(args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		names := make([]string, 0, len(topicTypes))
		for n, t := range topicTypes {
			names = append(names, "  "+n+": "+t.summary)
		}
		sort.Strings(names)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			_, err := fmt.Fprint(a.Stdout, "lmsctl create-topic TYPE --lesson ID --title TITLE [flags]; types:\n"+strings.Join(names, "\n")+"\n")
			if err == nil {
				err = flag.ErrHelp
			}
			return err
		}
		f := usagef("create-topic: name a type (lmsctl create-topic --help lists them)")
		f.Details = map[string]any{"types": slices.Sorted(maps.Keys(topicTypes))}
		return f
	}
	name := args[0]
	tt, ok := topicTypes[name]
	if !ok {
		return usagef("create-topic: unknown type %q", name)
	}
	fs := a.flags("create-topic " + name)
	lesson := fs.Int64("lesson", 0, "id of the lesson (required)")
	title := fs.String("title", "", "topic title (required)")
	summary := fs.String("summary", "", "short summary")
	duration := fs.String("duration", "", "estimated duration, such as 10 min")
	order := &optValue{}
	fs.Var(order, "order", "position in the lesson (default: last)")
	var flags []*optValue
	for _, f := range []string{"preview", "active", "can-skip"} {
		v := &optValue{boolean: true}
		fs.Var(v, f, f+" (true or false)")
		flags = append(flags, v)
	}
	var await *bool
	if name == "video" {
		await = fs.Bool("await", false, "wait until the video is transcoded (ready or failed), then print the topic")
	}
	values := map[string]*string{}
	for _, f := range tt.flags {
		values[f.name] = fs.String(f.name, "", f.usage)
	}
	if err := a.parse(fs, args[1:]); err != nil {
		return err
	}
	if *lesson <= 0 || strings.TrimSpace(*title) == "" {
		return usagef("create-topic %s: --lesson and --title are required", name)
	}
	body := map[string]any{"lesson": *lesson, "title": *title, "topicable": tt.class}
	if *summary != "" {
		body["summary"] = *summary
	}
	if *duration != "" {
		body["duration"] = *duration
	}
	if order.set {
		n, err := strconv.ParseInt(order.value, 10, 64)
		if err != nil {
			return usagef("--order: %q is not an integer", order.value)
		}
		body["order"] = n
	}
	for i, key := range []string{"preview", "active", "can_skip"} {
		if flags[i].set {
			b, err := strconv.ParseBool(flags[i].value)
			if err != nil {
				return usagef("--%s: %q is not true or false", flagName(key), flags[i].value)
			}
			body[key] = b
		}
	}
	v := topicValues{}
	for k, p := range values {
		v[k] = *p
	}
	if err := tt.prepare(v, body); err != nil {
		return err
	}
	c, _, _, err := a.caller()
	if err != nil {
		return err
	}
	res, err := sendTopic(a.ctx, c, tt, v, body)
	if err != nil {
		return err
	}
	if await != nil && *await {
		data, err := a.awaitVideo(c, res.Data)
		if err != nil {
			return err
		}
		return a.out().print(data)
	}
	return a.out().print(res.Data)
}

// sendTopic creates a topic of type tt whose flags prepare has checked
// and turned into body: what the type uploads goes first, then the topic
// (as form data when it carries a local file). When creating the topic
// fails after an upload, the failure says what exists and how to finish
// or remove it. create-topic and the MCP tool add-topic both end here.
func sendTopic(ctx context.Context, c *Caller, tt topicType, v topicValues, body map[string]any) (Result, error) {
	var left *leftover
	var err error
	if tt.upload != nil {
		if left, err = tt.upload(ctx, c, v, body); err != nil {
			return Result{}, err
		}
	}
	var res Result
	if file := v["file"]; file != "" && tt.extensions != nil {
		res, err = sendWithFile(ctx, c, body, file)
	} else {
		res, err = c.Call(ctx, mustOp("post-admin-topics"), Input{Body: body})
	}
	if err != nil {
		f := failureOf(err)
		if left != nil {
			f.setDetail(left.key, left.value)
			f.addNote(left.note)
		}
		return Result{}, f
	}
	return res, nil
}
