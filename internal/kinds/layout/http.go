package layout

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/topics"
)

// ComponentView describes one approved component.
type ComponentView struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Props is a reference into Catalogue.Schemas.
	Props string `json:"props" doc:"Reference of the props schema, e.g. #/components/schemas/CalloutProps; the same schema is in the OpenAPI description."`
	// Example is Component.Example.
	Example any `json:"example" doc:"Props of a valid node of this component, to start from; the content an H5PFrame or a LiaScriptLesson names must exist in the tenant."`
}

// Catalogue is the answer of GET /api/admin/layout/components.
type Catalogue struct {
	Components []ComponentView `json:"components"`
	// Schemas are the props schemas with the schemas they refer to.
	Schemas json.RawMessage `json:"schemas" doc:"JSON schemas by name, as in the OpenAPI description's components.schemas."`
	Rules   []string        `json:"rules"`
}

// Rules are the rules beyond the schemas, for authors and agents.
var Rules = []string{
	"document is a list of 1 to 200 nodes {component, props, id?}; component is one of the approved components; props follow its schema; id, when given, is 1 to 64 letters, digits, _ or - and unique in the document.",
	"fallback is required Markdown shown by clients that do not render layouts and when the document cannot be rendered; it must leave out the hints, worked solutions and GIFT feedback of every PracticeActivity (texts of 8 characters or more are looked for, ignoring case and spacing).",
	"Practice must use PracticeActivity: choice questions {prompt, options:[{text, correct}], score?, hints?, solution?} with 2 to 10 options, at least one correct; or GIFT questions {gift, score?, hints?, solution?}, exactly one question per entry, of a type the browser checks (multiple choice, true/false, short answer, numerical, matching; not essay or description). Learners see GIFT questions as the quiz shows them (no weights, no feedback); a check answers {node, question, answer} with answer shaped as a quiz answer (choices, truth, text or matches).",
	"Every row of a ComparisonTable has one cell per column.",
	"An H5PFrame names H5P content of this tenant by content_id.",
	"A LiaScriptLesson names a LiaScript course of this tenant by course_id; learners get its player's play_url with the props. It records no LiaScript progress: the layout completes as layouts do.",
	"Text props are plain text; no HTML or Markdown is interpreted.",
	"A layout topic completes for a learner on the first checked answer (POST /api/topics/{topic}/practice/check) when it holds a PracticeActivity, otherwise when the learner has viewed it.",
	"Invalid documents answer 422; errors are keyed by node and prop path (document[2].props.steps[0].title) and every message names the node's index and id.",
}

func catalogue() (Catalogue, error) {
	raw, err := json.Marshal(schemas().Map())
	if err != nil {
		return Catalogue{}, err
	}
	out := Catalogue{Schemas: raw, Rules: Rules}
	for _, c := range Components {
		out.Components = append(out.Components, ComponentView{Name: c.Name, Description: c.Description,
			Props: "#/components/schemas/" + c.SchemaName(), Example: c.Example})
	}
	return out, nil
}

type checkInput struct {
	Topic int64 `path:"topic" doc:"Topic id."`
	Body  CheckInput
}

// Routes registers the component catalogue and the practice check, and
// publishes the props schemas in the API's description.
func Routes(api huma.API, pr *Practice) {
	Publish(api.OpenAPI().Components.Schemas)
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/admin/layout/components", Tags: []string{"topics"}, Who: httpx.User,
		Scope:       "courses:read",
		Summary:     "List the approved layout components with their props schemas and the layout rules",
		Description: "The props schemas are also in this description's components.schemas (CalloutProps, StepsProps, ...). Readable by those who may read or author topics."},
		func(ctx context.Context, _ *struct{}) (*httpx.Response[Catalogue], error) {
			if !topics.CanReadKinds(httpx.PrincipalFrom(ctx)) {
				return nil, apperr.New(apperr.Forbidden, "This action is unauthorized.")
			}
			c, err := catalogue()
			if err != nil {
				return nil, err
			}
			return httpx.OK(c)
		})
	// A check completes the topic for the caller: the learner's progress.
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/topics/{topic}/practice/check", Tags: []string{"topics"}, Who: httpx.User,
		Scope:   "progress:write",
		MaxBody: 4 << 10, Errors: []int{http.StatusUnprocessableEntity},
		Summary:     "Check an answer to a question of a layout topic's PracticeActivity",
		Description: "Answers whether the answer is right (selected for choice questions, answer for GIFT questions, graded with the GIFT weights), with the score earned, the correct options or right answer, the feedback, the solution and (after a wrong answer) the hints, which the learner's page does not hold. The first check completes the topic for the caller."},
		func(ctx context.Context, in *checkInput) (*httpx.Response[CheckResult], error) {
			res, err := pr.Check(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.Topic, in.Body)
			if err != nil {
				return nil, err
			}
			return httpx.OK(res)
		})
}
