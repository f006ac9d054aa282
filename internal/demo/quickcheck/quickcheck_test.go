package quickcheck_test

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/demo/quickcheck"
	"github.com/lms-platform/lms/internal/h5p/h5ppackage"
)

// sample is a quiz whose right answers sit at different places.
var sample = quickcheck.Quiz{
	Title: "Quick check: colours",
	Intro: "Three questions about colours.",
	Questions: []quickcheck.Question{
		{Text: "What colour is a clear daytime sky?", Answers: []string{"Blue", "Green", "Red"}, Correct: 0,
			Explanation: "Air scatters blue light the most."},
		{Text: "Which two primary colours of light make yellow?", Answers: []string{"Red and blue", "Blue and green",
			"Red and green"}, Correct: 2},
		{Text: "What do you get when you mix every colour of light?", Answers: []string{"Black", "White"}, Correct: 1},
	},
}

func open(t *testing.T, data []byte) *h5ppackage.Package {
	t.Helper()
	p, err := h5ppackage.Open(bytes.NewReader(data), int64(len(data)), h5ppackage.Limits{})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return p
}

func TestPackageIsValid(t *testing.T) {
	data, err := quickcheck.Package(sample)
	if err != nil {
		t.Fatal(err)
	}
	p := open(t, data)
	if err := h5ppackage.Validate(p, h5ppackage.Options{}); err != nil {
		t.Fatalf("validate: %v", err)
	}
	if p.H5P.Title != sample.Title || p.H5P.Language != "en" || p.H5P.MainLibrary != quickcheck.MachineName ||
		!slices.Contains(p.H5P.EmbedTypes, "div") || p.H5P.License != "U" {
		t.Errorf("h5p.json: %+v", p.H5P)
	}
	if len(p.Libraries) != 1 {
		t.Fatalf("libraries: %+v", p.Libraries)
	}
	lib := p.Libraries[0]
	if lib.Dir != quickcheck.MachineName+"-1.0" || lib.JSON.MachineName != quickcheck.MachineName || !bool(lib.JSON.Runnable) ||
		lib.JSON.License != "MIT" || lib.JSON.CoreAPI == nil || lib.JSON.CoreAPI.After(h5ppackage.DefaultCoreAPI()) {
		t.Errorf("library: %s %+v", lib.Dir, lib.JSON)
	}
	for _, f := range []string{"library.json", "semantics.json", "quickcheck.js", "quickcheck.css"} {
		if !slices.Contains(lib.Files, f) {
			t.Errorf("library file %s missing from %v", f, lib.Files)
		}
	}
	var params quickcheck.Params
	if err := json.Unmarshal(p.Content, &params); err != nil {
		t.Fatal(err)
	}
	if got, want := mustJSON(t, params), mustJSON(t, sample.Params()); got != want {
		t.Errorf("content.json %s, want %s", got, want)
	}
	if len(params.Questions) != 3 || !params.Questions[1].Answers[2].Correct || params.Questions[1].Answers[0].Correct {
		t.Errorf("params: %+v", params)
	}
	// The same quiz always makes the same archive.
	if again, _ := quickcheck.Package(sample); !bytes.Equal(again, data) {
		t.Error("two packages of one quiz differ")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestQuizValidate(t *testing.T) {
	q := func(edit func(*quickcheck.Quiz)) quickcheck.Quiz {
		c := sample
		c.Questions = slices.Clone(sample.Questions)
		edit(&c)
		return c
	}
	bad := map[string]quickcheck.Quiz{
		"no title":        q(func(c *quickcheck.Quiz) { c.Title = " " }),
		"no questions":    q(func(c *quickcheck.Quiz) { c.Questions = nil }),
		"empty question":  q(func(c *quickcheck.Quiz) { c.Questions[0].Text = "" }),
		"one answer":      q(func(c *quickcheck.Quiz) { c.Questions[0].Answers = []string{"Blue"} }),
		"empty answer":    q(func(c *quickcheck.Quiz) { c.Questions[1].Answers = []string{"a", " "} }),
		"correct too far": q(func(c *quickcheck.Quiz) { c.Questions[2].Correct = 2 }),
		"correct below":   q(func(c *quickcheck.Quiz) { c.Questions[2].Correct = -1 }),
		"too many":        q(func(c *quickcheck.Quiz) { c.Questions = slices.Repeat(c.Questions, 4) }),
	}
	for name, quiz := range bad {
		if _, err := quickcheck.Package(quiz); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if err := sample.Validate(); err != nil {
		t.Errorf("sample: %v", err)
	}
}

// The player's built-in texts are those semantics.json offers authors as
// defaults, so an author who leaves them alone sees the same words.
func TestTextsMatchSemantics(t *testing.T) {
	raw, err := os.ReadFile("library/semantics.json")
	if err != nil {
		t.Fatal(err)
	}
	var fields []struct {
		Name   string `json:"name"`
		Fields []struct {
			Name    string `json:"name"`
			Default string `json:"default"`
		} `json:"fields"`
	}
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile("library/quickcheck.js")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?s)const defaultTexts = \{(.*?)\n  \};`).FindSubmatch(js)
	if block == nil {
		t.Fatal("no defaultTexts in quickcheck.js")
	}
	inJS := map[string]string{}
	for _, m := range regexp.MustCompile(`(\w+): '([^']*)'`).FindAllSubmatch(block[1], -1) {
		inJS[string(m[1])] = string(m[2])
	}
	inSemantics := map[string]string{}
	for _, f := range fields {
		if f.Name == "l10n" {
			for _, g := range f.Fields {
				inSemantics[g.Name] = g.Default
			}
		}
	}
	if len(inJS) == 0 || mustJSON(t, inJS) != mustJSON(t, inSemantics) {
		t.Errorf("texts of quickcheck.js %v\ndiffer from semantics.json %v", inJS, inSemantics)
	}
}

func TestUpload(t *testing.T) {
	data, err := quickcheck.Package(sample)
	if err != nil {
		t.Fatal(err)
	}
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx, admin := t.Context(), env.ClientAs("admin")
		upload := func() (*client.UploadedContent, error) {
			return admin.PostH5PContentsUpload(ctx, client.PostH5PContentsUploadForm{
				H5PFile: &client.File{Name: "quick-check.h5p", Content: bytes.NewReader(data)}})
		}
		res := apitest.Must(upload())(t)
		if res.ContentID == "" {
			t.Fatalf("upload: %+v", res)
		}
		id := res.ContentID
		got := apitest.Must(env.ClientAs("anonymous").GetH5PContentsID(ctx, id))(t)
		params, _ := got.Parameters.(map[string]any)
		questions, _ := params["questions"].([]any)
		second := map[string]any{}
		if len(questions) > 1 {
			second, _ = questions[1].(map[string]any)
		}
		if got.Title != sample.Title || !strings.HasPrefix(got.MainLibrary, quickcheck.MachineName) ||
			second["text"] != sample.Questions[1].Text {
			t.Errorf("content read back: %+v", got)
		}
		// The player gets the library's script and style sheet.
		play := apitest.Must(admin.GetH5PContentsIDPlay(ctx, id, client.GetH5PContentsIDPlayParams{}))(t)
		scripts, styles := strings.Join(play.Scripts, " "), strings.Join(play.Styles, " ")
		if !strings.Contains(scripts, "quickcheck.js") || !strings.Contains(styles, "quickcheck.css") {
			t.Errorf("play model scripts %s styles %s", scripts, styles)
		}
		// Uploading it again reuses the installed library.
		if _, err := upload(); err != nil {
			t.Errorf("second upload: %v", err)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM h5p_libraries WHERE machine_name = $1`, quickcheck.MachineName); n != 1 {
			t.Errorf("%d libraries installed", n)
		}
	})
}
