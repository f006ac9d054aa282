package scorm

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/kinds/scorm/manifest"
	"github.com/lms-platform/lms/internal/platform"
)

//go:embed player.html
var playerHTML string

//go:embed player.js
var playerJS []byte

var playerPage = template.Must(template.New("player").Parse(playerHTML))

// runtime is what the player page hands its script: where the SCO's files
// are, the model to load before the SCO starts, where to commit, and the
// table of contents with the navigation allowed now.
type runtime struct {
	Version     string         `json:"version"`
	Title       string         `json:"title"`
	SCO         string         `json:"sco"`
	SCOID       int64          `json:"sco_id"`
	Content     string         `json:"content"`
	TrackURL    string         `json:"track_url"`
	Token       string         `json:"token"`
	CMI         map[string]any `json:"cmi"`
	Contents    []Entry        `json:"contents"`
	Previous    bool           `json:"previous"`
	Continue    bool           `json:"continue"`
	Choice      bool           `json:"choice"`
	ScoItemIDs  []string       `json:"sco_item_ids"`
	Identifier  string         `json:"identifier"`
	ScormType   string         `json:"scorm_type"`
	PlayerBase  string         `json:"player_base"`
	TokenHeader string         `json:"token_header"`
}

// Player renders the player page of a launched session.
func (s *Service) Player(ctx context.Context, t *platform.Tenant, k ticket) ([]byte, error) {
	_, value, err := scormTopic(ctx, t, k.TopicID)
	if err != nil {
		return nil, err
	}
	pkg, err := loadPackage(ctx, t, value.PackageID)
	if err != nil {
		return nil, err
	}
	sco, ok := pkg.sco(k.SCOID)
	if !ok {
		return nil, errSCOMissing
	}
	tracks, err := tracksOfTopic(ctx, t.DB, k.TopicID, k.UserID)
	if err != nil {
		return nil, err
	}
	tr := tracks[k.SCOID]
	name, err := learnerName(ctx, t, k.UserID)
	if err != nil {
		return nil, err
	}
	entry := "ab-initio"
	if len(tr.CMI) > 0 {
		entry = "resume"
	}
	credit := "credit"
	if k.Preview {
		credit = "no-credit"
	}
	is2004 := manifest.Is2004(pkg.Version)
	state, globals, err := learnerState(ctx, t.DB, pkg, k.UserID, k.TopicID, k.SCOID)
	if err != nil {
		return nil, err
	}
	tree := newTree(pkg, state, globals)
	rt := runtime{Version: "1.2", Title: pkg.Title, SCO: sco.Item.Title, SCOID: sco.ID, Identifier: sco.Item.Identifier,
		ScormType: sco.Item.ScormType, Token: k.sign(t), TokenHeader: TokenHeader,
		TrackURL:   "/api/scorm/tracks/" + strconv.FormatInt(sco.ID, 10),
		PlayerBase: "/api/scorm/player/",
		Content:    s.contentURL(t, pkg, sco.Item.Launch),
		CMI:        initial(tr.CMI, is2004, sco.Item, strconv.FormatInt(k.UserID, 10), name, entry, credit, tr.BaseSeconds),
		Contents:   tree.contents()}
	if is2004 {
		rt.Version = "2004"
	}
	for _, l := range tree.leaves {
		rt.ScoItemIDs = append(rt.ScoItemIDs, l.item.Identifier)
	}
	_, errPrev := tree.step(sco.Item.Identifier, -1)
	_, errNext := tree.step(sco.Item.Identifier, 1)
	rt.Previous, rt.Continue = errPrev == nil, errNext == nil
	rt.Choice = len(tree.leaves) > 1
	data, err := json.Marshal(rt)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	err = playerPage.Execute(&b, map[string]any{"Title": pkg.Title + " – " + sco.Item.Title,
		"Runtime": template.JS(data), "Multi": len(tree.leaves) > 1})
	return []byte(b.String()), err
}

// contentURL is the signed address of a package file; the signature is a
// path prefix so that the SCO's relative links are signed too.
func (s *Service) contentURL(t *platform.Tenant, pkg storedPackage, launch string) string {
	// Rounded expiry: the links of one package made within an hour are
	// the same, so browsers cache its files.
	exp := (s.Clock.Now().Add(trackTokenTTL).Unix()/3600 + 1) * 3600
	return fmt.Sprintf("/api/scorm/content/%d/%d/%s/%s", pkg.ID, exp, filesSignature(t, pkg.ID, exp), launch)
}

// Stored is a track as its tracking routes read it back.
type Stored struct {
	Attempt    int            `json:"attempt"`
	Session    int            `json:"session"`
	Seq        int64          `json:"seq"`
	Completion string         `json:"completion_status"`
	Success    string         `json:"success_status"`
	Seconds    int64          `json:"seconds"`
	CMI        map[string]any `json:"cmi"`
}

// Stored reads the session's track back.
func (s *Service) Stored(ctx context.Context, t *platform.Tenant, k ticket) (Stored, error) {
	tr, err := trackOf(ctx, t.DB, k.TopicID, k.SCOID, k.UserID)
	if err != nil {
		return Stored{}, err
	}
	if tr == nil {
		return Stored{}, errSCOMissing
	}
	return Stored{Attempt: tr.Attempt, Session: tr.Session, Seq: tr.Seq, Completion: tr.Completion, Success: tr.Success,
		Seconds: tr.BaseSeconds + tr.SessionSeconds, CMI: tr.CMI}, nil
}

// serveContent sends a package file through a signed prefix link. The
// files run as the SCO, on this origin, so that the SCO reaches the
// runtime in its parent frame.
func (s *Service) serveContent(w http.ResponseWriter, r *http.Request, t *platform.Tenant, pkgID, expires int64, sig, name string) error {
	want := filesSignature(t, pkgID, expires)
	if len(sig) != len(want) || !strings.EqualFold(sig, want) {
		return apperr.New(apperr.Forbidden, "Invalid signature.")
	}
	if s.Clock.Now().Unix() >= expires {
		return apperr.New(apperr.Forbidden, "This link has expired.")
	}
	if dec, err := url.PathUnescape(name); err == nil {
		name = dec
	}
	if name == "" || strings.Contains(name, "..") || strings.HasPrefix(name, "/") {
		return apperr.New(apperr.NotFound, "File not found.")
	}
	prefix, err := packagePrefix(r.Context(), t, pkgID)
	if err != nil {
		return err
	}
	rc, info, err := t.Blob.Get(r.Context(), prefix+name)
	if errors.Is(err, blob.ErrNotFound) || errors.Is(err, blob.ErrInvalidKey) {
		return apperr.New(apperr.NotFound, "File not found.")
	}
	if err != nil {
		return fmt.Errorf("scorm: open %s: %w", name, err)
	}
	defer rc.Close()
	h := w.Header()
	h.Set("Content-Type", info.ContentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", fmt.Sprintf("private, max-age=%d", max(expires-s.Clock.Now().Unix(), 0)))
	h.Set("Referrer-Policy", "no-referrer")
	if rs, ok := rc.(io.ReadSeeker); ok {
		http.ServeContent(w, r, "", info.ModTime, rs)
		return nil
	}
	h.Set("Content-Length", strconv.FormatInt(info.Size, 10))
	if r.Method != http.MethodHead {
		_, _ = io.Copy(w, rc)
	}
	return nil
}

// packagePrefix reads a package's blob prefix, cached per tenant handle:
// a SCO loads dozens of files, and the prefix never changes.
func packagePrefix(ctx context.Context, t *platform.Tenant, id int64) (string, error) {
	cache := t.Local(prefixCacheKey{}, func() any { return &prefixCache{m: map[int64]string{}} }).(*prefixCache)
	if p, ok := cache.get(id); ok {
		return p, nil
	}
	var p string
	err := t.DB.QueryRowContext(ctx, `SELECT blob_prefix FROM scorm_packages WHERE id = $1`, id).Scan(&p)
	if err != nil {
		return "", errPackageMissing
	}
	cache.put(id, p)
	return p, nil
}

// runtimeFile serves the runtime scripts: scorm-again's build from
// PlayerDir and the player's own script.
func (s *Service) runtimeFile(w http.ResponseWriter, r *http.Request, name string) error {
	var data []byte
	switch name {
	case "player.js":
		data = playerJS
	case "scorm-again.min.js":
		var err error
		data, err = os.ReadFile(filepath.Join(s.PlayerDir, name))
		if err != nil {
			return apperr.New(apperr.Unavailable, "The SCORM runtime (scorm-again) is not installed; run make build.")
		}
	default:
		return apperr.New(apperr.NotFound, "File not found.")
	}
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, name, time.Time{}, strings.NewReader(string(data)))
	return nil
}
