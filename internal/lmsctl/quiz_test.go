package lmsctl_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/gift"
	"github.com/lms-platform/lms/internal/lmsctl"
)

// TestQuizQuestionsSentAsGIFT: lmsctl converts questions {prompt,
// options} to GIFT itself, with the server's conversion, and passes GIFT
// questions through; a question it cannot convert fails before any
// request.
func TestQuizQuestionsSentAsGIFT(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	var mu sync.Mutex
	var sent [][]byte // the bodies of topic creations
	s := proxied(t, env, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPost && r.URL.Path == "/api/admin/topics" {
			raw, err := io.ReadAll(r.Body)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			sent = append(sent, raw)
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(raw))
		}
		return false
	}, "courses:write")
	bodies := func() [][]byte {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(sent)
	}
	lesson := courseWithLesson(t, env)

	questions := `[{"prompt":"Pick 7","options":[{"text":"4"},{"text":"7","correct":true}],"score":2},{"gift":"2+2=4 {T}"}]`
	code, out, errOut := s.run("", "create-topic", "quiz", "--lesson", lesson, "--title", "Check", "--questions", questions)
	var topic map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &topic) != nil || topic["kind"] != "quiz" {
		t.Fatalf("create-topic quiz: exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	want, err := gift.FromOptions("Pick 7", []gift.Option{{Text: "4"}, {Text: "7", Correct: true}})
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Questions []map[string]any `json:"questions"`
	}
	if got := bodies(); len(got) != 1 || json.Unmarshal(got[0], &body) != nil || !reflect.DeepEqual(body.Questions,
		[]map[string]any{{"gift": want, "score": float64(2)}, {"gift": "2+2=4 {T}"}}) {
		t.Fatalf("sent %q, want the questions as GIFT", got)
	}

	for _, bad := range []string{
		`[{"prompt":"Pick 7","options":[{"text":"7","correct":true}]}]`,
		`[{"prompt":"Pick 7","options":[{"text":"4"},{"text":"7","correct":true}],"gift":"2+2=4 {T}"}]`,
	} {
		code, _, errOut := s.run("", "create-topic", "quiz", "--lesson", lesson, "--title", "Bad", "--questions", bad)
		if f := lastFailure(t, errOut); code != lmsctl.ExitUsage || f.Code != "USAGE" {
			t.Errorf("%s: exit %d: %s", bad, code, errOut)
		}
	}
	if got := bodies(); len(got) != 1 {
		t.Fatalf("questions lmsctl refused were sent: %q", got[1:])
	}
}
