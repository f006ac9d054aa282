package lmsctl

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/lms-platform/lms/client"
)

// awaitVideo follows the transcoding of a created video topic through its
// operation (GET /api/admin/operations/video:<id>, long-polled with its
// ETag, so an unchanged state costs one waiting request) until it is ready
// or failed, and returns the topic as it then is. On a terminal the
// percentage is drawn as a bar.
func (a *app) awaitVideo(c *Caller, topic json.RawMessage) (json.RawMessage, error) {
	var t struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(topic, &t); err != nil || t.ID == 0 {
		return nil, fmt.Errorf("the created topic has no id")
	}
	var bar func(pct int, suffix string)
	if a.StderrTTY {
		bar = percentBar(a.Stderr, "transcode")
	}
	path := "/api/admin/operations/video:" + strconv.FormatInt(t.ID, 10) + "?wait=30"
	tag := ""
	for {
		cl := c.Client
		if tag != "" {
			cl = cl.WithHeader("If-None-Match", tag)
		}
		res, err := cl.Do(a.ctx, http.MethodGet, path, nil, "")
		var apiErr *client.Error
		if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotModified {
			continue
		}
		if err != nil {
			return nil, err
		}
		tag = res.Header.Get("ETag")
		r, err := readResult(res)
		if err != nil {
			return nil, err
		}
		var op struct {
			State    string  `json:"state"`
			Done     bool    `json:"done"`
			Progress float64 `json:"progress"`
			Error    string  `json:"error"`
		}
		if err := json.Unmarshal(r.Data, &op); err != nil {
			return nil, fmt.Errorf("the operation's answer: %w", err)
		}
		if bar != nil && (op.State == "processing" || op.Done) {
			pct := int(op.Progress)
			if op.Done {
				pct = 100
			}
			bar(pct, "")
		}
		if !op.Done {
			continue
		}
		if op.State == "failed" {
			return nil, &Failure{Code: "VIDEO_FAILED", Exit: ExitConflict, Details: map[string]any{"topic": t.ID},
				Message: "The video topic " + strconv.FormatInt(t.ID, 10) + " was created, but its video could not be transcoded: " +
					op.Error + " Replace its file (lmsctl put-admin-topics-id) or delete the topic."}
		}
		got, err := c.Call(a.ctx, mustOp("get-admin-topics-id"), Input{Params: map[string]string{"id": strconv.FormatInt(t.ID, 10)}})
		if err != nil {
			return nil, err
		}
		return got.Data, nil
	}
}

// percentBar draws a percentage (and what follows it) on one terminal
// line, redrawn when it changes, ended with a new line at 100.
func percentBar(w io.Writer, label string) func(pct int, suffix string) {
	last := -1
	return func(pct int, suffix string) {
		pct = min(max(pct, 0), 100)
		if pct == last {
			return
		}
		last = pct
		const width = 30
		fmt.Fprintf(w, "\r%s [%s%s] %3d%%%s", label, strings.Repeat("#", pct*width/100), strings.Repeat(".", width-pct*width/100), pct, suffix)
		if pct == 100 {
			fmt.Fprintln(w)
		}
	}
}
