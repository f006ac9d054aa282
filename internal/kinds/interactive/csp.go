package interactive

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/kinds/liascript"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/topics"
)

// CSPReport is one stored Content-Security-Policy violation.
type CSPReport struct {
	TopicID     *int64    `json:"topic_id"`
	DocumentURI string    `json:"document_uri" doc:"The page, without its query."`
	BlockedURI  string    `json:"blocked_uri" doc:"What was blocked: a URL without its query, or inline, eval, ..."`
	Directive   string    `json:"directive" doc:"The directive that blocked it (connect-src, ...)."`
	CreatedAt   time.Time `json:"created_at"`
}

// maxReportBody caps a report's body; browsers send a few hundred bytes.
const maxReportBody = 16 << 10

// reportBody is a report as browsers send it, in any of their content
// types (application/csp-report, application/reports+json, JSON), read by
// the handler.
type reportBody struct{ r io.Reader }

func (b *reportBody) Resolve(ctx huma.Context) []error {
	b.r = ctx.BodyReader()
	return nil
}

// parseReport reads the report-uri shape {"csp-report": {...}} or the
// Reporting API's [{type: "csp-violation", body: {...}}].
func parseReport(data []byte) (CSPReport, bool) {
	var legacy struct {
		R *struct {
			Document  string `json:"document-uri"`
			Blocked   string `json:"blocked-uri"`
			Effective string `json:"effective-directive"`
			Violated  string `json:"violated-directive"`
		} `json:"csp-report"`
	}
	if json.Unmarshal(data, &legacy) == nil && legacy.R != nil {
		d := legacy.R.Effective
		if d == "" {
			d = legacy.R.Violated
		}
		return CSPReport{DocumentURI: clean(legacy.R.Document), BlockedURI: clean(legacy.R.Blocked), Directive: clip(d)}, true
	}
	var modern []struct {
		Type string `json:"type"`
		Body struct {
			Document  string `json:"documentURL"`
			Blocked   string `json:"blockedURL"`
			Effective string `json:"effectiveDirective"`
		} `json:"body"`
	}
	if json.Unmarshal(data, &modern) == nil && len(modern) > 0 && modern[0].Type == "csp-violation" {
		b := modern[0].Body
		return CSPReport{DocumentURI: clean(b.Document), BlockedURI: clean(b.Blocked), Directive: clip(b.Effective)}, true
	}
	return CSPReport{}, false
}

// clean drops a URL's query and fragment (a play link's signature is in
// its path, which is kept to name the app; queries may hold anything).
func clean(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	return clip(u)
}

func clip(s string) string {
	if len(s) > 500 {
		return s[:500]
	}
	return s
}

// AddReport stores a report about an interactive topic's app or a
// LiaScript topic's player page. Reports naming no such topic, or not shaped as reports, are dropped: the
// route is open to anyone, as browsers send reports without credentials.
func (s *Service) AddReport(ctx context.Context, t *platform.Tenant, topicID int64, body io.Reader) error {
	data, err := io.ReadAll(io.LimitReader(body, maxReportBody+1))
	if err != nil {
		return apperr.Wrap(apperr.BadRequest, err, "The report could not be read.")
	}
	if len(data) > maxReportBody {
		return apperr.New(apperr.TooLarge, "The report is too large.")
	}
	r, ok := parseReport(data)
	if !ok {
		return apperr.New(apperr.Invalid, "The body is not a Content-Security-Policy report.")
	}
	if err := reportable(ctx, t, topicID); err != nil {
		return err
	}
	r.TopicID = &topicID
	return addReport(ctx, t, s.now(), r)
}

// Reportable refuses, before the route's rate limit counts it, a report
// whose topic query names no interactive or LiaScript topic of the tenant.
func (s *Service) Reportable(hc huma.Context) error {
	id, err := strconv.ParseInt(hc.Query("topic"), 10, 64)
	if err != nil || id < 1 {
		return errNoTopic
	}
	ctx := hc.Context()
	return reportable(ctx, httpx.TenantFrom(ctx), id)
}

var errNoTopic = apperr.New(apperr.NotFound, "Topic not found.")

func reportable(ctx context.Context, t *platform.Tenant, topicID int64) error {
	topic, err := topics.ByID(ctx, t.DB, topicID)
	if apperr.Is(err, apperr.NotFound) || (err == nil && topic.TopicableType != Class && topic.TopicableType != liascript.Class) {
		return errNoTopic
	}
	return err
}

// Reports lists an interactive topic's reports, newest first, for those
// who may read the topic in the admin API.
func (s *Service) Reports(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64, offset, limit int) ([]CSPReport, int64, error) {
	if _, err := s.Topics.Get(ctx, t, p, topicID); err != nil {
		return nil, 0, err
	}
	return listReports(ctx, t.DB, topicID, offset, limit)
}
