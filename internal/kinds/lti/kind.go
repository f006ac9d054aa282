// This file is the lti content kind: a topic that launches an external
// tool registered with the tenant (LTI 1.3, the platform role in
// platform.go), with the resource's target link and custom parameters.

package lti

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/fetch"
)

// Limits of a topic's custom parameters.
const (
	maxCustom      = 50
	maxCustomValue = 1000
)

// customKey is what LTI custom parameter names look like.
var customKey = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`)

// Kind is the lti kind.
type Kind struct{}

func (Kind) Class() string { return Class }
func (Kind) Name() string  { return "lti" }

// Build takes tool (an external tool's id), url (optional target link),
// custom (a JSON object of strings) and score_maximum (of the resource
// link's line item), as fields or as a generic value {tool_id, url,
// custom, score_maximum}. An update that sends another tool starts a new
// link; one that sends no tool changes the fields it sends of the old
// link, and keeps the value when it sends none.
func (Kind) Build(ctx context.Context, env content.Env, old json.RawMessage, in content.Input) (json.RawMessage, error) {
	// Sent: a tool or score_maximum sent empty is refused, not taken for
	// "not sent".
	toolText, hasTool := in.Sent("tool", "tool_id")
	var link Link
	switch {
	case hasTool:
		id, err := strconv.ParseInt(toolText, 10, 64)
		if err != nil || id <= 0 {
			return nil, apperr.Field("tool", "The tool must be the id of an external tool.")
		}
		if _, err := ToolByID(ctx, env.Tenant.DB, id); apperr.Is(err, apperr.NotFound) {
			return nil, apperr.Field("tool", "The external tool does not exist.")
		} else if err != nil {
			return nil, err
		}
		link.ToolID = id
	case old == nil:
		return nil, apperr.Field("tool", "The tool field is required.")
	default:
		if _, ok := in.Sent("url", "custom", "score_maximum"); !ok {
			return old, nil
		}
		if err := json.Unmarshal(old, &link); err != nil {
			return nil, fmt.Errorf("lti: parse value: %w", err)
		}
	}
	if u, ok := in.Sent("url"); ok && u == "" {
		// Sent empty: the link launches the tool's own target URI again.
		link.URL = ""
	} else if ok {
		if _, err := fetch.CheckURL(u); err != nil || len(u) > 1000 {
			return nil, apperr.Field("url", "The url must be an absolute http or https URL.")
		}
		link.URL = u
	}
	if c, ok := in.Sent("custom"); ok && c == "" {
		link.Custom = nil
	} else if ok {
		if err := json.Unmarshal([]byte(c), &link.Custom); err != nil {
			return nil, apperr.Field("custom", "The custom parameters must be an object of strings.")
		}
		if len(link.Custom) > maxCustom {
			return nil, apperr.Field("custom", fmt.Sprintf("At most %d custom parameters.", maxCustom))
		}
		for k, v := range link.Custom {
			if !customKey.MatchString(k) || len(v) > maxCustomValue {
				return nil, apperr.Field("custom", "A custom parameter name is 1 to 100 letters, digits, _ . or -; a value at most 1000 bytes.")
			}
		}
	}
	if m, ok := in.Sent("score_maximum"); ok {
		max, err := strconv.ParseFloat(m, 64)
		if err != nil || max <= 0 || max > 1e9 {
			return nil, apperr.Field("score_maximum", "The score_maximum must be a number greater than 0.")
		}
		link.ScoreMaximum = max
	}
	return json.Marshal(link)
}

// Copy keeps the value: it holds no files.
func (Kind) Copy(_ context.Context, _ content.Env, value json.RawMessage) (json.RawMessage, error) {
	return value, nil
}

func (Kind) Remove(context.Context, content.Env, json.RawMessage) error { return nil }

// View shows authors the whole link.
func (Kind) View(_ content.Env, value json.RawMessage) (any, error) {
	return ParseLink(value)
}

// LearnerView leaves out the custom parameters, which are the tool's
// business; learners launch with POST /api/lti/launches/{topic}.
func (Kind) LearnerView(_ content.Env, value json.RawMessage) (any, error) {
	l, err := ParseLink(value)
	return map[string]any{"tool_id": l.ToolID}, err
}

// Fields documents the lti fields of a topic create or update.
func (Kind) Fields() map[string]*huma.Schema {
	return map[string]*huma.Schema{
		"tool": {Type: huma.TypeInteger, Description: "LTI: id of an external tool (GET /api/admin/lti/tools)."},
		"url":  {Type: huma.TypeString, MaxLength: ptr(1000), Description: "LTI: the resource's target link; default: the tool's."},
		"custom": {Type: huma.TypeObject, AdditionalProperties: &huma.Schema{Type: huma.TypeString},
			Description: "LTI: custom parameters sent in the launch's custom claim."},
		"score_maximum": {Type: huma.TypeNumber, Description: "LTI: scoreMaximum of the line item of the topic's resource link " +
			"(AGS), made on the first launch; default 100."},
	}
}

func ptr(n int) *int { return &n }

// CompletesItself: an lti topic completes when its tool posts a completed
// score (AGS), never by the learner's own progress write.
func (Kind) CompletesItself(json.RawMessage) bool { return true }
