package h5p

import (
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

// runtimeRoutes registers what the H5P player calls at run time: the play
// model, user states, results, and content and library files.
func (s *Service) runtimeRoutes(mux *http.ServeMux) {
	mux.Handle("GET /h5p/contents/{id}/play", s.user(http.HandlerFunc(s.play)))
	mux.Handle("GET /h5p/contentUserData/{contentId}/{dataType}/{subContentId}", s.user(http.HandlerFunc(s.loadUserData)))
	mux.Handle("POST /h5p/contentUserData/{contentId}/{dataType}/{subContentId}", s.user(http.HandlerFunc(s.saveUserData)))
	mux.Handle("GET /h5p/finishedData", s.user(http.HandlerFunc(s.loadResult)))
	mux.Handle("POST /h5p/finishedData", s.user(http.HandlerFunc(s.saveResult)))
	mux.Handle("GET /h5p/content/{id}/{file...}", s.user(http.HandlerFunc(s.contentFile)))
	mux.Handle("GET /h5p/libraries/{uber}/{file...}", s.user(http.HandlerFunc(s.libraryFile)))
	mux.Handle("GET /h5p/params/{id}", s.user(http.HandlerFunc(s.contentParams)))
}

// contentParams answers a content's parameters and metadata as the H5P
// editor and player fetch them. Anyone may read them, as the content.
func (s *Service) contentParams(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	c, ok := s.loadContent(w, r)
	if !ok {
		return
	}
	writeDataRaw(w, r, http.StatusOK, map[string]string{"library": c.MainLibrary + " " + c.LibraryVersion},
		rawField{"params", c.Parameters}, rawField{"metadata", string(c.Metadata)})
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

func contextID(r *http.Request) (string, error) {
	c := r.URL.Query().Get("contextId")
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
	ContentUserData string `json:"contentUserData"`
	SetFinished     string `json:"setFinished"`
}

// playModel is what the player page needs to run one content, but for
// the content's parameters and metadata, which are written as stored.
type playModel struct {
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
	SaveFreq any `json:"saveFreq"`
	// ContentUserData holds the preloaded states by sub-content id and
	// data type, the shape H5P core reads.
	ContentUserData map[string]map[string]string `json:"contentUserData"`
	ContextID       string                       `json:"contextId"`
	Language        string                       `json:"language"`
	ReadOnlyState   bool                         `json:"readOnlyState"`
}

func libraryURL(a h5pstore.Asset) string {
	segs := strings.Split(a.Path, "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	return "/h5p/libraries/" + url.PathEscape(a.Dir) + "/" + strings.Join(segs, "/")
}

func (s *Service) play(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	ctx := r.Context()
	t := httpx.TenantFrom(ctx)
	u := UserFrom(ctx)
	id, err := parseID(r.PathValue("id"), "id")
	if err != nil {
		writeError(w, r, err)
		return
	}
	q := r.URL.Query()
	ctxID, err := contextID(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	c, err := s.Store.Content(ctx, t, id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	readOnly := q.Get("readOnlyState") == "yes"
	stateUser, saves := stateUserID(u)
	if raw := q.Get("asUserId"); raw != "" {
		if !u.Can(string(access.H5PRead)) {
			writeError(w, r, apperr.New(apperr.Forbidden, "You may not view other users' state."))
			return
		}
		other, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || other <= 0 {
			writeError(w, r, apperr.Field("asUserId", "Must be a user id."))
			return
		}
		// Another user's state is shown, never overwritten.
		stateUser, saves, readOnly = other, false, true
	}
	scripts, styles, err := s.Store.ContentAssets(ctx, t, c)
	if err != nil {
		writeError(w, r, err)
		return
	}
	m := playModel{
		ContentID:       h5pstore.FormatID(c.ID),
		Title:           c.Title,
		Library:         c.MainLibrary + " " + c.LibraryVersion,
		Scripts:         []string{},
		Styles:          []string{},
		ContentURL:      "/h5p/content/" + h5pstore.FormatID(c.ID),
		User:            playUser{ID: u.ID, Name: u.Name, Mail: u.Email},
		SaveFreq:        false,
		ContentUserData: map[string]map[string]string{},
		ContextID:       ctxID,
		Language:        q.Get("language"),
		ReadOnlyState:   readOnly,
	}
	if m.Language == "" {
		m.Language = "en"
	}
	for _, a := range scripts {
		m.Scripts = append(m.Scripts, libraryURL(a))
	}
	for _, a := range styles {
		m.Styles = append(m.Styles, libraryURL(a))
	}
	if saves && !readOnly {
		m.SaveFreq = SaveFrequency
	}
	if stateUser > 0 {
		states, err := s.Store.PreloadedStates(ctx, t, id, stateUser, ctxID)
		if err != nil {
			writeError(w, r, err)
			return
		}
		for _, d := range states {
			sub := strconv.FormatInt(d.SubContentID, 10)
			if m.ContentUserData[sub] == nil {
				m.ContentUserData[sub] = map[string]string{}
			}
			m.ContentUserData[sub][d.DataType] = d.State
		}
	}
	// The H5P library makes its own AJAX calls and cannot send a header:
	// the token rides in _token, except behind the session proxy, which
	// adds the caller's credentials itself.
	extra := url.Values{}
	if ctxID != "" {
		extra.Set("contextId", ctxID)
	}
	if tok := bearerToken(r); tok != "" && r.Header.Get("X-Lms-Session-Proxy") != "1" {
		extra.Set("_token", tok)
	}
	m.Ajax.ContentUserData = "/h5p/contentUserData/:contentId/:dataType/:subContentId"
	m.Ajax.SetFinished = "/h5p/finishedData"
	if len(extra) > 0 {
		m.Ajax.ContentUserData += "?" + extra.Encode()
		extra.Del("contextId")
		if len(extra) > 0 {
			m.Ajax.SetFinished += "?" + extra.Encode()
		}
	}
	writeDataRaw(w, r, http.StatusOK, m, rawField{"params", c.Parameters}, rawField{"metadata", string(c.Metadata)})
}

// userDataKey reads the state's key from the path and query.
func userDataKey(r *http.Request, userID int64) (h5pstore.UserDataKey, error) {
	id, err := parseID(r.PathValue("contentId"), "contentId")
	if err != nil {
		return h5pstore.UserDataKey{}, err
	}
	dataType := r.PathValue("dataType")
	if dataType == "" || len(dataType) > 255 {
		return h5pstore.UserDataKey{}, apperr.Field("dataType", "Must be 1 to 255 characters.")
	}
	sub, err := strconv.ParseInt(r.PathValue("subContentId"), 10, 64)
	if err != nil || sub < 0 {
		return h5pstore.UserDataKey{}, apperr.Field("subContentId", "Must be a non-negative integer.")
	}
	ctxID, err := contextID(r)
	if err != nil {
		return h5pstore.UserDataKey{}, err
	}
	return h5pstore.UserDataKey{ContentID: id, UserID: userID, DataType: dataType, SubContentID: sub, ContextID: ctxID}, nil
}

func (s *Service) loadUserData(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	ctx := r.Context()
	userID, ok := stateUserID(UserFrom(ctx))
	k, err := userDataKey(r, userID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if !ok {
		// Anonymous callers have a state that is always empty.
		writeData(w, http.StatusOK, false)
		return
	}
	d, found, err := s.Store.UserState(ctx, httpx.TenantFrom(ctx), k)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if !found {
		writeData(w, http.StatusOK, false)
		return
	}
	writeData(w, http.StatusOK, d.State)
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

func (s *Service) saveUserData(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	ctx := r.Context()
	t := httpx.TenantFrom(ctx)
	userID, ok := stateUserID(UserFrom(ctx))
	if !ok {
		writeError(w, r, errNoStateUser)
		return
	}
	k, err := userDataKey(r, userID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	// The state comes form-encoded, which may triple its size.
	maxState := s.Store.Settings().MaxStateSize
	f, err := formValues(w, r, 3*maxState+multipartSlack, h5pstore.StateTooLarge(maxState))
	if err != nil {
		writeError(w, r, err)
		return
	}
	data, has := f["data"]
	if !has {
		writeError(w, r, apperr.Field("data", "Required."))
		return
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
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, nil)
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

func (s *Service) loadResult(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	ctx := r.Context()
	id, err := parseID(r.URL.Query().Get("contentId"), "contentId")
	if err != nil {
		writeError(w, r, err)
		return
	}
	userID, ok := stateUserID(UserFrom(ctx))
	if !ok {
		writeData(w, http.StatusOK, nil)
		return
	}
	res, found, err := s.Store.Result(ctx, httpx.TenantFrom(ctx), id, userID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if !found {
		writeData(w, http.StatusOK, nil)
		return
	}
	writeData(w, http.StatusOK, resultView{ContentID: h5pstore.FormatID(res.ContentID),
		UserID: strconv.FormatInt(res.UserID, 10), Score: res.Score, MaxScore: res.MaxScore,
		Opened: unixOrZero(res.OpenedAt), Finished: unixOrZero(res.FinishedAt), Time: res.CompletionTime})
}

func (s *Service) saveResult(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	ctx := r.Context()
	t := httpx.TenantFrom(ctx)
	userID, ok := stateUserID(UserFrom(ctx))
	if !ok {
		writeError(w, r, errNoStateUser)
		return
	}
	f, err := formValues(w, r, maxResultBody, apperr.New(apperr.TooLarge, "The body is too large."))
	if err != nil {
		writeError(w, r, err)
		return
	}
	id, err := parseID(f["contentId"], "contentId")
	if err == nil {
		err = UserFrom(ctx).confined(id)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	nums := map[string]int64{}
	for _, name := range []string{"score", "maxScore", "opened", "finished", "time"} {
		v := strings.TrimSpace(f[name])
		if v == "" {
			continue
		}
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || n < 0 || n > 1<<53 {
			writeError(w, r, apperr.Field(name, "Must be a non-negative number."))
			return
		}
		nums[name] = int64(n)
	}
	res := h5pstore.Result{ContentID: id, UserID: userID, Score: nums["score"], MaxScore: nums["maxScore"],
		CompletionTime: nums["time"]}
	if v := nums["opened"]; v > 0 {
		res.OpenedAt = time.Unix(v, 0).UTC()
	}
	if v := nums["finished"]; v > 0 {
		res.FinishedAt = time.Unix(v, 0).UTC()
	}
	if err := s.Store.SaveResult(ctx, t, res); err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, nil)
}

var errFileNotFound = apperr.New(apperr.NotFound, "File not found.")

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
