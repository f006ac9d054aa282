package lmsctl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

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
	admin := env.As("admin")
	env.Call(t, 200, "POST", "/api/admin/config", admin.Token, map[string]any{"config": []map[string]any{
		{"key": "lms_video.enable", "value": true}, {"key": "lms_video.bitrates", "value": []int{300}}}})
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
