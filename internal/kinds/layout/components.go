package layout

import (
	"reflect"
	"sync"

	"github.com/danielgtaylor/huma/v2"
)

// The props of each approved component. The Go types are the one source of
// the schemas: the same schemas validate documents, are served by GET
// /api/admin/layout/components and are published in the OpenAPI
// description. All text is plain text, escaped by whoever renders it, so a
// document can never carry markup or scripts.

// CalloutProps is a highlighted note.
type CalloutProps struct {
	Tone  string `json:"tone" enum:"info,tip,warning,success" doc:"Colour and icon of the callout."`
	Title string `json:"title,omitempty" maxLength:"200"`
	Body  string `json:"body" minLength:"1" maxLength:"20000" doc:"Plain text; blank lines separate paragraphs."`
}

// StepsProps is an ordered procedure.
type StepsProps struct {
	Title string      `json:"title,omitempty" maxLength:"200"`
	Steps []StepsItem `json:"steps" minItems:"1" maxItems:"50"`
}

// StepsItem is one step of Steps.
type StepsItem struct {
	Title string `json:"title" minLength:"1" maxLength:"200"`
	Body  string `json:"body,omitempty" maxLength:"5000"`
}

// ComparisonTableProps is a table comparing options; every row has one
// cell per column.
type ComparisonTableProps struct {
	Caption string          `json:"caption" minLength:"1" maxLength:"300" doc:"Names the table for screen readers."`
	Columns []string        `json:"columns" minItems:"1" maxItems:"8" doc:"Column headings, each 1 to 200 characters."`
	Rows    []ComparisonRow `json:"rows" minItems:"1" maxItems:"50"`
}

// ComparisonRow is one row of a ComparisonTable.
type ComparisonRow struct {
	Label string   `json:"label" minLength:"1" maxLength:"200"`
	Cells []string `json:"cells" minItems:"1" maxItems:"8" doc:"One per column, each at most 1000 characters."`
}

// H5PFrameProps embeds H5P content of the tenant.
type H5PFrameProps struct {
	ContentID string `json:"content_id" pattern:"^[1-9][0-9]{0,18}$" doc:"Id of H5P content of this tenant."`
	Title     string `json:"title" minLength:"1" maxLength:"200" doc:"Title of the frame, read by screen readers."`
}

// LiaScriptLessonProps plays a LiaScript course of the tenant.
type LiaScriptLessonProps struct {
	CourseID int64  `json:"course_id" minimum:"1" doc:"Id of a LiaScript course of this tenant: from POST /api/admin/liascript, or the course of a LiaScript topic."`
	Title    string `json:"title" minLength:"1" maxLength:"200" doc:"Title of the frame, read by screen readers."`
}

// TimelineProps is a sequence of dated events.
type TimelineProps struct {
	Title  string          `json:"title,omitempty" maxLength:"200"`
	Events []TimelineEvent `json:"events" minItems:"1" maxItems:"100"`
}

// TimelineEvent is one event of a Timeline.
type TimelineEvent struct {
	Date  string `json:"date" minLength:"1" maxLength:"50" doc:"Free text: a year, a date, an era."`
	Title string `json:"title" minLength:"1" maxLength:"200"`
	Body  string `json:"body,omitempty" maxLength:"2000"`
}

// FlipCardsProps is a set of cards the learner turns over.
type FlipCardsProps struct {
	Cards []FlipCard `json:"cards" minItems:"1" maxItems:"50"`
}

// FlipCard is one card of FlipCards.
type FlipCard struct {
	Front string `json:"front" minLength:"1" maxLength:"500"`
	Back  string `json:"back" minLength:"1" maxLength:"2000"`
}

// CodeBlockProps is a piece of source code.
type CodeBlockProps struct {
	Language string `json:"language,omitempty" pattern:"^[A-Za-z0-9_+#-]{1,32}$"`
	Code     string `json:"code" minLength:"1" maxLength:"20000"`
	Caption  string `json:"caption,omitempty" maxLength:"300"`
}

// PracticeActivityProps holds questions the learner checks one by one
// through POST /api/topics/{topic}/practice/check. Correct flags, hints
// and solutions never reach the learner's page before a check.
type PracticeActivityProps struct {
	Title        string             `json:"title,omitempty" maxLength:"200"`
	Instructions string             `json:"instructions,omitempty" maxLength:"5000"`
	Questions    []PracticeQuestion `json:"questions" minItems:"1" maxItems:"50"`
}

// PracticeQuestion is a question in the quiz input model: a choice
// question {prompt, options}, or one GIFT question {gift} of a type the
// browser can check (not essay, not description).
type PracticeQuestion struct {
	Prompt   string           `json:"prompt,omitempty" maxLength:"2000"`
	Options  []PracticeOption `json:"options,omitempty" maxItems:"10"`
	GIFT     string           `json:"gift,omitempty" maxLength:"10000"`
	Score    *float64         `json:"score,omitempty" minimum:"0" maximum:"1000"`
	Hints    []string         `json:"hints,omitempty" maxItems:"5" doc:"Shown after a wrong check, each at most 1000 characters."`
	Solution string           `json:"solution,omitempty" maxLength:"5000" doc:"Worked solution, shown after a check."`
}

// PracticeOption is one option of a choice question.
type PracticeOption struct {
	Text    string `json:"text" minLength:"1" maxLength:"1000"`
	Correct bool   `json:"correct,omitempty"`
}

// Component is one approved component.
type Component struct {
	Name        string
	Description string
	props       reflect.Type
	// Example is the props of a valid node, for authors and agents to
	// start from (the content an H5PFrame or a LiaScriptLesson names must
	// exist in the tenant).
	Example any
}

// Components are the approved components, in the spec's order.
var Components = []Component{
	{"Callout", "A highlighted note: information, a tip, a warning or a success.", reflect.TypeFor[CalloutProps](),
		CalloutProps{Tone: "tip", Title: "Before you start", Body: "Read the whole page once, then try the questions."}},
	{"Steps", "An ordered procedure.", reflect.TypeFor[StepsProps](),
		StepsProps{Title: "How to", Steps: []StepsItem{{Title: "First step", Body: "What to do first."}, {Title: "Second step"}}}},
	{"ComparisonTable", "A table comparing options, one cell per column in every row.", reflect.TypeFor[ComparisonTableProps](),
		ComparisonTableProps{Caption: "Two options compared", Columns: []string{"Option A", "Option B"},
			Rows: []ComparisonRow{{Label: "Cost", Cells: []string{"Low", "High"}}, {Label: "Speed", Cells: []string{"Slow", "Fast"}}}}},
	{"H5PFrame", "Embedded H5P content of this tenant.", reflect.TypeFor[H5PFrameProps](),
		H5PFrameProps{ContentID: "1", Title: "An interactive exercise"}},
	{"LiaScriptLesson", "A LiaScript course of this tenant, played by LiaScript's runtime in its sandboxed player; it records no LiaScript progress.", reflect.TypeFor[LiaScriptLessonProps](),
		LiaScriptLessonProps{CourseID: 1, Title: "A LiaScript lesson"}},
	{"Timeline", "Dated events in order.", reflect.TypeFor[TimelineProps](),
		TimelineProps{Title: "Milestones", Events: []TimelineEvent{{Date: "1969", Title: "First event"}, {Date: "1989", Title: "Second event", Body: "What happened."}}}},
	{"FlipCards", "Cards with a question or term on the front and the answer on the back.", reflect.TypeFor[FlipCardsProps](),
		FlipCardsProps{Cards: []FlipCard{{Front: "A term", Back: "Its meaning"}, {Front: "Another term", Back: "Its meaning"}}}},
	{"CodeBlock", "Source code, shown as it is.", reflect.TypeFor[CodeBlockProps](),
		CodeBlockProps{Language: "python", Code: "print(\"Hello\")", Caption: "A first program"}},
	{"PracticeActivity", "Questions the learner checks one at a time; the only component for practice.", reflect.TypeFor[PracticeActivityProps](),
		PracticeActivityProps{Title: "Check yourself", Questions: []PracticeQuestion{
			{Prompt: "Which of these is a prime number?", Options: []PracticeOption{{Text: "4"}, {Text: "7", Correct: true}},
				Hints: []string{"A prime has exactly two divisors."}, Solution: "7 is divisible only by 1 and 7."},
			{GIFT: "The sun rises in the east. {T}"}}}},
}

func componentNamed(name string) (Component, bool) {
	for _, c := range Components {
		if c.Name == name {
			return c, true
		}
	}
	return Component{}, false
}

// SchemaName is the name of a component's props schema in the OpenAPI
// description and in the schemas GET /api/admin/layout/components serves.
func (c Component) SchemaName() string { return huma.DefaultSchemaNamer(c.props, "") }

// schemas is the registry the documents are validated against; Publish
// adds the same types to the API's registry.
var schemas = sync.OnceValue(func() huma.Registry {
	r := huma.NewMapRegistry("#/components/schemas/", huma.DefaultSchemaNamer)
	for _, c := range Components {
		r.Schema(c.props, true, "")
	}
	return r
})

// Publish registers the props schemas in an API's registry, so that the
// OpenAPI description carries them.
func Publish(r huma.Registry) {
	for _, c := range Components {
		r.Schema(c.props, true, "")
	}
}

// Fields documents document and fallback in the topic create and update
// bodies, each node's props referring to its component's schema.
func (*Kind) Fields() map[string]*huma.Schema {
	names := make([]any, len(Components))
	props := make([]*huma.Schema, len(Components))
	for i, c := range Components {
		names[i] = c.Name
		props[i] = &huma.Schema{Ref: "#/components/schemas/" + c.SchemaName()}
	}
	node := &huma.Schema{Type: huma.TypeObject, Required: []string{"component", "props"}, AdditionalProperties: false,
		Properties: map[string]*huma.Schema{
			"component": {Type: huma.TypeString, Enum: names},
			"id":        {Type: huma.TypeString, Pattern: nodeID.String(), Description: "Unique in the document."},
			"props":     {AnyOf: props, Description: "The props schema of the component (CalloutProps for Callout, ...)."},
		}}
	return map[string]*huma.Schema{
		"document": {Type: huma.TypeArray, MinItems: ptr(1), MaxItems: ptr(MaxNodes), Items: node,
			Description: "Layout: the nodes of approved components; GET /api/admin/layout/components lists them with the rules beyond the schemas."},
		"fallback": {Type: huma.TypeString, MinLength: ptr(1), MaxLength: ptr(MaxFallback),
			Description: "Layout: Markdown shown when the document is not rendered; it must leave out hints and worked solutions."},
	}
}

func ptr(n int) *int { return &n }
