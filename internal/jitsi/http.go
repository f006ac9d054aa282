package jitsi

import (
	"context"
	"net/http"
	"reflect"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/topics"
	"github.com/lms-platform/lms/internal/webhooks"
)

const routePath = "/api/jitsi/recorded-video"

// recordingInput reads the body itself: the signature covers its exact
// bytes, and it is checked before the body is looked at.
type recordingInput struct {
	webhooks.Signed
	RawBody []byte
}

const doc = "A Jitsi meeting's recording finished: the body {meeting, url, title?} names the meeting's room and where " +
	"the recording can be downloaded. The meeting of a lesson is the room lesson-<lesson id> (also accepted as " +
	"<app id>/lesson-<id>, as Jitsi as a Service names rooms, or as the meeting's URL). The recording is fetched " +
	"through the outbound-fetch guard (public addresses only, the video upload cap) and becomes a video topic at the " +
	"end of that lesson, transcoded like any upload (operation video:<topic id>); the answer is the new topic. " +
	"The tenant's settings lms_jitsi.package_status (enabled) and lms_jitsi.secret decide whether and with what " +
	"secret the signature is checked; while the integration is off every call answers 401. An unknown lesson " +
	"answers 404, a recording that cannot be fetched or is no video 422, and then the same webhook-id may be sent " +
	"again. " + webhooks.SignedDoc

// Routes registers the recording webhook.
func Routes(api huma.API, s *Service) {
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: routePath, Tags: []string{"webhooks"}, Who: httpx.Anyone,
		Scope: httpx.NoTokens, Status: http.StatusCreated, Limit: &httpx.RateLimit{Limit: 60, Per: httpx.PerIP},
		MaxBody: 16 << 10, Errors: []int{401, 409, 422},
		Summary:     "A Jitsi meeting's recording finished: it becomes a video topic of the meeting's lesson (signed webhook)",
		Description: doc},
		func(ctx context.Context, in *recordingInput) (*httpx.Response[topics.View], error) {
			v, err := s.Receive(ctx, httpx.TenantFrom(ctx), in.Signed, in.RawBody)
			if err != nil {
				return nil, err
			}
			return httpx.Created(v, "The recording was added to the lesson.")
		})
	describeBody(api)
}

// describeBody documents the JSON body the handler reads itself.
func describeBody(api huma.API) {
	item := api.OpenAPI().Paths[routePath]
	if item == nil || item.Post == nil {
		return
	}
	schema := api.OpenAPI().Components.Schemas.Schema(reflect.TypeOf(Recording{}), true, "JitsiRecording")
	item.Post.RequestBody = &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{
		"application/json": {Schema: schema}}}
}
