package lmsctl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lms-platform/lms/internal/ops"
)

// task is an MCP tool that does one step of an agent's work over one or
// more operations, and answers with what to do next. A task over one
// existing operation is one entry of tasks: its input schema, and a run
// that decodes the arguments, calls the operation through t.call and
// returns the answer with its nextSteps.
type task struct {
	name, title string
	kind        ops.Kind
	toolsets    []string
	// description says what the task does; example is a call's
	// arguments, shown to the agent.
	description, example string
	input                map[string]any
	run                  func(ctx context.Context, t *tools, raw json.RawMessage) (map[string]any, error)
	// preview shows what a destructive task would destroy.
	preview func(ctx context.Context, t *tools, raw json.RawMessage) (any, error)
}

// tasks are the task tools, in the order tools/list shows them.
var tasks = []task{
	{
		name: "create-course", title: "Create a course with its lessons", kind: ops.Write,
		toolsets: []string{"authoring"},
		description: "Creates a course (a draft unless status is published) and its lessons, in order. " +
			"Answers the course and the lessons' ids.",
		example: `{"title": "Intro to statistics", "summary": "Four weeks", "lessons": [{"title": "Averages"}, {"title": "Spread"}]}`,
		input: object(map[string]any{
			"title":   text("The course's title.", 255),
			"summary": text("A short summary learners see in the catalogue.", 5000),
			"status":  enum("draft (default) or published.", "draft", "published"),
			"lessons": list("The lessons, in order.", 100, object(map[string]any{
				"title":   text("The lesson's title.", 255),
				"summary": text("A short summary.", 5000),
			}, "title")),
		}, "title"),
		run: createCourse,
	},
	{
		name: "add-topic", title: "Add a topic of a kind to a lesson", kind: ops.Write,
		toolsets: []string{"authoring"},
		description: "Adds a topic to a lesson. kind says which fields apply: richtext (markdown or html), quiz " +
			"(questions {prompt, options:[{text, correct}]} or gift), pdf/image/audio/video (file), h5p and scorm " +
			"and cmi5 (package: a file, or a SCORM/cmi5 package id), interactive, liascript, layout (document, " +
			"fallback), oembed (url), project, lti (tool). Files are absolute paths inside the directories lmsctl " +
			"mcp may upload from. A package of several SCOs or AUs answers needsChoice with the choices.",
		example: `{"lesson": 12, "title": "Welcome", "kind": "richtext", "markdown": "# Welcome\nRead this first."}`,
		input:   addTopicInput(),
		run:     addTopic,
	},
	{
		name: "find-users", title: "Find users by name or e-mail", kind: ops.Read,
		toolsets: []string{"authoring", "admin"},
		description: "Finds users whose e-mail or name contains query, optionally of one role. " +
			"Answers their ids for assign-course.",
		example: `{"query": "ada", "role": "student"}`,
		input: object(map[string]any{
			"query": text("Part of the e-mail, first, last or full name.", 255),
			"role":  text("Only users of this role (student, tutor, admin).", 64),
			"limit": integer("At most this many users (1-100, default 20).", 1, 100),
		}),
		run: findUsers,
	},
	{
		name: "assign-course", title: "Assign users or groups to a course", kind: ops.Write,
		toolsets: []string{"authoring", "admin"},
		description: "Gives users and groups access to a course, optionally until endDate. " +
			"Learners see it once the course is published.",
		example: `{"course": 7, "users": [41, 42], "groups": [3]}`,
		input: object(map[string]any{
			"course":  integer("The course's id.", 1, 0),
			"users":   list("User ids (find-users finds them).", 1000, integer("", 1, 0)),
			"groups":  list("Group ids (get-admin-user-groups lists them).", 1000, integer("", 1, 0)),
			"endDate": map[string]any{"type": "string", "format": "date-time", "description": "When the access ends (RFC 3339); absent: never."},
		}, "course"),
		run: assignCourse,
	},
	{
		name: "class-progress", title: "Read a course's class progress", kind: ops.Read,
		toolsets: []string{"reporting"},
		description: "The learners of a course with status (planned, started, finished), percent, score, time and " +
			"last activity, and the class's totals. Needs the reports:read scope.",
		example: `{"course": 7, "status": "started"}`,
		input: object(map[string]any{
			"course": integer("The course's id.", 1, 0),
			"status": text("Only learners in this state: planned, started or finished.", 16),
			"search": text("Part of a learner's name or e-mail.", 255),
			"limit":  integer("At most this many learners (1-100, default 50).", 1, 100),
		}, "course"),
		run: classProgress,
	},
	{
		name: "publish-course", title: "Publish a course", kind: ops.Write,
		toolsets:    []string{"authoring"},
		description: "Publishes a course: its assigned learners can start it.",
		example:     `{"course": 7}`,
		input:       object(map[string]any{"course": integer("The course's id.", 1, 0)}, "course"),
		run:         publishCourse,
	},
	{
		name: "delete-course", title: "Delete a course", kind: ops.Destructive,
		toolsets:    []string{"authoring"},
		description: "Deletes a course with its lessons, topics, assignments and learners' progress.",
		example:     `{"course": 7}`,
		input:       object(map[string]any{"course": integer("The course's id.", 1, 0)}, "course"),
		preview: func(ctx context.Context, t *tools, raw json.RawMessage) (any, error) {
			var in struct{ Course int64 }
			if err := decodeArgs("delete-course", raw, &in); err != nil {
				return nil, err
			}
			res, err := t.call(ctx, "get-admin-courses-id", params("id", in.Course), nil)
			if err != nil {
				return nil, err
			}
			return map[string]any{"course": res.Data}, nil
		},
		run: func(ctx context.Context, t *tools, raw json.RawMessage) (map[string]any, error) {
			var in struct{ Course int64 }
			if err := decodeArgs("delete-course", raw, &in); err != nil {
				return nil, err
			}
			if _, err := t.call(ctx, "delete-admin-courses-id", params("id", in.Course), nil); err != nil {
				return nil, err
			}
			return map[string]any{"deleted": map[string]any{"course": in.Course},
				"nextSteps": []string{"The course is gone; get-admin-courses lists those left."}}, nil
		},
	},
}

func findTask(name string) (task, bool) {
	i := slices.IndexFunc(tasks, func(tk task) bool { return tk.name == name })
	if i < 0 {
		return task{}, false
	}
	return tasks[i], true
}

func (t *tools) taskTool(tk task) *mcp.Tool {
	in := maps.Clone(tk.input)
	desc := tk.description + " Example: " + tk.example + ". Answers what was done and nextSteps."
	if tk.kind == ops.Destructive {
		props := maps.Clone(in["properties"].(map[string]any))
		props["confirm"] = text("The confirmationToken of a first call with the same arguments.", 512)
		in["properties"] = props
		desc += fmt.Sprintf(" Destructive: a first call changes nothing and answers wouldDestroy and a confirmationToken, "+
			"valid %d minutes for exactly these arguments; call again with them and confirm set to it.", int(ConfirmFor/time.Minute))
	}
	if tk.name == "add-topic" && len(t.dirs) > 0 {
		desc += " Upload directories: " + strings.Join(t.dirs, ", ") + "."
	}
	destructive := tk.kind == ops.Destructive
	return &mcp.Tool{
		Name:        tk.name,
		Title:       tk.title,
		Description: desc + " " + untrusted,
		InputSchema: portable(in, ""),
		Annotations: &mcp.ToolAnnotations{
			Title:           tk.title,
			ReadOnlyHint:    tk.kind == ops.Read,
			DestructiveHint: &destructive,
			IdempotentHint:  tk.kind != ops.Write,
		},
	}
}

func (t *tools) taskHandler(tk task) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (result *mcp.CallToolResult, _ error) {
		defer func() {
			if v := recover(); v != nil {
				result = failed(panicFailure(v))
			}
		}()
		args := map[string]any{}
		raw := req.Params.Arguments
		if len(bytes.TrimSpace(raw)) > 0 && string(raw) != "null" {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			if err := dec.Decode(&args); err != nil {
				return failed(usagef("%s: the arguments must be a JSON object", tk.name)), nil
			}
		}
		if tk.kind == ops.Destructive {
			confirm, given := args["confirm"].(string)
			delete(args, "confirm")
			canonical, _ := json.Marshal(args) // map keys are sorted
			if !given {
				target, err := tk.preview(ctx, t, canonical)
				if err != nil {
					return failed(err), nil
				}
				return t.confirmation(tk.name, string(canonical), map[string]any{"tool": tk.name,
					"arguments": json.RawMessage(canonical), "current": target}), nil
			}
			if err := t.conf.redeem(tk.name, string(canonical), confirm); err != nil {
				return failed(err), nil
			}
			raw = canonical
		}
		out, err := tk.run(ctx, t, raw)
		if err != nil {
			return failed(err), nil
		}
		return answer(out, false), nil
	}
}

// call sends the registry operation name; a task's errors read as the
// operation's.
func (t *tools) call(ctx context.Context, name string, p map[string]string, body map[string]any) (Result, error) {
	return t.caller.Call(ctx, mustOp(name), Input{Params: p, Body: body})
}

func params(kv ...any) map[string]string {
	out := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = fmt.Sprint(kv[i+1])
	}
	return out
}

// decodeArgs reads a task's arguments into in, refusing unknown ones.
func decodeArgs(name string, raw json.RawMessage, in any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(in); err != nil {
		return usagef("%s: %v", name, strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

func createCourse(ctx context.Context, t *tools, raw json.RawMessage) (map[string]any, error) {
	var in struct {
		Title, Summary, Status string
		Lessons                []struct{ Title, Summary string }
	}
	if err := decodeArgs("create-course", raw, &in); err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Title) == "" {
		return nil, usagef("create-course: title is required")
	}
	body := map[string]any{"title": in.Title}
	if in.Summary != "" {
		body["summary"] = in.Summary
	}
	if in.Status != "" {
		body["status"] = in.Status
	}
	res, err := t.call(ctx, "post-admin-courses", nil, body)
	if err != nil {
		return nil, err
	}
	var course struct {
		ID     int64  `json:"id"`
		Title  string `json:"title"`
		Status string `json:"status"`
	}
	_ = json.Unmarshal(res.Data, &course)
	type made struct {
		ID    int64  `json:"id"`
		Title string `json:"title"`
	}
	lessons := []made{}
	for i, l := range in.Lessons {
		body := map[string]any{"course_id": course.ID, "title": l.Title}
		if l.Summary != "" {
			body["summary"] = l.Summary
		}
		res, err := t.call(ctx, "post-admin-lessons", nil, body)
		if err != nil {
			// The course exists: say what was made so the agent can finish
			// it or start again.
			f := failureOf(err)
			f.setDetail("course", course.ID)
			f.setDetail("lessons", lessons)
			f.addNote(fmt.Sprintf("The course %d and its first %d lessons were created, lesson %d (%q) was not: "+
				"delete the course with delete-course and call create-course again.", course.ID, i, i+1, l.Title))
			return nil, f
		}
		var m made
		_ = json.Unmarshal(res.Data, &m)
		lessons = append(lessons, m)
	}
	next := []string{}
	if len(lessons) > 0 {
		next = append(next, fmt.Sprintf("Fill the lessons with add-topic (lesson %d first).", lessons[0].ID))
	} else {
		next = append(next, "The course has no lesson: create-course makes lessons with the course; post-admin-lessons adds one later.")
	}
	next = append(next, fmt.Sprintf("Give learners access with assign-course (course %d).", course.ID))
	if course.Status != "published" {
		next = append(next, fmt.Sprintf("The course is a %s: publish it with publish-course when it is ready.", course.Status))
	}
	return map[string]any{"course": course, "lessons": lessons, "nextSteps": next}, nil
}

func findUsers(ctx context.Context, t *tools, raw json.RawMessage) (map[string]any, error) {
	var in struct {
		Query, Role string
		Limit       int
	}
	if err := decodeArgs("find-users", raw, &in); err != nil {
		return nil, err
	}
	p := params("per_page", max(min(in.Limit, 100), 0))
	if in.Limit == 0 {
		p["per_page"] = "20"
	}
	if in.Query != "" {
		p["search"] = in.Query
	}
	if in.Role != "" {
		p["role"] = in.Role
	}
	res, err := t.call(ctx, "get-admin-users", p, nil)
	if err != nil {
		return nil, err
	}
	var meta struct {
		Total int `json:"total"`
	}
	_ = json.Unmarshal(res.Meta, &meta)
	next := []string{"Give them a course with assign-course (users: their ids)."}
	if meta.Total > 0 && string(res.Data) != "[]" {
		var page []any
		if json.Unmarshal(res.Data, &page) == nil && len(page) < meta.Total {
			next = append(next, fmt.Sprintf("%d users match, %d shown: narrow query or raise limit.", meta.Total, len(page)))
		}
	} else {
		next = []string{"No user matches: try part of the name or e-mail."}
	}
	return map[string]any{"users": res.Data, "total": meta.Total, "nextSteps": next}, nil
}

func assignCourse(ctx context.Context, t *tools, raw json.RawMessage) (map[string]any, error) {
	var in struct {
		Course        int64
		Users, Groups []int64
		EndDate       string
	}
	if err := decodeArgs("assign-course", raw, &in); err != nil {
		return nil, err
	}
	if len(in.Users)+len(in.Groups) == 0 {
		return nil, usagef("assign-course: give users, groups or both")
	}
	entries := func(ids []int64) []any {
		out := []any{}
		for _, id := range ids {
			e := map[string]any{"id": id}
			if in.EndDate != "" {
				e["end_date"] = in.EndDate
			}
			out = append(out, e)
		}
		return out
	}
	res, err := t.call(ctx, "post-admin-courses-id-access", params("id", in.Course), map[string]any{
		"users": entries(in.Users), "groups": entries(in.Groups)})
	if err != nil {
		return nil, err
	}
	return map[string]any{"course": in.Course, "assigned": map[string]int{"users": len(in.Users), "groups": len(in.Groups)},
		"access": res.Data, "nextSteps": []string{
			fmt.Sprintf("Learners see the course once it is published (publish-course, course %d).", in.Course),
			"get-admin-courses-id-access lists everyone with access."}}, nil
}

func publishCourse(ctx context.Context, t *tools, raw json.RawMessage) (map[string]any, error) {
	var in struct{ Course int64 }
	if err := decodeArgs("publish-course", raw, &in); err != nil {
		return nil, err
	}
	res, err := t.call(ctx, "patch-admin-courses-id", params("id", in.Course), map[string]any{"status": "published"})
	if err != nil {
		return nil, err
	}
	var course struct {
		ID     int64  `json:"id"`
		Title  string `json:"title"`
		Status string `json:"status"`
	}
	_ = json.Unmarshal(res.Data, &course)
	return map[string]any{"course": course, "nextSteps": []string{
		fmt.Sprintf("Give learners access with assign-course (course %d) if not done yet.", course.ID)}}, nil
}

func classProgress(ctx context.Context, t *tools, raw json.RawMessage) (map[string]any, error) {
	var in struct {
		Course         int64
		Status, Search string
		Limit          int
	}
	if err := decodeArgs("class-progress", raw, &in); err != nil {
		return nil, err
	}
	p := params("id", in.Course, "per_page", 50)
	if in.Limit > 0 {
		p["per_page"] = fmt.Sprint(min(in.Limit, 100))
	}
	if in.Status != "" {
		p["status"] = in.Status
	}
	if in.Search != "" {
		p["search"] = in.Search
	}
	summary, err := t.call(ctx, "get-admin-courses-id-progress-summary", params("id", in.Course), nil)
	if err != nil {
		return nil, err
	}
	learners, err := t.call(ctx, "get-admin-courses-id-progress", p, nil)
	if err != nil {
		return nil, err
	}
	return map[string]any{"summary": summary.Data, "learners": learners.Data, "meta": learners.Meta, "nextSteps": []string{
		fmt.Sprintf("One learner's topics and tracks: get-admin-courses-id-progress-user-id (id %d, user_id).", in.Course)}}, nil
}

// add-topic takes create-topic's flags as arguments named in camelCase
// (max-attempts: maxAttempts) and runs them through the same prepare and
// sendTopic; only the arguments whose flags take structured values
// (quiz questions, a layout document, LTI custom parameters) or numbers
// are typed here.
var topicFlagSchemas = map[string]map[string]any{
	"questions": list("Quiz questions, each {prompt, options:[{text, correct}], score?} or {gift, score?}.", 200, object(map[string]any{
		"prompt": text("The question.", 10000),
		"options": list("The answers; correct marks the right ones.", 50, object(map[string]any{
			"text":    text("An answer.", 10000),
			"correct": map[string]any{"type": "boolean"},
		}, "text")),
		"gift":  text("One question in Moodle's GIFT format, instead of prompt and options.", 20000),
		"score": map[string]any{"type": "number", "minimum": 0},
	})),
	"document": list("Layout nodes {component, props, id?} of the approved components (get-admin-layout-components).", 500,
		object(map[string]any{
			"component": text("An approved component's name.", 64),
			"props":     map[string]any{"type": "object", "additionalProperties": true},
			"id":        text("The node's id.", 64),
		}, "component")),
	"custom":         {"type": "object", "additionalProperties": map[string]any{"type": "string"}},
	"package":        {"anyOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer", "minimum": 1}}},
	"sco":            {"type": "integer", "minimum": 1},
	"au":             {"type": "integer", "minimum": 1},
	"tool":           {"type": "integer", "minimum": 1},
	"version":        {"type": "integer", "minimum": 1},
	"max-attempts":   {"type": "integer", "minimum": 0},
	"max-size":       {"type": "integer", "minimum": 1},
	"height":         {"type": "integer", "minimum": 240, "maximum": 2000},
	"min-pass-score": {"type": "number", "minimum": 0},
	"pass-score":     {"type": "number", "minimum": 0, "maximum": 100},
	"score-maximum":  {"type": "number", "exclusiveMinimum": 0},
	"follow-latest":  {"type": "boolean"},
	"accept-network": {"type": "boolean"},
}

// localFlags are the flags that name a local file (package: unless it is
// the id of an uploaded package).
var localFlags = []string{"file", "package"}

func camel(flag string) string {
	parts := strings.Split(flag, "-")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}

// addTopicInput is add-topic's schema: the common fields and one
// argument per create-topic flag, described per kind that takes it.
func addTopicInput() map[string]any {
	kinds := slices.Sorted(maps.Keys(topicTypes))
	props := map[string]any{
		"lesson":   integer("The lesson's id (create-course answers it).", 1, 0),
		"title":    text("The topic's title.", 255),
		"kind":     enum("What the topic is; it says which other arguments apply.", kinds...),
		"summary":  text("A short summary.", 5000),
		"duration": text("Estimated duration, such as 10 min.", 64),
	}
	uses := map[string][]string{}
	for _, k := range kinds {
		for _, f := range topicTypes[k].flags {
			uses[f.name] = append(uses[f.name], k+": "+asArguments(f.usage))
		}
	}
	for flag, u := range uses {
		s := map[string]any{"type": "string"}
		if typed, ok := topicFlagSchemas[flag]; ok {
			s = maps.Clone(typed)
		}
		desc := strings.Join(u, "; ")
		if slices.Contains(localFlags, flag) {
			desc += ". A file is the absolute path of a local file inside a directory lmsctl mcp may upload from."
		}
		if d, ok := s["description"].(string); ok {
			desc = d + " " + desc
		}
		s["description"] = desc
		props[camel(flag)] = s
	}
	return object(props, "lesson", "title", "kind")
}

var (
	// flagRef matches the flags create-topic's texts name, which add-topic
	// rewrites as its arguments.
	flagRef = regexp.MustCompile(`--([a-z][a-z-]*)`)
	// atFile is create-topic's "or @file.md": add-topic's text is the text.
	atFile = regexp.MustCompile(`,? or @file\.[a-z]+`)
)

// asArguments rewrites a create-topic text (a flag's usage, a message)
// in add-topic's terms.
func asArguments(s string) string {
	s = atFile.ReplaceAllString(s, "")
	s = strings.ReplaceAll(strings.ReplaceAll(s, "create-topic ", "add-topic kind "), "details.choices", "needsChoice's choices")
	return flagRef.ReplaceAllStringFunc(strings.ReplaceAll(s, "the JSON list", "the list"), func(m string) string { return camel(m[2:]) })
}

func addTopic(ctx context.Context, t *tools, raw json.RawMessage) (map[string]any, error) {
	args := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&args); err != nil {
		return nil, usagef("add-topic: the arguments must be a JSON object")
	}
	kind, _ := args["kind"].(string)
	tt, ok := topicTypes[kind]
	if !ok {
		return nil, usagef("add-topic: kind must be one of %s", strings.Join(slices.Sorted(maps.Keys(topicTypes)), ", "))
	}
	lesson, err := strconv.ParseInt(fmt.Sprint(args["lesson"]), 10, 64)
	title, _ := args["title"].(string)
	if err != nil || lesson <= 0 || strings.TrimSpace(title) == "" {
		return nil, usagef("add-topic: lesson (an id) and title are required")
	}
	body := map[string]any{"lesson": lesson, "title": title, "topicable": tt.class}
	for _, k := range []string{"summary", "duration"} {
		if s, ok := args[k].(string); ok && s != "" {
			body[k] = s
		}
		delete(args, k)
	}
	delete(args, "kind")
	delete(args, "lesson")
	delete(args, "title")
	v := topicValues{}
	for _, f := range tt.flags {
		a, ok := args[camel(f.name)]
		if !ok {
			continue
		}
		delete(args, camel(f.name))
		s, err := t.flagValue(f, a)
		if err != nil {
			return nil, err
		}
		v[f.name] = s
	}
	if len(args) > 0 {
		var takes []string
		for _, f := range tt.flags {
			takes = append(takes, camel(f.name))
		}
		return nil, usagef("add-topic: kind %s takes no %s (it takes lesson, title, kind, summary, duration, %s)",
			kind, strings.Join(slices.Sorted(maps.Keys(args)), ", "), strings.Join(takes, ", "))
	}
	if err := tt.prepare(v, body); err != nil {
		f := failureOf(err)
		f.Message = asArguments(f.Message)
		return nil, f
	}
	res, err := sendTopic(ctx, t.caller, tt, v, body)
	if err != nil {
		f := failureOf(err)
		if f.Code == "CHOICE_REQUIRED" {
			return packageChoice(kind, v, f), nil
		}
		return nil, f
	}
	var topic struct {
		ID    int64  `json:"id"`
		Title string `json:"title"`
		Kind  string `json:"kind"`
	}
	_ = json.Unmarshal(res.Data, &topic)
	next := []string{fmt.Sprintf("Add the next topic with add-topic (lesson %d), or review the course with "+
		"get-admin-courses-course-program.", lesson)}
	if kind == "video" && v["file"] != "" {
		next = append([]string{fmt.Sprintf("The video is transcoded in the background: read get-admin-operations-operation "+
			"with operation video:%d and wait 60 until it is ready or failed.", topic.ID)}, next...)
	}
	return map[string]any{"topic": map[string]any{"id": topic.ID, "title": topic.Title, "kind": topic.Kind, "lesson": lesson},
		"nextSteps": next}, nil
}

// flagValue turns an argument into the text of its create-topic flag.
// A local file must lie inside the directories allowed; so must a text
// given as @path, which create-topic reads as a file.
func (t *tools) flagValue(f topicFlag, a any) (string, error) {
	var s string
	switch x := a.(type) {
	case string:
		s = x
	case json.Number:
		return x.String(), nil
	case bool:
		return strconv.FormatBool(x), nil
	default:
		raw, _ := json.Marshal(x)
		return string(raw), nil
	}
	name := camel(f.name)
	if slices.Contains(localFlags, f.name) && s != "" {
		if id, err := strconv.ParseInt(s, 10, 64); err == nil && id > 0 {
			return s, nil
		}
		if len(t.dirs) == 0 {
			return "", usagef("add-topic: %s: lmsctl mcp was started without a directory to upload from (--upload-from)", name)
		}
		return t.localFile(name, s)
	}
	if strings.HasPrefix(s, "@") && strings.Contains(f.usage, "@file") {
		real, err := t.localFile(name, s[1:])
		if err != nil {
			return "", usagef("add-topic: %s: a text starting with @ names a file, and %v", name, err)
		}
		return "@" + real, nil
	}
	return s, nil
}

// packageChoice is the answer when a package has several SCOs or AUs:
// a question for the agent, with the choices and the call that answers it.
func packageChoice(kind string, v topicValues, f *Failure) map[string]any {
	part, what := "sco", "SCO"
	if kind == "cmi5" {
		part, what = "au", "AU"
	}
	pkg := f.Details["package"]
	if pkg == nil {
		pkg = v["package"]
	}
	return map[string]any{
		"needsChoice": true,
		"question":    fmt.Sprintf("The package has several %ss: which one should the topic play?", what),
		"choices":     f.Details["choices"],
		"package":     pkg,
		"nextSteps": []string{fmt.Sprintf("Pick one of choices (ask the user when the titles do not settle it), then call "+
			"add-topic again with the same arguments but package %v (the uploaded package's id) and %s set to the "+
			"choice's id. Nothing else was created.", pkg, part)},
	}
}

func object(props map[string]any, required ...string) map[string]any {
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func text(desc string, maxLen int) map[string]any {
	return map[string]any{"type": "string", "maxLength": maxLen, "description": desc}
}

func enum(desc string, values ...string) map[string]any {
	return map[string]any{"type": "string", "enum": values, "description": desc}
}

// integer is an integer of at least lo, and at most hi unless hi is 0.
func integer(desc string, lo, hi int) map[string]any {
	s := map[string]any{"type": "integer", "minimum": lo}
	if hi > 0 {
		s["maximum"] = hi
	}
	if desc != "" {
		s["description"] = desc
	}
	return s
}

func list(desc string, maxItems int, items map[string]any) map[string]any {
	return map[string]any{"type": "array", "items": items, "maxItems": maxItems, "description": desc}
}
