package web

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed assets
var assetFS embed.FS

var (
	assetRoot, _ = fs.Sub(assetFS, "assets")
	assetFiles   = http.FileServerFS(assetRoot)
	// assetVersion changes whenever an asset does; pages link assets with
	// it so browsers may keep them for a long time.
	assetVersion = hashAssets()
)

func hashAssets() string {
	sum := sha256.New()
	fs.WalkDir(assetRoot, ".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := fs.ReadFile(assetRoot, path)
			sum.Write([]byte(path))
			sum.Write(b)
		}
		return nil
	})
	return hex.EncodeToString(sum.Sum(nil))[:12]
}

// assets serves the stylesheet and the script.
func (h *Handler) assets(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/assets/")
	if name == "" || strings.HasSuffix(name, "/") {
		h.notFound(w, r)
		return
	}
	if r.URL.Query().Get("v") == assetVersion {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "public, max-age=300")
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path = "/" + name
	assetFiles.ServeHTTP(w, r2)
}

// favicon answers the address browsers ask for an icon of their own
// accord (pages that do not link one, bookmarks, feeds) with the icon the
// pages link.
func (h *Handler) favicon(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=86400")
	w.Header().Set("Content-Type", "image/svg+xml")
	b, _ := fs.ReadFile(assetRoot, "favicon.svg")
	w.Write(b)
}

// hlsPlayer serves hls.js, pinned in package.json, for browsers that play
// HLS only through Media Source Extensions (app.js loads it on demand).
func (h *Handler) hlsPlayer(w http.ResponseWriter, r *http.Request) {
	if h.opts.HLSPlayer == "" {
		h.notFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=86400")
	http.ServeFile(w, r, h.opts.HLSPlayer)
}
