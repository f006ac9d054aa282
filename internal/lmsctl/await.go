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
// operation until it is ready or failed, and returns the topic as it then
// is. Whatever ends the wait early leaves the topic created: the failure
// says so (details.topic) and how to go on.
func (a *app) awaitVideo(c *Caller, topic json.RawMessage) (json.RawMessage, error) {
	var t struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(topic, &t); err != nil || t.ID == 0 {
		return nil, fmt.Errorf("the created topic has no id")
	}
	id := strconv.FormatInt(t.ID, 10)
	op, err := a.followVideo(c, t.ID)
	if err == nil && op.State == "failed" {
		return nil, &Failure{Code: "VIDEO_FAILED", Exit: ExitConflict, Details: map[string]any{"topic": t.ID},
			Message: "The video topic " + id + " was created, but its video could not be transcoded: " +
				op.Error + " Replace its file (lmsctl put-admin-topics-id) or delete the topic."}
	}
	var got Result
	if err == nil {
		got, err = c.Call(a.ctx, mustOp("get-admin-topics-id"), Input{Params: map[string]string{"id": id}})
	}
	if err != nil {
		f := failureOf(err)
		f.setDetail("topic", t.ID)
		f.addNote("The video topic " + id + " was created; its transcoding goes on without lmsctl. Follow it with " +
			"`lmsctl get-admin-operations-operation --operation video:" + id + " --param-wait 60` (again until done is true), " +
			"read the topic with `lmsctl get-admin-topics-id --id " + id + "` or delete it with `lmsctl delete-admin-topics-id --id " + id + "`.")
		return nil, f
	}
	return got.Data, nil
}

// videoOperation is the state of operation video:<topic_id>.
type videoOperation struct {
	State    string  `json:"state"`
	Done     bool    `json:"done"`
	Progress float64 `json:"progress"`
	Error    string  `json:"error"`
}

// followVideo polls GET /api/admin/operations/video:<id>, long-polled with
// its ETag so that an unchanged state costs one waiting request, until
// the operation is done. The polls go through the Caller, so --wait
// waits out a rate limit as for any other request. On a terminal the
// percentage is drawn as a bar.
func (a *app) followVideo(c *Caller, topic int64) (videoOperation, error) {
	var bar func(pct int, suffix string)
	if a.StderrTTY {
		bar = percentBar(a.Stderr, "transcode")
	}
	path := "/api/admin/operations/video:" + strconv.FormatInt(topic, 10) + "?wait=30"
	poll := *c
	for {
		res, err := poll.do(a.ctx, http.MethodGet, path, nil, "")
		var apiErr *client.Error
		if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotModified {
			continue
		}
		if err != nil {
			return videoOperation{}, err
		}
		if tag := res.Header.Get("ETag"); tag != "" {
			poll.Client = c.Client.WithHeader("If-None-Match", tag)
		}
		r, err := readResult(res)
		if err != nil {
			return videoOperation{}, err
		}
		var op videoOperation
		if err := json.Unmarshal(r.Data, &op); err != nil {
			return videoOperation{}, fmt.Errorf("the operation's answer: %w", err)
		}
		if bar != nil && (op.State == "processing" || op.Done) {
			pct := int(op.Progress)
			if op.Done {
				pct = 100
			}
			bar(pct, "")
		}
		if op.Done {
			return op, nil
		}
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
