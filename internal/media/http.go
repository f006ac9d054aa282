package media

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/kinds/file"
	"github.com/lms-platform/lms/internal/platform"
)

// Operation is the state of a background operation a client awaits.
type Operation struct {
	Operation string   `json:"operation" doc:"The operation's name, video:<topic_id>."`
	State     string   `json:"state" enum:"queued,processing,ready,failed" doc:"queued (waiting for a worker; error says why when it waits for ffmpeg), processing, ready or failed."`
	Done      bool     `json:"done" doc:"True once ready or failed: the state no longer changes (until a new upload)."`
	Progress  int      `json:"progress" doc:"Percent done, 0 to 100."`
	Error     string   `json:"error,omitempty" doc:"Why the video failed, or why it waits."`
	Duration  float64  `json:"duration,omitempty" doc:"Seconds, once ready."`
	Variants  []string `json:"variants,omitempty" doc:"The HLS variants made, as height@bitrate (360p@800k); none when transcoding is off."`
}

type operationInput struct {
	Operation   string `path:"operation" maxLength:"64" doc:"video:<topic_id>"`
	Wait        int    `query:"wait" minimum:"0" maximum:"60" doc:"Long-poll: wait up to this many seconds for the state to differ from If-None-Match (without it, for the operation to be done)."`
	IfNoneMatch string `header:"If-None-Match" maxLength:"128" doc:"The ETag of the state the client has."`
}

type operationOutput struct {
	Status int
	ETag   string `header:"ETag" doc:"Changes whenever the state does."`
	Body   *httpx.Envelope[Operation]
}

// poll is how often a long-poll looks at the topic again.
const poll = 250 * time.Millisecond

// Routes registers GET /api/admin/operations/{operation}.
func Routes(api huma.API, v *Videos) {
	// A background operation works on a course's topic: courses:read.
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/admin/operations/{operation}", Tags: []string{"operations"},
		Scope: "courses:read",
		Who:   httpx.User, Errors: []int{http.StatusNotModified, http.StatusUnprocessableEntity},
		Summary: "The state of a background operation (video:<topic_id>): poll with ETag/If-None-Match, or long-poll with wait",
		Description: "A video topic's upload is transcoded in the background; its operation video:<topic_id> is " +
			"queued, processing (with progress in percent), then ready or failed (with error). Who may edit the " +
			"topic may read it. An ETag names the state: send it back as If-None-Match to get 304 while nothing " +
			"changed, and add wait=N (seconds, at most 60) to hold the request until the state changes (or, " +
			"without If-None-Match, until the operation is done) or N seconds pass."},
		func(ctx context.Context, in *operationInput) (*operationOutput, error) {
			return v.await(ctx, in)
		})
}

func (v *Videos) await(ctx context.Context, in *operationInput) (*operationOutput, error) {
	t, p := httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx)
	id, err := parseOperation(in.Operation)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(time.Duration(in.Wait) * time.Second)
	for {
		op, err := v.operation(ctx, t, p, id)
		if err != nil {
			return nil, err
		}
		tag := etag(op)
		changed := in.IfNoneMatch != tag
		settled := changed && (in.IfNoneMatch != "" || op.Done)
		if settled || in.Wait == 0 || !time.Now().Before(deadline) {
			if !changed {
				return &operationOutput{Status: http.StatusNotModified, ETag: tag}, nil
			}
			return &operationOutput{Status: http.StatusOK, ETag: tag,
				Body: &httpx.Envelope[Operation]{Success: true, Data: op}}, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(poll):
		}
	}
}

func parseOperation(name string) (int64, error) {
	rest, ok := strings.CutPrefix(name, "video:")
	id, err := strconv.ParseInt(rest, 10, 64)
	if !ok || err != nil || id <= 0 {
		return 0, apperr.Field("operation", "The operation must be video:<topic_id>.")
	}
	return id, nil
}

// operation reads the state of video:<id> from the topic's content.
func (v *Videos) operation(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) (Operation, error) {
	class, raw, err := v.Topics.EditableContent(ctx, t, p, id)
	if err != nil {
		return Operation{}, err
	}
	var val file.Value
	if class != file.Video().Class() || json.Unmarshal(raw, &val) != nil {
		return Operation{}, apperr.New(apperr.NotFound, "The topic is not a video.")
	}
	op := Operation{Operation: OperationKey(id), State: val.Processing, Progress: val.Progress, Error: val.Error,
		Duration: val.Duration, Variants: val.Variants}
	if op.State == "" {
		op.State = file.Ready
	}
	op.Done = op.State == file.Ready || op.State == file.Failed
	if op.State == file.Ready {
		op.Progress = 100
	}
	return op, nil
}

func etag(op Operation) string {
	b, _ := json.Marshal(op)
	sum := sha256.Sum256(b)
	return `"` + hex.EncodeToString(sum[:8]) + `"`
}
