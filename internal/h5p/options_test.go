package h5p_test

import (
	"net/http/httptest"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/h5p"
	"github.com/lms-platform/lms/internal/httpx"
)

// withOptions builds a second H5P service over env's tenants, cache and
// store, as the server builds its own but for what change edits in the
// options, and returns a copy of env whose requests reach that service.
func withOptions(t *testing.T, env *apitest.Env, change func(*h5p.Options)) *apitest.Env {
	t.Helper()
	s := env.Server
	opts := h5p.Options{Tenants: s.Tenants, Cache: s.Cache, Redis: s.Redis, Clock: s.Clock, Log: s.Log,
		Scanner: s.Scanner, InternalKey: s.Config.InternalKey, TrustProxy: s.Config.TrustProxy,
		APIURL: env.HTTP.URL, Store: s.H5P.Store, CoreDir: s.Config.H5PCoreDir,
		EditorDir: s.Config.H5PEditorDir, EmbedOrigins: s.Config.H5PEmbedOrigins}
	change(&opts)
	srv := httptest.NewServer(httpx.Observe(opts.Log, opts.TrustProxy)(h5p.New(opts).Handler()))
	t.Cleanup(srv.Close)
	alt := *env
	alt.HTTP = srv
	return &alt
}
