package lmsctl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/lmsctl"
	"github.com/lms-platform/lms/internal/lmsctl/lmsctltest"
)

// TestCreateVideoAwaitsTranscoding: create-topic video --await uploads a
// real clip, follows its operation to the end and prints the ready topic;
// a file ffmpeg cannot read ends as VIDEO_FAILED, naming the topic that
// exists.
func TestCreateVideoAwaitsTranscoding(t *testing.T) {
	lmsctltest.NeedFFmpeg(t)
	env := apitest.New(t, "sqlite", apitest.Options{})
	apitest.Must(env.ClientAs("admin").PostAdminConfig(t.Context(), client.UpdateInputBody{Config: []client.Item{
		{Key: "lms_video.enable", Value: true}, {Key: "lms_video.bitrates", Value: []int{300}}}}))(t)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); env.Server.Queue.Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })

	s := loggedIn(t, env, true, "courses:write")
	lesson := courseWithLesson(t, env)
	dir := t.TempDir()
	clip := filepath.Join(dir, "clip.mp4")
	lmsctltest.Clip(t, clip, 2)
	// A real file's head, so that it is taken as an mp4, and noise after it.
	head, err := os.ReadFile(clip)
	if err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.mp4")
	os.WriteFile(broken, append(head[:64:64], bytes.Repeat([]byte{0x5a}, 4096)...), 0o600)

	code, out, errOut := s.run("", "create-topic", "video", "--lesson", lesson, "--title", "Clip", "--file", clip, "--await")
	var topic struct {
		Topicable struct {
			Processing string `json:"processing"`
			HLSURL     string `json:"hls_url"`
		} `json:"topicable"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &topic) != nil || topic.Topicable.Processing != "ready" || topic.Topicable.HLSURL == "" {
		t.Fatalf("create-topic video --await: %d %s %s", code, out, errOut)
	}
	if !strings.Contains(errOut, "transcode [") || !strings.HasSuffix(errOut, "100%\n") {
		t.Fatalf("transcoding progress on standard error: %q", errOut)
	}
	code, _, errOut = s.run("", "create-topic", "video", "--lesson", lesson, "--title", "Broken", "--file", broken, "--await")
	if f := lastFailure(t, errOut); code != lmsctl.ExitConflict || f.Code != "VIDEO_FAILED" || f.Details["topic"] == nil {
		t.Fatalf("a broken video: %d %q", code, errOut)
	}
	if code, _, _ := s.run("", "create-topic", "pdf", "--lesson", lesson, "--title", "No", "--file", clip, "--await"); code != lmsctl.ExitUsage {
		t.Fatalf("--await on another type: exit %d", code)
	}
}

// TestAwaitNamesTheTopic: when following a video's operation fails (here
// the polls are rate limited), the failure says that the topic exists
// (details.topic) and how to go on; with --wait the polls wait the limit
// out like any other request. A video on a video site has nothing to
// transcode: its operation is done at once.
func TestAwaitNamesTheTopic(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	var refusals atomic.Int32 // polls still to refuse
	s := proxied(t, env, func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.HasPrefix(r.URL.Path, "/api/admin/operations/video:") || refusals.Add(-1) < 0 {
			return false
		}
		w.Header().Set("Retry-After", "3")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"success":false,"error":"RATE_LIMITED","message":"Too many requests."}`)
		return true
	}, "courses:write")
	var slept []time.Duration
	s.sleep = func(_ context.Context, d time.Duration) error {
		slept = append(slept, d)
		return nil
	}
	lesson := courseWithLesson(t, env)
	const site = "https://video.example/watch/1"

	refusals.Store(1000)
	code, out, errOut := s.run("", "create-topic", "video", "--lesson", lesson, "--title", "Clip", "--video-site-url", site, "--await")
	f := lastFailure(t, errOut)
	topic, _ := f.Details["topic"].(float64)
	if code != lmsctl.ExitLimited || f.Code != "RATE_LIMITED" || topic == 0 || f.Details["retryAfter"] != float64(3) || out != "" {
		t.Fatalf("rate limited while awaiting: exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	id := fmt.Sprint(int64(topic))
	for _, want := range []string{"video topic " + id + " was created", "lmsctl get-admin-operations-operation --operation video:" + id,
		"lmsctl get-admin-topics-id --id " + id, "lmsctl delete-admin-topics-id --id " + id} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("the message does not say %q: %s", want, f.Message)
		}
	}
	apitest.Must(env.ClientAs("admin").GetAdminTopicsID(t.Context(), int64(topic)))(t)

	refusals.Store(1)
	code, out, errOut = s.run("", "create-topic", "video", "--lesson", lesson, "--title", "Clip 2", "--video-site-url", site, "--await", "--wait")
	var created map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &created) != nil || created["title"] != "Clip 2" {
		t.Fatalf("--wait while awaiting: exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	if len(slept) != 1 || slept[0] != 3*time.Second || refusals.Load() >= 0 {
		t.Fatalf("waits %v, refusals left %d", slept, refusals.Load())
	}
}
