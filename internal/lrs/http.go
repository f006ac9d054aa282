package lrs

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/platform"
)

// Base is the path of the LRS endpoint; xAPI resources hang below it.
const Base = "/api/xapi/"

// LaunchUser is the user name of the Basic credentials a launch's auth
// token holds.
const LaunchUser = "cmi5"

// request is any LRS call: the body as sent, the query and the headers.
type request struct {
	RawBody []byte
	method  string
	query   url.Values
	header  http.Header
}

// Resolve keeps the query and headers, which xAPI uses more freely than
// a typed input could say.
func (r *request) Resolve(ctx huma.Context) []error {
	u := ctx.URL()
	// Every answer carries the version, errors too (Communication 3.3);
	// every answer of GET statements says how far the store is
	// consistent (Communication 2.1.3): all of it, as it is read after
	// each write. A successful read sets it again from the service's
	// clock.
	ctx.SetHeader("X-Experience-API-Version", Version)
	// Answers change with every write and depend on the credentials: a
	// browser must ask each time (an AU's reads count, cmi5 section 11.0).
	ctx.SetHeader("Cache-Control", "no-store")
	if ctx.Method() == http.MethodGet && strings.HasSuffix(u.Path, "/statements") {
		ctx.SetHeader("X-Experience-API-Consistent-Through", time.Now().UTC().Format(time.RFC3339Nano))
	}
	r.method = ctx.Method()
	r.query = u.Query()
	r.header = http.Header{}
	ctx.EachHeader(func(name, value string) { r.header.Add(name, value) })
	return nil
}

// response is written as xAPI wants it: no envelope.
type response struct {
	Body func(huma.Context)
}

func reply(status int, contentType string, body []byte, headers map[string]string) *response {
	return &response{Body: func(ctx huma.Context) {
		ctx.SetHeader("X-Experience-API-Version", Version)
		for k, v := range headers {
			ctx.SetHeader(k, v)
		}
		if contentType != "" {
			ctx.SetHeader("Content-Type", contentType)
		}
		ctx.SetStatus(status)
		if len(body) > 0 {
			ctx.BodyWriter().Write(body)
		}
	}}
}

func jsonReply(status int, v any, headers map[string]string) (*response, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return reply(status, "application/json", b, headers), nil
}

const authDoc = " Credentials: a tenant admin's access token as Bearer, or as the password of Basic credentials (any user name); " +
	"or the auth token a cmi5 launch's fetch URL answered, sent as `Authorization: Basic <token>`, which reaches only that launch's " +
	"registration and learner. Every request but GET about carries X-Experience-API-Version 1.0.x (400 otherwise); answers carry " +
	"X-Experience-API-Version 1.0.3 and are xAPI bodies, not envelopes. The alternate request syntax (xAPI Communication 1.3) reaches " +
	"the resources with a POST: ?method=GET|PUT|POST|DELETE as the only query parameter and an application/x-www-form-urlencoded form " +
	"holding the parameters, the headers (Authorization, X-Experience-API-Version, Content-Type, If-Match, If-None-Match) and the body as content. " +
	"Limits (413 with the error envelope beyond): 1 MiB for one statement as sent, 500 statements and 10 MiB of body (statements, " +
	"attachments, a document) for one request. A launch's token may send 200 statements a minute (fixed windows; 429 with Retry-After " +
	"beyond), may void no statement (cmi5 section 6.3), reaches the state documents of its own activity (the launch's activityId), " +
	"learner and registration only and reads LMS.LaunchData without changing it (cmi5 section 10.2.1), reads activity profiles, and " +
	"reaches its own learner's agent profiles only; other access is 403."

// Routes registers the LRS resources (xAPI 1.0.3 Communication, section 2).
func Routes(api huma.API, s *Service) {
	// The LRS has its own credentials (a launch's auth token, an admin's
	// session): a scoped token never reaches its resources.
	route := func(method, path, summary, description string) httpx.Route {
		return httpx.Route{Method: method, Path: "/api/xapi/" + path, Summary: summary, Description: description + authDoc,
			Scope: httpx.NoTokens,
			Tags:  []string{"xapi"}, MaxBody: MaxRequest, Credentials: true,
			Errors: []int{http.StatusBadRequest, http.StatusConflict, http.StatusPreconditionFailed, http.StatusRequestEntityTooLarge}}
	}
	// handlers are the resources' handlers by method and path, which the
	// alternate request syntax (a POST naming its method) reaches.
	handlers := map[string]handler{}
	handle := func(r httpx.Route, h handler) {
		handlers[r.Method+" "+r.Path] = h
		path := r.Path
		httpx.Handle(api, r, func(ctx context.Context, in *request) (*response, error) {
			h := h
			if in.query.Has("method") {
				if in.method != http.MethodPost {
					return nil, bad("The alternate request syntax (a method parameter) must be sent as POST.")
				}
				if err := alternate(in); err != nil {
					return nil, err
				}
				if h = handlers[in.method+" "+path]; h == nil {
					return nil, bad("This resource has no %s.", in.method)
				}
			}
			t := httpx.TenantFrom(ctx)
			scope, err := s.scope(ctx, t, in.header)
			if err != nil {
				return nil, err
			}
			if err := checkVersion(in.header); err != nil {
				return nil, err
			}
			out, err := h(ctx, t, scope, in)
			if errors.Is(err, ErrPreconditionFailed) {
				return nil, &preconditionError{}
			}
			if out != nil && in.method == http.MethodGet && strings.HasSuffix(path, "/statements") {
				// A GET sent as POST still says how far the store is
				// consistent.
				write := out.Body
				out.Body = func(ctx huma.Context) {
					ctx.SetHeader("X-Experience-API-Consistent-Through", s.now().Format(time.RFC3339Nano))
					write(ctx)
				}
			}
			return out, err
		})
	}
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/xapi/about", Summary: "xAPI versions and extensions of the LRS",
		Scope:       httpx.AnyToken,
		Description: "No credentials needed.", Tags: []string{"xapi"}},
		func(ctx context.Context, in *request) (*response, error) {
			return jsonReply(http.StatusOK, map[string]any{"version": []string{Version}, "extensions": map[string]any{}}, nil)
		})
	handle(route(http.MethodGet, "statements", "Get a statement or query statements",
		"statementId or voidedStatementId gets one; otherwise the filters agent, verb, activity, registration, related_activities, "+
			"related_agents, since, until, limit (at most 500), format (exact, ids, canonical: one language of each verb display and activity "+
			"language map, chosen by Accept-Language), attachments and ascending select a page, newest stored first, with a more link to the next "+
			"one. A page also ends before the statement that would take its answer past 2 MiB (it holds at least one statement), and is written "+
			"to the response statement by statement. A statement whose object is a StatementRef also meets the filters but since, until and limit through the statement it targets. "+
			"Voided statements appear only by voidedStatementId."), s.getStatements)
	handle(route(http.MethodPut, "statements", "Store a statement under statementId",
		"204 when stored, or when the id holds the same statement already; 409 when it holds another. Attachments in multipart/mixed."),
		s.putStatement)
	handle(route(http.MethodPost, "statements", "Store statements",
		"One statement or an array; answers the ids in order. Attachments in multipart/mixed. A signed statement's JWS (RS256/384/512) "+
			"is checked against the statement and its x5c certificate. A launch's statements pass cmi5's session rules."),
		s.postStatements)
	for _, d := range []struct{ path, kind, what string }{
		{"activities/state", StateDoc, "a state document (activityId, agent, registration, stateId)"},
		{"activities/profile", ActivityDoc, "an activity profile document (activityId, profileId)"},
		{"agents/profile", AgentDoc, "an agent profile document (agent, profileId)"},
	} {
		kind := d.kind
		handle(route(http.MethodGet, d.path, "Get "+d.what+" or list their ids",
			"Without the document id: the ids, filtered by since. With it: the document and its ETag."),
			func(ctx context.Context, t *platform.Tenant, scope Scope, in *request) (*response, error) {
				return s.getDocument(ctx, t, scope, in, kind)
			})
		handle(route(http.MethodPut, d.path, "Store "+d.what,
			"Replaces the document. If-Match / If-None-Match are checked (412); a profile PUT needs one of them (409 when the document exists, else 400)."),
			func(ctx context.Context, t *platform.Tenant, scope Scope, in *request) (*response, error) {
				return s.putDocument(ctx, t, scope, in, kind, false)
			})
		handle(route(http.MethodPost, d.path, "Merge into "+d.what,
			"JSON objects merge into a stored JSON object (top-level properties); other bodies are stored when none is there, else 400."),
			func(ctx context.Context, t *platform.Tenant, scope Scope, in *request) (*response, error) {
				return s.putDocument(ctx, t, scope, in, kind, true)
			})
		handle(route(http.MethodDelete, d.path, "Delete "+d.what,
			"Without stateId, every state document of the activity, agent and registration."),
			func(ctx context.Context, t *platform.Tenant, scope Scope, in *request) (*response, error) {
				return s.deleteDocument(ctx, t, scope, in, kind)
			})
	}
	handle(route(http.MethodGet, "activities", "The definition of an activity", "Its definition merged from the statements naming it (activityId), newest last; language maps merge by language."),
		s.getActivity)
	handle(route(http.MethodGet, "agents", "The person object of an agent", "Its identifiers as known (agent)."), s.getPerson)
	// Bodies are optional: an empty document is a document, and GET and
	// DELETE take none.
	for path, item := range api.OpenAPI().Paths {
		if !strings.HasPrefix(path, "/api/xapi/") {
			continue
		}
		for _, op := range []*huma.Operation{item.Get, item.Put, item.Post, item.Delete} {
			if op != nil && op.RequestBody != nil {
				op.RequestBody.Required = false
			}
		}
	}
}

type handler func(ctx context.Context, t *platform.Tenant, scope Scope, in *request) (*response, error)

// alternateHeaders are the form parameters of the alternate request
// syntax that stand for headers (Communication 1.3).
var alternateHeaders = []string{"Authorization", "X-Experience-API-Version", "Content-Type", "Content-Length", "If-Match", "If-None-Match"}

// alternate turns a request in the alternate request syntax
// (Communication 1.3: POST with the method as the only query parameter
// and a form body) into the request it stands for: the form's content is
// the body, its header parameters are headers, the rest are the query.
func alternate(in *request) error {
	method := strings.ToUpper(in.query.Get("method"))
	switch method {
	case http.MethodGet, http.MethodPut, http.MethodPost, http.MethodDelete:
	default:
		return bad("The method parameter must be GET, PUT, POST or DELETE.")
	}
	if len(in.query) != 1 || len(in.query["method"]) != 1 {
		return bad("A request in the alternate syntax has no query parameters but method; the others go in its form.")
	}
	if mt, _, _ := mime.ParseMediaType(in.header.Get("Content-Type")); len(in.RawBody) > 0 && mt != "application/x-www-form-urlencoded" {
		return bad("A request in the alternate syntax must send its parameters as application/x-www-form-urlencoded.")
	}
	form, err := url.ParseQuery(string(in.RawBody))
	if err != nil {
		return bad("The form of the alternate request syntax cannot be read.")
	}
	in.method = method
	in.query = url.Values{}
	in.header.Del("Content-Type")
	in.header.Del("Content-Length")
	in.RawBody = nil
	for k, v := range form {
		switch {
		case k == "content":
			in.RawBody = []byte(v[0])
		case isAlternateHeader(k):
			in.header.Set(k, v[0])
		default:
			in.query[k] = v
		}
	}
	return nil
}

func isAlternateHeader(name string) bool {
	for _, h := range alternateHeaders {
		if strings.EqualFold(h, name) {
			return true
		}
	}
	return false
}

type preconditionError struct{}

func (*preconditionError) Error() string  { return "Precondition failed." }
func (*preconditionError) GetStatus() int { return http.StatusPreconditionFailed }

func checkVersion(h http.Header) error {
	v := h.Get("X-Experience-API-Version")
	if v == "" {
		return bad("The X-Experience-API-Version header is required.")
	}
	if !versionRe.MatchString(v) {
		return bad("The X-Experience-API-Version %q is not supported; this LRS speaks %s.", v, Version)
	}
	return nil
}

// scope authenticates the caller: an admin's bearer token (read by the
// API's middleware), Basic credentials holding a launch's token, or Basic
// credentials whose password is an admin's access token.
func (s *Service) scope(ctx context.Context, t *platform.Tenant, h http.Header) (Scope, error) {
	if p := httpx.PrincipalFrom(ctx); p != nil {
		return adminScope(p)
	}
	auth := h.Get("Authorization")
	if len(auth) > 6 && strings.EqualFold(auth[:6], "basic ") {
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(auth[6:]))
		if err != nil {
			return Scope{}, apperr.New(apperr.Unauthorized, "The Basic credentials are not valid base64.")
		}
		user, pass, _ := strings.Cut(string(raw), ":")
		if user == LaunchUser && s.Launches != nil {
			return s.Launches.LaunchScope(ctx, t, pass)
		}
		if s.Principal != nil && pass != "" {
			p, err := s.Principal(ctx, t, pass)
			if err != nil {
				return Scope{}, err
			}
			return adminScope(p)
		}
	}
	if err := httpx.AuthError(ctx); err != nil {
		return Scope{}, err
	}
	// A bearer token the API's middleware did not see: one sent as a form
	// parameter of the alternate request syntax.
	if len(auth) > 7 && strings.EqualFold(auth[:7], "bearer ") && s.Principal != nil {
		p, err := s.Principal(ctx, t, strings.TrimSpace(auth[7:]))
		if err != nil {
			return Scope{}, err
		}
		return adminScope(p)
	}
	return Scope{}, apperr.New(apperr.Unauthorized, "Unauthenticated.")
}

func adminScope(p *access.Principal) (Scope, error) {
	if !p.HasRole(access.Admin) {
		return Scope{}, errForbidden
	}
	return Scope{Admin: true, UserID: p.UserID}, nil
}

// statementsBody reads the statements of a PUT or POST: JSON, or
// multipart/mixed with the statements first and attachments after.
func statementsBody(in *request) (json.RawMessage, map[string]Attachment, error) {
	ct := in.header.Get("Content-Type")
	if ct == "" {
		return in.RawBody, nil, nil
	}
	// Statements come as JSON, or as multipart/mixed with their
	// attachments (Communication 1.5).
	mt, params, err := mime.ParseMediaType(ct)
	if err == nil && mt == "application/json" {
		return in.RawBody, nil, nil
	}
	if err != nil || mt != "multipart/mixed" {
		return nil, nil, bad("Statements are sent as application/json or multipart/mixed, not %s.", ct)
	}
	mr := multipart.NewReader(bytes.NewReader(in.RawBody), params["boundary"])
	first, err := mr.NextPart()
	if err != nil {
		return nil, nil, bad("The multipart body has no statement part.")
	}
	if pt, _, _ := mime.ParseMediaType(first.Header.Get("Content-Type")); pt != "application/json" {
		return nil, nil, bad("The first part of a multipart body must be the statements as application/json.")
	}
	stmts, err := io.ReadAll(first)
	if err != nil {
		return nil, nil, bad("The multipart body cannot be read.")
	}
	atts := map[string]Attachment{}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, bad("The multipart body cannot be read.")
		}
		sha := strings.ToLower(p.Header.Get("X-Experience-API-Hash"))
		if sha == "" {
			return nil, nil, bad("Each attachment part needs an X-Experience-API-Hash header.")
		}
		if enc := p.Header.Get("Content-Transfer-Encoding"); enc != "" && !strings.EqualFold(enc, "binary") {
			return nil, nil, bad("Attachment parts must use Content-Transfer-Encoding binary.")
		}
		body, err := io.ReadAll(p)
		if err != nil {
			return nil, nil, bad("The multipart body cannot be read.")
		}
		if len(sha) == 64 {
			sum := sha256.Sum256(body)
			if hex.EncodeToString(sum[:]) != sha {
				return nil, nil, bad("The attachment's content does not match its hash %s.", sha)
			}
		}
		atts[sha] = Attachment{ContentType: p.Header.Get("Content-Type"), Body: body}
	}
	return stmts, atts, nil
}

func (s *Service) putStatement(ctx context.Context, t *platform.Tenant, scope Scope, in *request) (*response, error) {
	id := in.query.Get("statementId")
	if !IsUUID(id) {
		return nil, bad("PUT needs a statementId query parameter holding a UUID.")
	}
	body, atts, err := statementsBody(in)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(body)) > MaxStatement {
		return nil, errStatementTooLarge
	}
	st, err := ParseStatement(body)
	if err != nil {
		return nil, err
	}
	if st.ID != "" && st.ID != strings.ToLower(id) {
		return nil, bad("The statement's id differs from statementId.")
	}
	st.ID = strings.ToLower(id)
	if _, err := s.Store(ctx, t, scope, []*Statement{st}, atts); err != nil {
		return nil, err
	}
	return reply(http.StatusNoContent, "", nil, nil), nil
}

func (s *Service) postStatements(ctx context.Context, t *platform.Tenant, scope Scope, in *request) (*response, error) {
	body, atts, err := statementsBody(in)
	if err != nil {
		return nil, err
	}
	var list []json.RawMessage
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if err := json.Unmarshal(trimmed, &list); err != nil {
			return nil, bad("The body must be a statement or an array of statements.")
		}
	} else {
		list = []json.RawMessage{trimmed}
	}
	if len(list) == 0 {
		return nil, bad("The array holds no statements.")
	}
	if len(list) > MaxBatch {
		return nil, errBatchTooLarge
	}
	for _, raw := range list {
		if len(raw) > MaxStatement {
			return nil, errStatementTooLarge
		}
	}
	stmts := make([]*Statement, len(list))
	for i, raw := range list {
		if stmts[i], err = ParseStatement(raw); err != nil {
			return nil, err
		}
	}
	ids, err := s.Store(ctx, t, scope, stmts, atts)
	if err != nil {
		return nil, err
	}
	return jsonReply(http.StatusOK, ids, nil)
}

var singleParams = map[string]bool{"statementId": true, "voidedStatementId": true, "attachments": true, "format": true}

func (s *Service) getStatements(ctx context.Context, t *platform.Tenant, scope Scope, in *request) (*response, error) {
	q := in.query
	format := q.Get("format")
	if format != "" && format != "exact" && format != "ids" && format != "canonical" {
		return nil, bad("The format must be exact, ids or canonical.")
	}
	withAttachments, err := boolParam(q, "attachments")
	if err != nil {
		return nil, err
	}
	langs := acceptLanguages(in.header.Get("Accept-Language"))
	consistent := map[string]string{"X-Experience-API-Consistent-Through": s.now().Format(time.RFC3339Nano)}
	id, voided := q.Get("statementId"), false
	if v := q.Get("voidedStatementId"); v != "" {
		if id != "" {
			return nil, bad("Send statementId or voidedStatementId, not both.")
		}
		id, voided = v, true
	}
	if id != "" {
		for k := range q {
			if !singleParams[k] {
				return nil, bad("The parameter %s cannot be combined with a statement id.", k)
			}
		}
		st, err := s.Get(ctx, t, scope, id, voided)
		if err != nil {
			return nil, err
		}
		body := formatted(st.Body, format, langs)
		consistent["Last-Modified"] = st.Stored.UTC().Format(http.TimeFormat)
		if withAttachments {
			return s.withAttachments(t, consistent, func(w io.Writer) ([]string, error) {
				_, err := w.Write(body)
				return attachmentHashes(nil, body), err
			}), nil
		}
		return reply(http.StatusOK, "application/json", body, consistent), nil
	}
	f, err := filterOf(q)
	if err != nil {
		return nil, err
	}
	// The more link of a page continues after its last statement; the
	// page's budget keeps room for the longest link and the JSON around
	// the statements, so a whole answer of several statements stays
	// within PageBytes.
	moreLink := func(cursor int64) string {
		next := url.Values{}
		for k, v := range q {
			next[k] = v
		}
		next.Set("cursor", strconv.FormatInt(cursor, 10))
		return Base + "statements?" + next.Encode()
	}
	longest, _ := json.Marshal(moreLink(math.MaxInt64))
	budget := PageBytes - len(`{"statements":[],"more":}`) - len(longest)
	page, err := s.Query(ctx, t, scope, f, budget, func(b json.RawMessage) json.RawMessage { return formatted(b, format, langs) })
	if err != nil {
		return nil, err
	}
	more := ""
	if page.More {
		more = moreLink(page.Statements[len(page.Statements)-1].Seq)
	}
	// The page is written statement by statement, not encoded into one
	// more buffer.
	write := func(w io.Writer) ([]string, error) {
		bw := bufio.NewWriterSize(w, 64<<10)
		bw.WriteString(`{"statements":[`)
		var hashes []string
		for i, st := range page.Statements {
			if i > 0 {
				bw.WriteByte(',')
			}
			bw.Write(st.Body)
			if withAttachments {
				hashes = attachmentHashes(hashes, st.Body)
			}
		}
		link, _ := json.Marshal(more)
		bw.WriteString(`],"more":`)
		bw.Write(link)
		bw.WriteByte('}')
		return hashes, bw.Flush()
	}
	if withAttachments {
		return s.withAttachments(t, consistent, write), nil
	}
	return &response{Body: func(hc huma.Context) {
		for k, v := range consistent {
			hc.SetHeader(k, v)
		}
		hc.SetHeader("Content-Type", "application/json")
		hc.SetStatus(http.StatusOK)
		write(hc.BodyWriter())
	}}, nil
}

// attachmentHashes adds the sha2 of the attachments a statement declares
// to hashes, once each.
func attachmentHashes(hashes []string, body json.RawMessage) []string {
	var st struct {
		Attachments []struct {
			SHA2 string `json:"sha2"`
		} `json:"attachments"`
	}
	json.Unmarshal(body, &st)
	for _, a := range st.Attachments {
		if sha := strings.ToLower(a.SHA2); !slices.Contains(hashes, sha) {
			hashes = append(hashes, sha)
		}
	}
	return hashes
}

// withAttachments answers multipart/mixed: the statements (as write
// writes them), then the content of every attachment they declare that
// the store holds, one at a time, straight to the response.
func (s *Service) withAttachments(t *platform.Tenant, headers map[string]string, write func(io.Writer) ([]string, error)) *response {
	return &response{Body: func(hc huma.Context) {
		mw := multipart.NewWriter(hc.BodyWriter())
		for k, v := range headers {
			hc.SetHeader(k, v)
		}
		hc.SetHeader("Content-Type", "multipart/mixed; boundary="+mw.Boundary())
		hc.SetStatus(http.StatusOK)
		part, _ := mw.CreatePart(textproto.MIMEHeader{"Content-Type": {"application/json"}})
		hashes, err := write(part)
		if err != nil {
			return
		}
		for _, sha := range hashes {
			at, ok, err := attachment(hc.Context(), t.DB, sha)
			if err != nil {
				// The status is sent: an unfinished multipart body tells
				// the client the answer is incomplete.
				slog.ErrorContext(hc.Context(), "lrs: attachment of an answer", "sha2", sha, "err", err)
				return
			}
			if !ok {
				continue
			}
			p, _ := mw.CreatePart(textproto.MIMEHeader{"Content-Type": {at.ContentType}, "Content-Transfer-Encoding": {"binary"},
				"X-Experience-API-Hash": {sha}})
			if _, err := p.Write(at.Body); err != nil {
				return
			}
		}
		mw.Close()
	}}
}

func boolParam(q url.Values, name string) (bool, error) {
	v := q.Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, bad("The %s parameter must be true or false.", name)
	}
	return b, nil
}

var queryParams = map[string]bool{"agent": true, "verb": true, "activity": true, "registration": true, "related_activities": true,
	"related_agents": true, "since": true, "until": true, "limit": true, "format": true, "attachments": true, "ascending": true, "cursor": true}

func filterOf(q url.Values) (Filter, error) {
	var f Filter
	for k := range q {
		if !queryParams[k] {
			return f, bad("The parameter %s is not a statement query parameter.", k)
		}
	}
	var err error
	if a := q.Get("agent"); a != "" {
		if f.AgentKey, _, err = AgentKey(a); err != nil {
			return f, err
		}
	}
	if v := q.Get("verb"); v != "" {
		if !isIRI(v) {
			return f, bad("The verb parameter must be an IRI.")
		}
		f.Verb = v
	}
	if v := q.Get("activity"); v != "" {
		if !isIRI(v) {
			return f, bad("The activity parameter must be an IRI.")
		}
		f.Activity = v
	}
	if v := q.Get("registration"); v != "" {
		if !IsUUID(v) {
			return f, bad("The registration parameter must be a UUID.")
		}
		f.Registration = strings.ToLower(v)
	}
	if f.RelatedActivities, err = boolParam(q, "related_activities"); err != nil {
		return f, err
	}
	if f.RelatedAgents, err = boolParam(q, "related_agents"); err != nil {
		return f, err
	}
	if f.Ascending, err = boolParam(q, "ascending"); err != nil {
		return f, err
	}
	for _, p := range []struct {
		name string
		dst  **time.Time
	}{{"since", &f.Since}, {"until", &f.Until}} {
		if v := q.Get(p.name); v != "" {
			ts, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return f, bad("The %s parameter must be an ISO 8601 time with its zone.", p.name)
			}
			ts = ts.UTC()
			*p.dst = &ts
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return f, bad("The limit must be a whole number, 0 for the most.")
		}
		f.Limit = n
	}
	if v := q.Get("cursor"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return f, bad("The cursor is not valid.")
		}
		f.After = n
	}
	return f, nil
}

// docKey reads a document's key from the query of its resource.
func docKey(q url.Values, kind string) (DocKey, error) {
	k := DocKey{Kind: kind}
	allowed := map[string]bool{}
	switch kind {
	case StateDoc:
		allowed = map[string]bool{"activityId": true, "agent": true, "registration": true, "stateId": true, "since": true}
		k.ID = q.Get("stateId")
	case ActivityDoc:
		allowed = map[string]bool{"activityId": true, "profileId": true, "since": true}
		k.ID = q.Get("profileId")
	case AgentDoc:
		allowed = map[string]bool{"agent": true, "profileId": true, "since": true}
		k.ID = q.Get("profileId")
	}
	for name := range q {
		if !allowed[name] {
			return k, bad("The parameter %s is not allowed here.", name)
		}
	}
	if kind != AgentDoc {
		k.ActivityID = q.Get("activityId")
		if !isIRI(k.ActivityID) {
			return k, bad("The activityId parameter must be an IRI.")
		}
	}
	if kind != ActivityDoc {
		key, _, err := AgentKey(q.Get("agent"))
		if err != nil {
			return k, err
		}
		k.AgentKey = key
	}
	if r := q.Get("registration"); r != "" {
		if !IsUUID(r) {
			return k, bad("The registration parameter must be a UUID.")
		}
		k.Registration = strings.ToLower(r)
	}
	return k, nil
}

func preconditions(h http.Header) Preconditions {
	return Preconditions{IfMatch: h.Get("If-Match"), IfNoneMatch: h.Get("If-None-Match")}
}

func (s *Service) getDocument(ctx context.Context, t *platform.Tenant, scope Scope, in *request, kind string) (*response, error) {
	k, err := docKey(in.query, kind)
	if err != nil {
		return nil, err
	}
	if k.ID == "" {
		var since *time.Time
		if v := in.query.Get("since"); v != "" {
			ts, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return nil, bad("The since parameter must be an ISO 8601 time with its zone.")
			}
			ts = ts.UTC()
			since = &ts
		}
		ids, err := s.DocumentIDs(ctx, t, scope, k, since)
		if err != nil {
			return nil, err
		}
		return jsonReply(http.StatusOK, ids, nil)
	}
	if in.query.Has("since") {
		return nil, bad("The since parameter lists documents; it cannot be combined with a document id.")
	}
	d, err := s.GetDocument(ctx, t, scope, k)
	if err != nil {
		return nil, err
	}
	return reply(http.StatusOK, d.ContentType, d.Body, map[string]string{"ETag": d.ETag,
		"Last-Modified": d.Updated.UTC().Format(http.TimeFormat)}), nil
}

func (s *Service) putDocument(ctx context.Context, t *platform.Tenant, scope Scope, in *request, kind string, merge bool) (*response, error) {
	k, err := docKey(in.query, kind)
	if err != nil {
		return nil, err
	}
	if k.ID == "" {
		return nil, bad("The document id (stateId or profileId) is required.")
	}
	if in.query.Has("since") {
		return nil, bad("The since parameter is for listing documents.")
	}
	ct := in.header.Get("Content-Type")
	if ct == "" {
		ct = "application/octet-stream"
	}
	if isJSON(ct) && !json.Valid(in.RawBody) {
		return nil, bad("The document is declared JSON but is not valid JSON.")
	}
	if err := s.PutDocument(ctx, t, scope, k, ct, in.RawBody, preconditions(in.header), merge); err != nil {
		return nil, err
	}
	return reply(http.StatusNoContent, "", nil, nil), nil
}

func (s *Service) deleteDocument(ctx context.Context, t *platform.Tenant, scope Scope, in *request, kind string) (*response, error) {
	k, err := docKey(in.query, kind)
	if err != nil {
		return nil, err
	}
	if k.ID == "" && kind != StateDoc {
		return nil, bad("The profileId is required.")
	}
	if err := s.DeleteDocument(ctx, t, scope, k, preconditions(in.header)); err != nil {
		return nil, err
	}
	return reply(http.StatusNoContent, "", nil, nil), nil
}

func (s *Service) getActivity(ctx context.Context, t *platform.Tenant, scope Scope, in *request) (*response, error) {
	id := in.query.Get("activityId")
	if !isIRI(id) {
		return nil, bad("The activityId parameter must be an IRI.")
	}
	def, err := activityDefinition(ctx, t.DB, id)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"objectType": "Activity", "id": id}
	if def != nil {
		out["definition"] = def
	}
	return jsonReply(http.StatusOK, out, nil)
}

func (s *Service) getPerson(ctx context.Context, t *platform.Tenant, scope Scope, in *request) (*response, error) {
	key, agent, err := AgentKey(in.query.Get("agent"))
	if err != nil {
		return nil, err
	}
	if !scope.Admin && key != scope.ActorKey {
		return nil, errForbidden
	}
	person := map[string]any{"objectType": "Person"}
	for _, k := range []string{"name", "mbox", "mbox_sha1sum", "openid", "account"} {
		if v, ok := agent[k]; ok {
			person[k] = []any{v}
		}
	}
	return jsonReply(http.StatusOK, person, nil)
}
