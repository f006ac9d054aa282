// Package lmsctltest holds what the tests of lmsctl's commands and of its
// MCP tools share to author a course of every topic type: a server that
// can make every type, and the local files the uploads send.
package lmsctltest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/kinds/interactive/interactivetest"
	"github.com/lms-platform/lms/internal/media"
)

// Server starts the harness on backend with what every topic type needs:
// outbound fetches may reach this machine (where OEmbedPage's provider
// listens) and the job queue runs (videos are transcoded).
func Server(t *testing.T, backend string) *apitest.Env {
	t.Helper()
	env := apitest.New(t, backend, apitest.Options{Configure: func(c *config.Config) { c.FetchAllowPrivate = true }})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); env.Server.Queue.Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return env
}

// NeedFFmpeg skips a test that transcodes a real video on a machine
// without ffmpeg; under CI (which installs it) that is a failure.
func NeedFFmpeg(t *testing.T) {
	t.Helper()
	if err := media.FindFFmpeg().Missing(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// Clip writes a real H.264 clip of the seconds to path with ffmpeg.
func Clip(t *testing.T, path string, seconds int) {
	t.Helper()
	out, err := exec.Command("ffmpeg", "-hide_banner", "-nostdin", "-y", "-f", "lavfi",
		"-i", fmt.Sprintf("testsrc2=size=320x180:rate=25:duration=%d", seconds),
		"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, out)
	}
}

// OEmbedPage serves a page whose head names its oEmbed description, as a
// provider's pages do, and the description (a video titled "A talk" of
// the provider "Talks"); it returns the page's URL.
func OEmbedPage(t *testing.T) string {
	t.Helper()
	var site *httptest.Server
	site = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/talk":
			fmt.Fprintf(w, `<!doctype html><html><head><title>Talk</title>`+
				`<link rel="alternate" type="application/json+oembed" href="%s/oembed?format=json"></head><body></body></html>`, site.URL)
		case "/oembed":
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"type": "video", "version": "1.0", "title": "A talk",
				"provider_name": "Talks", "width": 640, "height": 360,
				"html": `<iframe src="` + site.URL + `/embed/talk" width="640" height="360"></iframe>`})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)
	return site.URL + "/talk"
}

// Files writes the small files of the file topics into dir: notes.pdf,
// map.png, talk.mp3, clip.mp4 (a real clip) and pendulum.zip (an
// interactive app whose steps are intro, swing and done), and returns
// their paths by name.
func Files(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	for name, content := range map[string][]byte{
		"notes.pdf": []byte("%PDF-1.4\n%%EOF\n"),
		"map.png":   apitest.PNG(t),
		"talk.mp3":  append([]byte("ID3\x04\x00\x00\x00\x00\x00\x00"), make([]byte, 64)...),
		"pendulum.zip": interactivetest.Zip(t, map[string]string{
			"lms-interactive.json": interactivetest.Manifest, "index.html": interactivetest.Page}),
	} {
		files[name] = WriteFile(t, dir, name, content)
	}
	files["clip.mp4"] = filepath.Join(dir, "clip.mp4")
	Clip(t, files["clip.mp4"], 1)
	return files
}

// WriteFile writes a file into dir and returns its path.
func WriteFile(t *testing.T, dir, name string, content []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, content, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// VideoConfig is a body of post-admin-config that turns videos on,
// transcoded at one bitrate.
const VideoConfig = `{"config":[{"key":"lms_video.enable","value":true},{"key":"lms_video.bitrates","value":[300]}]}`

// LTITool is a body of post-admin-lti-tools: an external tool named
// "Lab tool".
const LTITool = `{"name":"Lab tool","login_url":"https://tool.example/login","target_link_uri":"https://tool.example/launch",` +
	`"redirect_uris":["https://tool.example/launch"],"jwks_url":"https://tool.example/jwks"}`
