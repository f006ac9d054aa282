package web

import (
	"encoding/json"
	"fmt"
	"html/template"
	"strconv"
	"strings"
)

// layoutContent is a layout topic as the page renders it: the learner's
// view of the document, which holds no answers (they come from the
// practice check through /bff/).
type layoutContent struct {
	Nodes    []layoutNode
	Practice bool
	TopicID  int64
}

// layoutNode is one component. Props stay generic for the templates,
// except the practice questions, which the page numbers.
type layoutNode struct {
	Index     int
	Component string
	ID        string
	Props     map[string]any
	// H5PSrc is an H5PFrame's embed address; its state is kept per topic
	// and node.
	H5PSrc string
	// LiaSrc is a LiaScriptLesson's player link.
	LiaSrc    string
	Questions []practiceQuestion
}

type practiceQuestion struct {
	Index    int
	Prompt   string
	Multiple bool
	Options  []string
	// Kind is the GIFT type of a GIFT question ("" for a choice question
	// {prompt, options}): it picks the controls and the answer's shape.
	Kind string
	// Items and Targets are a matching question's: each item is matched
	// with one target from a list.
	Items   []string
	Targets []string
}

// giftControls are the GIFT types the page has controls for.
var giftControls = map[string]bool{"multichoice": true, "truefalse": true, "shortanswer": true, "numerical": true, "matching": true}

type giftText struct {
	Text string `json:"text"`
}

func texts(list []giftText) []string {
	out := make([]string, len(list))
	for i, t := range list {
		out[i] = t.Text
	}
	return out
}

// renderable are the components this page knows how to show; a document
// with any other is shown as its fallback.
var renderable = map[string]bool{"Callout": true, "Steps": true, "ComparisonTable": true, "H5PFrame": true,
	"LiaScriptLesson": true, "Timeline": true, "FlipCards": true, "CodeBlock": true, "PracticeActivity": true}

// decodeLayout reads the learner's view of a layout; nil when any part
// cannot be rendered, so that the page shows the fallback instead of half
// a lesson.
func decodeLayout(raw json.RawMessage, topicID int64) *layoutContent {
	var v struct {
		Document []struct {
			Component string          `json:"component"`
			ID        string          `json:"id"`
			Props     json.RawMessage `json:"props"`
		} `json:"document"`
		Practice bool `json:"practice"`
	}
	if json.Unmarshal(raw, &v) != nil || len(v.Document) == 0 {
		return nil
	}
	out := &layoutContent{Practice: v.Practice, TopicID: topicID}
	for i, n := range v.Document {
		if !renderable[n.Component] {
			return nil
		}
		node := layoutNode{Index: i, Component: n.Component, ID: n.ID}
		if json.Unmarshal(n.Props, &node.Props) != nil || node.Props == nil {
			return nil
		}
		switch n.Component {
		case "H5PFrame":
			cid, _ := node.Props["content_id"].(string)
			if !isID(cid) {
				return nil
			}
			node.H5PSrc = fmt.Sprintf("/h5p/embed/play/%s?contextId=topic-%d-node-%d", cid, topicID, i)
		case "LiaScriptLesson":
			// Only the API's player is framed, whatever the props say.
			src, _ := node.Props["play_url"].(string)
			if !strings.HasPrefix(src, "/api/liascript/play/") {
				return nil
			}
			node.LiaSrc = src
		case "PracticeActivity":
			var p struct {
				Questions []struct {
					Prompt   string     `json:"prompt"`
					Multiple bool       `json:"multiple"`
					Options  []giftText `json:"options"`
					GIFT     *struct {
						Type    string     `json:"type"`
						Options []giftText `json:"options"`
						Items   []giftText `json:"items"`
						Targets []string   `json:"targets"`
					} `json:"gift"`
				} `json:"questions"`
			}
			if json.Unmarshal(n.Props, &p) != nil || len(p.Questions) == 0 {
				return nil
			}
			for q, question := range p.Questions {
				pq := practiceQuestion{Index: q, Prompt: question.Prompt, Multiple: question.Multiple, Options: texts(question.Options)}
				if g := question.GIFT; g != nil {
					if !giftControls[g.Type] {
						return nil
					}
					pq.Kind, pq.Options, pq.Items, pq.Targets = g.Type, texts(g.Options), texts(g.Items), g.Targets
				}
				node.Questions = append(node.Questions, pq)
			}
		}
		out.Nodes = append(out.Nodes, node)
	}
	return out
}

// packageSandbox is the sandbox of the SCORM and cmi5 frames. Their
// content runs on the content origin, and a SCO needs that origin (the
// runtime is in its parent frame, same origin), so allow-same-origin
// stays; what the sandbox takes away is navigating this page (no
// allow-top-navigation): a package cannot replace the topic page with a
// page of its own.
const packageSandbox = "allow-scripts allow-same-origin allow-forms allow-popups allow-popups-to-escape-sandbox allow-modals allow-downloads allow-pointer-lock"

// liaSandbox is the sandbox of LiaScript's player frames (a LiaScript
// topic's and a layout's LiaScriptLesson): no allow-same-origin, so the
// course's scripts reach neither the API nor the session.
const liaSandbox = "allow-scripts allow-popups allow-forms allow-modals allow-downloads"

// layoutFuncs help the layout templates: labels of callout tones (the
// colour is never the only sign), ids unique in the page, and the sandbox
// of LiaScript's player frames.
var layoutFuncs = template.FuncMap{
	"liaSandbox":     func() string { return liaSandbox },
	"packageSandbox": func() string { return packageSandbox },
	"toneLabel": func(tone any) string {
		switch tone {
		case "tip":
			return "Tip"
		case "warning":
			return "Warning"
		case "success":
			return "Well done"
		}
		return "Note"
	},
	"nodeDOMID": func(i int, parts ...int) string {
		id := "node-" + strconv.Itoa(i)
		for _, p := range parts {
			id += "-" + strconv.Itoa(p)
		}
		return id
	},
}
