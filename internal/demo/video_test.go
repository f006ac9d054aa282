package demo_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/media"
	"github.com/lms-platform/lms/internal/media/mediatest"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/queue/queuetest"
	"github.com/lms-platform/lms/internal/server"
)

// videoTopics are the demo tenant's video topics, by id, with their
// content as the admin sees it.
func videoTopics(t *testing.T, env *apitest.Env, admin string) map[int64]map[string]any {
	t.Helper()
	page := apitest.Must(demoAs(env, admin).GetAdminTopics(t.Context(), client.GetAdminTopicsParams{PerPage: client.Ptr(int64(100))}))(t)
	out := map[int64]map[string]any{}
	for _, tp := range page.Items {
		if tp.Kind == "video" {
			out[tp.ID], _ = tp.Topicable.(map[string]any)
		}
	}
	return out
}

// operation reads video:<id> once, or long-polls it (wait seconds) until
// it is done.
func operation(t *testing.T, env *apitest.Env, admin string, id int64, wait int64) *client.Operation {
	t.Helper()
	var params client.GetAdminOperationsIDParams
	if wait > 0 {
		params.Wait = &wait
	}
	return apitest.Must(demoAs(env, admin).GetAdminOperationsID(t.Context(), "video:"+strconv.FormatInt(id, 10), params))(t)
}

// The demo's films are made by the program, uploaded like any video and
// transcoded by the job queue to HLS at two qualities, so they play with
// no network: no topic points to a video site any more.
func TestDemoFilmsAreTranscoded(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	each(t, true, "", func(t *testing.T, env *apitest.Env, _ platform.Record) {
		admin, _ := env.Login(demoHost, "admin@"+demoHost, "admin-password")
		films := videoTopics(t, env, admin)
		if len(films) != 2 {
			t.Fatalf("%d video topics, want the two films", len(films))
		}
		for id, c := range films {
			if c["video_site_url"] != nil && c["video_site_url"] != "" {
				t.Fatalf("topic %d still points to a video site: %v", id, c)
			}
			if c["processing"] != "queued" {
				t.Fatalf("topic %d before a worker runs: %v", id, c)
			}
			// The upload is a real film with picture and sound.
			orig := env.Do(apitest.Request{Method: "GET", Path: c["url"].(string), Host: demoHost})
			if orig.Status != 200 {
				t.Fatalf("original of %d: %d", id, orig.Status)
			}
			probe := probeFile(t, orig.Body)
			if !strings.Contains(probe, "codec_type=video") || !strings.Contains(probe, "codec_type=audio") {
				t.Fatalf("the film of %d lacks picture or sound:\n%s", id, probe)
			}
		}
		queuetest.Run(t, env.Server.Queue)
		for id := range films {
			var op *client.Operation
			for op == nil || !op.Done {
				op = operation(t, env, admin, id, 30)
			}
			if op.State != "ready" {
				t.Fatalf("film %d: %+v", id, op)
			}
			if vs := op.Variants; len(vs) != 2 || vs[0] != "240p@400k" || vs[1] != "360p@800k" {
				t.Fatalf("film %d variants: %+v", id, op)
			}
			if op.Duration == nil || *op.Duration < 8.5 || *op.Duration > 20 {
				t.Fatalf("film %d lasts %v s", id, op.Duration)
			}
		}
		for id, c := range videoTopics(t, env, admin) {
			hls, _ := c["hls_url"].(string)
			master := env.Do(apitest.Request{Method: "GET", Path: hls, Host: demoHost})
			if hls == "" || master.Status != 200 || strings.Count(string(master.Body), "#EXT-X-STREAM-INF") != 2 {
				t.Fatalf("film %d master playlist %q: %d\n%s", id, hls, master.Status, master.Body)
			}
			if p := env.Do(apitest.Request{Method: "GET", Path: c["poster_url"].(string), Host: demoHost}); p.Status != 200 ||
				p.Header.Get("Content-Type") != "image/jpeg" {
				t.Fatalf("film %d poster: %d", id, p.Status)
			}
		}
	})
}

// probeFile is ffprobe's list of the streams of data.
func probeFile(t *testing.T, data []byte) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "film.mov")
	if err := os.WriteFile(f, data, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("ffprobe", "-v", "error", "-show_streams", f).CombinedOutput()
	if err != nil {
		t.Fatalf("ffprobe: %v\n%s", err, out)
	}
	return string(out)
}

// Without ffmpeg the demo still seeds: the films are made (with a chime
// for sound, since the voice-over needs ffmpeg) and uploaded, and their
// topics say that they wait for ffmpeg, as the health check does.
func TestDemoSeedsWithoutFFmpeg(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b, func(t *testing.T) {
			env := apitest.New(t, b, apitest.Options{Configure: demoConfig(true, "")})
			// As on a server without the package.
			env.Server.Videos.FFmpeg = media.FFmpeg{}
			env.Server.Demo.FFmpeg = ""
			rec, _, err := env.Server.AddTenant(context.Background(), server.NewTenant{Host: demoHost,
				AdminEmail: "admin@" + demoHost, AdminPassword: "admin-password", Demo: true})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := env.Server.Demo.Seed(context.Background(), rec)
			if err != nil || rep.Courses != len(seededTitles) {
				t.Fatalf("seed without ffmpeg: %+v %v", rep, err)
			}
			admin, _ := env.Login(demoHost, "admin@"+demoHost, "admin-password")
			films := videoTopics(t, env, admin)
			if len(films) != 2 {
				t.Fatalf("%d video topics, want the two films", len(films))
			}
			// Each film's job runs once, finds no ffmpeg and waits to retry.
			for range films {
				if ran, err := env.Server.Queue.Work(context.Background()); !ran || err != nil {
					t.Fatalf("a film's job did not run: %v %v", ran, err)
				}
			}
			for id := range films {
				op := operation(t, env, admin, id, 0)
				if op.State != "queued" || op.Done || op.Error == nil || *op.Error != media.ErrMissing.Error() {
					t.Fatalf("film %d without ffmpeg: %+v", id, op)
				}
			}
			health := apitest.Must(demoAs(env, "").GetHealth(t.Context()))(t)
			if health.Services["ffmpeg"] != "missing" {
				t.Fatalf("health without ffmpeg: %+v", health)
			}
		})
	}
}
