package browsertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Violation is one rule of axe-core (npm, pinned in package.json) that a
// page breaks, with the elements that break it.
type Violation struct {
	ID      string `json:"id"`
	Impact  string `json:"impact"`
	Help    string `json:"help"`
	HelpURL string `json:"helpUrl"`
	Nodes   []struct {
		Target  []any  `json:"target"`
		HTML    string `json:"html"`
		Summary string `json:"failureSummary"`
	} `json:"nodes"`
}

func (v Violation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): %s", v.ID, v.Impact, v.Help)
	for _, n := range v.Nodes {
		fmt.Fprintf(&b, "\n    %v %s", n.Target, n.HTML)
	}
	return b.String()
}

// Severe keeps the violations of serious or critical impact.
func Severe(vs []Violation) []Violation {
	var out []Violation
	for _, v := range vs {
		if v.Impact == "serious" || v.Impact == "critical" {
			out = append(out, v)
		}
	}
	return out
}

var axe struct {
	once sync.Once
	src  string
	err  error
}

// axeSource reads axe-core's browser build: LMS_AXE, else
// node_modules/axe-core/axe.min.js of the module's root (make build and
// make test install it).
func axeSource() (string, error) {
	axe.once.Do(func() {
		path := os.Getenv("LMS_AXE")
		if path == "" {
			dir, err := os.Getwd()
			if err != nil {
				axe.err = err
				return
			}
			for {
				if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
					break
				}
				parent := filepath.Dir(dir)
				if parent == dir {
					axe.err = errors.New("browsertest: no go.mod above the working directory")
					return
				}
				dir = parent
			}
			path = filepath.Join(dir, "node_modules", "axe-core", "axe.min.js")
		}
		b, err := os.ReadFile(path)
		axe.src, axe.err = string(b), err
	})
	return axe.src, axe.err
}

// Axe checks the current page of ctx with axe-core's WCAG 2.x A and AA
// rules and returns what it breaks. The script is evaluated through the
// DevTools protocol, so the page's Content-Security-Policy does not stand
// in its way and the page itself is not changed.
func Axe(ctx context.Context) ([]Violation, error) {
	src, err := axeSource()
	if err != nil {
		return nil, fmt.Errorf("browsertest: axe-core: %w (run make build)", err)
	}
	var loaded bool
	if err := chromedp.Run(ctx, chromedp.Evaluate(`typeof window.axe === 'object'`, &loaded)); err != nil {
		return nil, err
	}
	if !loaded {
		if err := chromedp.Run(ctx, chromedp.Evaluate(src+"\n;true", nil)); err != nil {
			return nil, fmt.Errorf("browsertest: inject axe-core: %w", err)
		}
	}
	var raw string
	run := `axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}, resultTypes: ['violations']})
		.then(function (r) { return JSON.stringify(r.violations); })`
	if err := chromedp.Run(ctx, chromedp.Evaluate(run, &raw, func(p *runtime.EvaluateParams) *runtime.EvaluateParams {
		return p.WithAwaitPromise(true)
	})); err != nil {
		return nil, fmt.Errorf("browsertest: run axe-core: %w", err)
	}
	var vs []Violation
	if err := json.Unmarshal([]byte(raw), &vs); err != nil {
		return nil, fmt.Errorf("browsertest: axe-core's answer: %w", err)
	}
	return vs, nil
}
