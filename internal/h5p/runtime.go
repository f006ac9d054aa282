package h5p

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/h5p/h5pstore"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/platform"
)

// SaveFrequency is how often (seconds) the player saves its state.
const SaveFrequency = 5

// maxResultBody bounds the body of a result save.
const maxResultBody = 64 << 10

// maxContextID bounds the length of a context id.
const maxContextID = 255

var errNoStateUser = apperr.New(apperr.Unauthorized, "Log in to save your progress.")

// runtimeRoutes registers what the H5P player calls at run time as
// operations of api, whose answers are never stored: the play model, the
// content parameters, user states and results.
func (s *Service) runtimeRoutes(api huma.API) {
	anyone := func(method, path, summary string) httpx.Route {
		return httpx.Route{Method: method, Path: path, Summary: summary, Tags: h5pTags, Who: httpx.Anyone,
			Scope: scopeOf(method)}
	}
	user := func(method, path, summary string) httpx.Route {
		return httpx.Route{Method: method, Path: path, Summary: summary, Tags: h5pTags, Who: httpx.User,
			Scope: scopeOf(method)}
	}
	httpx.Handle(api, anyone("GET", "/h5p/contents/{id}/play",
		"Get the player model of a content (another user's state with h5p_read)"), s.play)
	describe(api, "GET", "/h5p/contents/{id}/play", jsonAnswer[playAnswer])
	httpx.Handle(api, anyone("GET", "/h5p/params/{id}", "Get a content's parameters and metadata for the player and editor"),
		s.contentParams)
	describe(api, "GET", "/h5p/params/{id}", jsonAnswer[paramsAnswer])
	stateRoute := "/h5p/contentUserData/{contentId}/{dataType}/{subContentId}"
	httpx.Handle(api, anyone("GET", stateRoute, "Get the caller's saved state of a content (false when none)"),
		s.loadUserData)
	httpx.Handle(api, user("POST", stateRoute, "Save or delete (data=0) the caller's state of a content"), s.saveUserData)
	describe(api, "POST", stateRoute, func(op *huma.Operation, schema func(any) *huma.Schema) {
		op.RequestBody = formBody(schema(stateForm{}))
	})
	httpx.Handle(api, anyone("GET", "/h5p/finishedData", "Get the caller's result of a content (null when none)"),
		s.loadResult)
	httpx.Handle(api, user("POST", "/h5p/finishedData", "Save the caller's result of a content"), s.saveResult)
	describe(api, "POST", "/h5p/finishedData", func(op *huma.Operation, schema func(any) *huma.Schema) {
		op.RequestBody = formBody(schema(resultForm{}))
	})
}

// contentParams answers a content's parameters and metadata as the H5P
// editor and player fetch them. Anyone may read them, as the content.
func (s *Service) contentParams(ctx context.Context, in *contentPath) (*huma.StreamResponse, error) {
	c, err := s.content(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	return rawAnswer(ctx, map[string]string{"library": c.MainLibrary + " " + c.LibraryVersion},
		rawField{"params", c.Parameters}, rawField{"metadata", string(c.Metadata)}), nil
}

// paramsAnswer describes the data of GET /h5p/params/{id}.
type paramsAnswer struct {
	Library  string          `json:"library" doc:"The main library, as H5P.Foo 1.2."`
	Params   json.RawMessage `json:"params" doc:"The content parameters (content.json)."`
	Metadata json.RawMessage `json:"metadata" doc:"The package descriptor (h5p.json)."`
}

// stateUserID is the numeric id of a user whose states are kept; ok is
// false for anonymous callers and the system user.
func stateUserID(u *User) (int64, bool) {
	if !u.LoggedIn() {
		return 0, false
	}
	id, err := strconv.ParseInt(u.ID, 10, 64)
	return id, err == nil && id > 0
}

func parseID(raw, field string) (int64, error) {
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return 0, apperr.New(apperr.NotFound, "Content not found.")
	}
	return id, nil
}

// checkContextID refuses a context id longer than maxContextID.
func checkContextID(c string) (string, error) {
	if len(c) > maxContextID {
		return "", apperr.Field("contextId", fmt.Sprintf("Must be at most %d characters.", maxContextID))
	}
	return c, nil
}

type playUser struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Mail string `json:"mail"`
}

type playAjax struct {
	ContentUserData string `json:"contentUserData" doc:"The state route, with :contentId, :dataType and :subContentId to fill in."`
	SetFinished     string `json:"setFinished" doc:"The result route."`
}

// PlayModel is what the player page needs to run one content, but for
// the content's parameters and metadata, which are written as stored. It
// is exported because huma leaves an unexported embedded struct's fields
// out of the schemas of the answers embedding it (playAnswer).
type PlayModel struct {
	ContentID  string   `json:"contentId"`
	Title      string   `json:"title"`
	Library    string   `json:"library"`
	Scripts    []string `json:"scripts"`
	Styles     []string `json:"styles"`
	ContentURL string   `json:"contentUrl"`
	Ajax       playAjax `json:"ajax"`
	User       playUser `json:"user"`
	// SaveFreq is the seconds between state saves, or false when the
	// state is not saved (anonymous, read-only or another user's state).
	SaveFreq any `json:"saveFreq" doc:"Seconds between state saves, or false when the state is not saved."`
	// ContentUserData holds the preloaded states by sub-content id and
	// data type, the shape H5P core reads.
	ContentUserData map[string]map[string]string `json:"contentUserData" doc:"Preloaded states by sub-content id and data type."`
	ContextID       string                       `json:"contextId"`
	Language        string                       `json:"language"`
	ReadOnlyState   bool                         `json:"readOnlyState"`
}

// playAnswer describes the data of GET /h5p/contents/{id}/play: the
// model with the stored parameters and metadata.
type playAnswer struct {
	PlayModel
	Params   json.RawMessage `json:"params" doc:"The content parameters (content.json)."`
	Metadata json.RawMessage `json:"metadata" doc:"The package descriptor (h5p.json)."`
}

func libraryURL(a h5pstore.Asset) string {
	segs := strings.Split(a.Path, "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	return "/h5p/libraries/" + url.PathEscape(a.Dir) + "/" + strings.Join(segs, "/")
}

// libraryURLs are the URLs of a content's scripts or styles.
func libraryURLs(assets []h5pstore.Asset) []string {
	out := []string{}
	for _, a := range assets {
		out = append(out, libraryURL(a))
	}
	return out
}

type playInput struct {
	ID            string `path:"id" doc:"Content id."`
	ContextID     string `query:"contextId" doc:"The context the state belongs to (at most 255 characters)."`
	AsUserID      string `query:"asUserId" doc:"Show this user's state, read-only (h5p_read)."`
	ReadOnlyState string `query:"readOnlyState" doc:"yes: the state is shown but not saved."`
	Language      string `query:"language" doc:"The player's language; en when not given."`
	Raw           rawRequest
}

// play answers the player model of a content with the state of the caller,
// or of the user asUserId names.
func (s *Service) play(ctx context.Context, in *playInput) (*huma.StreamResponse, error) {
	t, u := httpx.TenantFrom(ctx), UserFrom(ctx)
	id, err := parseID(in.ID, "id")
	if err != nil {
		return nil, err
	}
	ctxID, err := checkContextID(in.ContextID)
	if err != nil {
		return nil, err
	}
	c, err := s.Store.Content(ctx, t, id)
	if err != nil {
		return nil, err
	}
	v, err := viewOf(u, in.AsUserID, in.ReadOnlyState == "yes")
	if err != nil {
		return nil, err
	}
	m, err := s.playModel(ctx, t, c, u, v, ctxID, cmp.Or(in.Language, "en"))
	if err != nil {
		return nil, err
	}
	m.Ajax = ajaxURLs(ctxID, ajaxToken(in.Raw.r))
	return rawAnswer(ctx, m, rawField{"params", c.Parameters}, rawField{"metadata", string(c.Metadata)}), nil
}

// stateView is whose state a play shows and whether the player saves it.
type stateView struct {
	userID   int64 // none when not positive
	saves    bool
	readOnly bool
}

// viewOf is the caller's own state; with asUserID another user's, shown
// and never overwritten, which needs h5p_read.
func viewOf(u *User, asUserID string, readOnly bool) (stateView, error) {
	own, saves := stateUserID(u)
	if asUserID == "" {
		return stateView{userID: own, saves: saves, readOnly: readOnly}, nil
	}
	if !u.Can(string(access.H5PRead)) {
		return stateView{}, apperr.New(apperr.Forbidden, "You may not view other users' state.")
	}
	other, err := strconv.ParseInt(asUserID, 10, 64)
	if err != nil || other <= 0 {
		return stateView{}, apperr.Field("asUserId", "Must be a user id.")
	}
	return stateView{userID: other, readOnly: true}, nil
}

// playModel is the model of content c played by u with the state v.
func (s *Service) playModel(ctx context.Context, t *platform.Tenant, c h5pstore.Content, u *User, v stateView, ctxID, language string) (PlayModel, error) {
	scripts, styles, err := s.Store.ContentAssets(ctx, t, c)
	if err != nil {
		return PlayModel{}, err
	}
	states, err := s.preloadedStates(ctx, t, c.ID, v.userID, ctxID)
	if err != nil {
		return PlayModel{}, err
	}
	m := PlayModel{
		ContentID:       h5pstore.FormatID(c.ID),
		Title:           c.Title,
		Library:         c.MainLibrary + " " + c.LibraryVersion,
		Scripts:         libraryURLs(scripts),
		Styles:          libraryURLs(styles),
		ContentURL:      "/h5p/content/" + h5pstore.FormatID(c.ID),
		User:            playUser{ID: u.ID, Name: u.Name, Mail: u.Email},
		SaveFreq:        false,
		ContentUserData: states,
		ContextID:       ctxID,
		Language:        language,
		ReadOnlyState:   v.readOnly,
	}
	if v.saves && !v.readOnly {
		m.SaveFreq = SaveFrequency
	}
	return m, nil
}

// preloadedStates are the user's states the player gets with the model,
// by sub-content id and data type; none for no user.
func (s *Service) preloadedStates(ctx context.Context, t *platform.Tenant, contentID, userID int64, ctxID string) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	if userID <= 0 {
		return out, nil
	}
	states, err := s.Store.PreloadedStates(ctx, t, contentID, userID, ctxID)
	if err != nil {
		return nil, err
	}
	for _, d := range states {
		sub := strconv.FormatInt(d.SubContentID, 10)
		if out[sub] == nil {
			out[sub] = map[string]string{}
		}
		out[sub][d.DataType] = d.State
	}
	return out, nil
}

// ajaxToken is the token the H5P library's own AJAX calls carry in
// _token, as they cannot send a header; none behind the session proxy,
// which adds the caller's credentials itself.
func ajaxToken(r *http.Request) string {
	if r.Header.Get("X-Lms-Session-Proxy") == "1" {
		return ""
	}
	return bearerToken(r)
}

// ajaxURLs are the state and result routes the player calls, with the
// context id (states only) and the token in the query.
func ajaxURLs(ctxID, token string) playAjax {
	a := playAjax{ContentUserData: "/h5p/contentUserData/:contentId/:dataType/:subContentId",
		SetFinished: "/h5p/finishedData"}
	extra := url.Values{}
	if ctxID != "" {
		extra.Set("contextId", ctxID)
	}
	if token != "" {
		extra.Set("_token", token)
	}
	if len(extra) > 0 {
		a.ContentUserData += "?" + extra.Encode()
		extra.Del("contextId")
		if len(extra) > 0 {
			a.SetFinished += "?" + extra.Encode()
		}
	}
	return a
}

// userDataInput names a state in the path and query.
type userDataInput struct {
	ContentID    string `path:"contentId" doc:"Content id."`
	DataType     string `path:"dataType" doc:"The state's kind (state, ...), 1 to 255 characters."`
	SubContentID string `path:"subContentId" doc:"Sub-content id; 0 for the content itself."`
	ContextID    string `query:"contextId" doc:"The context the state belongs to (at most 255 characters)."`
	// Raw is the request of a save, whose form body is read as it comes.
	Raw rawRequest
}

// key is the state's key for the user.
func (in *userDataInput) key(userID int64) (h5pstore.UserDataKey, error) {
	id, err := parseID(in.ContentID, "contentId")
	if err != nil {
		return h5pstore.UserDataKey{}, err
	}
	if in.DataType == "" || len(in.DataType) > 255 {
		return h5pstore.UserDataKey{}, apperr.Field("dataType", "Must be 1 to 255 characters.")
	}
	sub, err := strconv.ParseInt(in.SubContentID, 10, 64)
	if err != nil || sub < 0 {
		return h5pstore.UserDataKey{}, apperr.Field("subContentId", "Must be a non-negative integer.")
	}
	ctxID, err := checkContextID(in.ContextID)
	if err != nil {
		return h5pstore.UserDataKey{}, err
	}
	return h5pstore.UserDataKey{ContentID: id, UserID: userID, DataType: in.DataType, SubContentID: sub,
		ContextID: ctxID}, nil
}

// loadUserData answers the caller's state: the stored text, or false when
// there is none (always for anonymous callers).
func (s *Service) loadUserData(ctx context.Context, in *userDataInput) (*ajaxAnswer[any], error) {
	userID, ok := stateUserID(UserFrom(ctx))
	k, err := in.key(userID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return ajaxOK[any](false)
	}
	d, found, err := s.Store.UserState(ctx, httpx.TenantFrom(ctx), k)
	if err != nil {
		return nil, err
	}
	if !found {
		return ajaxOK[any](false)
	}
	return ajaxOK[any](d.State)
}

// formValues reads a urlencoded, multipart or JSON object body of at most
// limit bytes as strings; tooLarge is the answer to a longer one.
func formValues(w http.ResponseWriter, r *http.Request, limit int64, tooLarge error) (map[string]string, error) {
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	out := map[string]string{}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var mbe *http.MaxBytesError
	if ct == "application/json" {
		var raw map[string]any
		if err := json.NewDecoder(r.Body).Decode(&raw); errors.As(err, &mbe) {
			return nil, tooLarge
		} else if err != nil {
			return nil, apperr.New(apperr.BadRequest, "The body is not a JSON object.")
		}
		for k, v := range raw {
			switch x := v.(type) {
			case string:
				out[k] = x
			case bool:
				out[k] = map[bool]string{true: "1", false: "0"}[x]
			case nil:
			case float64:
				out[k] = strconv.FormatFloat(x, 'f', -1, 64)
			default:
				b, _ := json.Marshal(x)
				out[k] = string(b)
			}
		}
		return out, nil
	}
	var err error
	if ct == "multipart/form-data" {
		err = r.ParseMultipartForm(1 << 20)
	} else {
		err = r.ParseForm()
	}
	if errors.As(err, &mbe) {
		return nil, tooLarge
	}
	if err != nil {
		return nil, apperr.New(apperr.BadRequest, "The form cannot be read.")
	}
	for k := range r.PostForm {
		out[k] = r.PostForm.Get(k)
	}
	return out, nil
}

func flag(v string) bool { return v == "1" || v == "true" }

// stateForm describes the body of a state save.
type stateForm struct {
	Data       string `json:"data" required:"true" doc:"The state; 0 deletes it."`
	Preload    string `json:"preload,omitempty" doc:"1: the state comes with the play model."`
	Invalidate string `json:"invalidate,omitempty" doc:"1: the state is dropped when the content changes."`
}

// saveUserData saves the caller's state, or deletes it when data is 0.
func (s *Service) saveUserData(ctx context.Context, in *userDataInput) (*ajaxAnswer[*httpx.Empty], error) {
	t := httpx.TenantFrom(ctx)
	userID, ok := stateUserID(UserFrom(ctx))
	if !ok {
		return nil, errNoStateUser
	}
	k, err := in.key(userID)
	if err != nil {
		return nil, err
	}
	// The state comes form-encoded, which may triple its size.
	maxState := s.Store.Settings().MaxStateSize
	f, err := formValues(in.Raw.w, in.Raw.r, 3*maxState+multipartSlack, h5pstore.StateTooLarge(maxState))
	if err != nil {
		return nil, err
	}
	data, has := f["data"]
	if !has {
		return nil, apperr.Field("data", "Required.")
	}
	// The store refuses a state of unknown content by its foreign key,
	// which spares the hottest write of the player a lookup.
	if data == "0" {
		err = s.Store.DeleteUserState(ctx, t, k)
	} else {
		err = s.Store.SaveUserState(ctx, t, h5pstore.UserData{ContentID: k.ContentID, UserID: k.UserID,
			DataType: k.DataType, SubContentID: k.SubContentID, ContextID: k.ContextID, State: data,
			Preload: flag(f["preload"]), Invalidate: flag(f["invalidate"])})
	}
	if err != nil {
		return nil, err
	}
	return ajaxOK[*httpx.Empty](nil)
}

// resultView is a result as the API shows it; times are unix seconds (0:
// unknown).
type resultView struct {
	ContentID string `json:"contentId"`
	UserID    string `json:"userId"`
	Score     int64  `json:"score"`
	MaxScore  int64  `json:"maxScore"`
	Opened    int64  `json:"opened"`
	Finished  int64  `json:"finished"`
	Time      int64  `json:"time"`
}

func unixOrZero(v time.Time) int64 {
	if v.IsZero() {
		return 0
	}
	return v.Unix()
}

type resultQuery struct {
	ContentID string `query:"contentId" doc:"Content id."`
}

// loadResult answers the caller's result of a content; null when there is
// none (always for anonymous callers).
func (s *Service) loadResult(ctx context.Context, in *resultQuery) (*ajaxAnswer[*resultView], error) {
	id, err := parseID(in.ContentID, "contentId")
	if err != nil {
		return nil, err
	}
	userID, ok := stateUserID(UserFrom(ctx))
	if !ok {
		return ajaxOK[*resultView](nil)
	}
	res, found, err := s.Store.Result(ctx, httpx.TenantFrom(ctx), id, userID)
	if err != nil {
		return nil, err
	}
	if !found {
		return ajaxOK[*resultView](nil)
	}
	return ajaxOK(&resultView{ContentID: h5pstore.FormatID(res.ContentID),
		UserID: strconv.FormatInt(res.UserID, 10), Score: res.Score, MaxScore: res.MaxScore,
		Opened: unixOrZero(res.OpenedAt), Finished: unixOrZero(res.FinishedAt), Time: res.CompletionTime})
}

// resultForm describes the body of a result save.
type resultForm struct {
	ContentID string `json:"contentId" required:"true" doc:"Content id."`
	Score     string `json:"score,omitempty" doc:"A non-negative number."`
	MaxScore  string `json:"maxScore,omitempty" doc:"A non-negative number."`
	Opened    string `json:"opened,omitempty" doc:"When the content was opened, in unix seconds."`
	Finished  string `json:"finished,omitempty" doc:"When it was finished, in unix seconds."`
	Time      string `json:"time,omitempty" doc:"Seconds spent."`
}

// saveResult saves the caller's result of the content the body names.
func (s *Service) saveResult(ctx context.Context, in *uploadInput) (*ajaxAnswer[*httpx.Empty], error) {
	userID, ok := stateUserID(UserFrom(ctx))
	if !ok {
		return nil, errNoStateUser
	}
	f, err := formValues(in.Raw.w, in.Raw.r, maxResultBody, apperr.New(apperr.TooLarge, "The body is too large."))
	if err != nil {
		return nil, err
	}
	id, err := parseID(f["contentId"], "contentId")
	if err == nil {
		err = UserFrom(ctx).confined(id)
	}
	if err != nil {
		return nil, err
	}
	res, err := resultOf(f, id, userID)
	if err != nil {
		return nil, err
	}
	if err := s.Store.SaveResult(ctx, httpx.TenantFrom(ctx), res); err != nil {
		return nil, err
	}
	return ajaxOK[*httpx.Empty](nil)
}

// resultOf reads the result's numbers from the form; those not given are
// 0, times of 0 unknown.
func resultOf(f map[string]string, contentID, userID int64) (h5pstore.Result, error) {
	nums := map[string]int64{}
	for _, name := range []string{"score", "maxScore", "opened", "finished", "time"} {
		v := strings.TrimSpace(f[name])
		if v == "" {
			continue
		}
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || n < 0 || n > 1<<53 {
			return h5pstore.Result{}, apperr.Field(name, "Must be a non-negative number.")
		}
		nums[name] = int64(n)
	}
	res := h5pstore.Result{ContentID: contentID, UserID: userID, Score: nums["score"], MaxScore: nums["maxScore"],
		CompletionTime: nums["time"]}
	if v := nums["opened"]; v > 0 {
		res.OpenedAt = time.Unix(v, 0).UTC()
	}
	if v := nums["finished"]; v > 0 {
		res.FinishedAt = time.Unix(v, 0).UTC()
	}
	return res, nil
}

var errFileNotFound = apperr.New(apperr.NotFound, "File not found.")

// fileRoutes registers the files the player loads: a content's files and
// the libraries'.
func (s *Service) fileRoutes(mux *http.ServeMux) {
	mux.Handle("GET /h5p/content/{id}/{file...}", s.user(http.HandlerFunc(s.contentFile)))
	mux.Handle("GET /h5p/libraries/{uber}/{file...}", s.user(http.HandlerFunc(s.libraryFile)))
}

// safeFile checks a file path taken from a URL: relative, no "." or ".."
// segment, no empty segment, no backslash.
func safeFile(p string) bool {
	if p == "" || strings.ContainsAny(p, "\\\x00") {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

func (s *Service) contentFile(w http.ResponseWriter, r *http.Request) {
	id, err := parseID(r.PathValue("id"), "id")
	if err != nil {
		writeError(w, r, errFileNotFound)
		return
	}
	s.serveFile(w, r, "h5p/content/"+h5pstore.FormatID(id)+"/", r.PathValue("file"), "public, max-age=60")
}

// libraryFile serves a file of the installed patch version of a library:
// the library's row names the folder, so a patch update switches every
// file at once.
func (s *Service) libraryFile(w http.ResponseWriter, r *http.Request) {
	uber := r.PathValue("uber")
	if !safeFile(uber) || strings.Contains(uber, "/") {
		writeError(w, r, apperr.New(apperr.BadRequest, "Invalid path."))
		return
	}
	machine, major, minor, ok := parseUber(uber)
	if !ok {
		writeError(w, r, errFileNotFound)
		return
	}
	resolve := func() (string, error) {
		return s.Store.LibraryFilesPrefix(r.Context(), httpx.TenantFrom(r.Context()), machine, major, minor)
	}
	prefix, err := resolve()
	if apperr.Is(err, apperr.NotFound) {
		err = errFileNotFound
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	// A patch update may switch the row and delete the folder just read;
	// the file is then looked up once more in the new folder.
	again := func() (string, bool) {
		p, err := resolve()
		return p, err == nil
	}
	s.serveFileOr(w, r, prefix, r.PathValue("file"), "public, max-age=3600", again)
}

// fileType is the Content-Type of a file served to the player.
func fileType(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".json":
		return "application/json"
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	}
	if ct := mime.TypeByExtension(path.Ext(name)); ct != "" {
		return ct
	}
	return "application/octet-stream"
}

// serveFile streams the blob prefix+file with Range support.
func (s *Service) serveFile(w http.ResponseWriter, r *http.Request, prefix, file, cacheControl string) {
	s.serveFileOr(w, r, prefix, file, cacheControl, nil)
}

// serveFileOr is serveFile with a second chance: when the file is missing
// under prefix, again (if not nil) may name another prefix to try once.
func (s *Service) serveFileOr(w http.ResponseWriter, r *http.Request, prefix, file, cacheControl string, again func() (string, bool)) {
	if !safeFile(file) {
		writeError(w, r, apperr.New(apperr.BadRequest, "Invalid path."))
		return
	}
	ctx := r.Context()
	t := httpx.TenantFrom(ctx)
	key := prefix + file
	rc, info, err := t.Blob.Get(ctx, key)
	if errors.Is(err, blob.ErrNotFound) && again != nil {
		if next, ok := again(); ok && next != prefix {
			key = next + file
			rc, info, err = t.Blob.Get(ctx, key)
		}
	}
	if errors.Is(err, blob.ErrNotFound) || errors.Is(err, blob.ErrInvalidKey) {
		writeError(w, r, errFileNotFound)
		return
	}
	if err != nil {
		writeError(w, r, fmt.Errorf("h5p: open %s: %w", key, err))
		return
	}
	rs, ok := rc.(io.ReadSeeker)
	if !ok {
		rs = &blobSeeker{ctx: ctx, t: t, key: key, size: info.Size, body: rc}
	}
	defer func() {
		if c, ok := rs.(io.Closer); ok {
			c.Close()
		} else {
			rc.Close()
		}
	}()
	h := w.Header()
	ct := fileType(file)
	h.Set("Content-Type", ct)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", cacheControl)
	if ct == "image/svg+xml" || strings.HasPrefix(ct, "text/html") {
		// Opened on its own, a content file must not run anything.
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox")
	}
	http.ServeContent(w, r, "", info.ModTime, rs)
}

// blobSeeker makes a blob seekable for http.ServeContent when the store's
// reader is not: a seek moves the position only, and a read away from the
// open reader's position opens a ranged read there.
type blobSeeker struct {
	ctx     context.Context
	t       *platform.Tenant
	key     string
	size    int64
	pos     int64
	body    io.ReadCloser
	bodyPos int64
}

func (b *blobSeeker) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += b.pos
	case io.SeekEnd:
		offset += b.size
	default:
		return 0, errors.New("h5p: bad whence")
	}
	if offset < 0 {
		return 0, errors.New("h5p: negative position")
	}
	b.pos = offset
	return offset, nil
}

func (b *blobSeeker) Read(p []byte) (int, error) {
	if b.pos >= b.size {
		return 0, io.EOF
	}
	if b.body == nil || b.bodyPos != b.pos {
		if b.body != nil {
			b.body.Close()
		}
		rc, err := blob.GetRange(b.ctx, b.t.Blob, b.key, b.pos, b.size-b.pos)
		if err != nil {
			b.body = nil
			return 0, err
		}
		b.body, b.bodyPos = rc, b.pos
	}
	n, err := b.body.Read(p)
	b.pos += int64(n)
	b.bodyPos = b.pos
	return n, err
}

func (b *blobSeeker) Close() error {
	if b.body == nil {
		return nil
	}
	return b.body.Close()
}
