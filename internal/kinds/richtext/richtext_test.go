package richtext

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/content"
)

func build(t *testing.T, old json.RawMessage, in content.Input) (Value, error) {
	t.Helper()
	raw, err := Kind{}.Build(context.Background(), content.Env{}, old, in)
	if err != nil {
		return Value{}, err
	}
	var v Value
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v, nil
}

func TestSanitizeRemovesScripts(t *testing.T) {
	cases := map[string]string{
		"script":        `<p>hi</p><script>alert(1)</script>`,
		"onerror":       `<img src="x.png" onerror="alert(1)">`,
		"onclick":       `<a href="https://example.com" onclick="alert(1)">x</a>`,
		"javascript":    `<a href="javascript:alert(1)">x</a>`,
		"javascript ws": `<a href=" JaVaScRiPt:alert(1)">x</a>`,
		"iframe":        `<iframe src="https://evil.example"></iframe>`,
		"style":         `<p style="background:url(javascript:alert(1))">x</p>`,
		"svg":           `<svg onload="alert(1)"></svg>`,
		"form":          `<form action="https://evil.example"><input name="password"></form>`,
	}
	for name, in := range cases {
		out := strings.ToLower(Sanitize(in))
		for _, bad := range []string{"<script", "onerror", "onclick", "onload", "javascript:", "<iframe", "style=", "<form", "<input", "<svg"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s: %q kept %q: %s", name, in, bad, out)
			}
		}
	}
}

func TestSanitizeKeepsAuthoring(t *testing.T) {
	in := `<h2 id="intro">Intro</h2><p><strong>b</strong> <em>i</em> <a href="https://example.com/x">link</a></p>` +
		`<img src="https://example.com/a.png" alt="A">` +
		`<table><thead><tr><th>h</th></tr></thead><tbody><tr><td>c</td></tr></tbody></table>` +
		`<pre><code class="language-go">fmt.Println()</code></pre><ul><li>one</li></ul><blockquote>q</blockquote>`
	out := Sanitize(in)
	for _, want := range []string{"<h2", "<strong>", "<em>", `href="https://example.com/x"`, "<img", `src="https://example.com/a.png"`,
		"<table>", "<th>", "<td>", `<code class="language-go">`, "<ul>", "<blockquote>"} {
		if !strings.Contains(out, want) {
			t.Errorf("lost %q: %s", want, out)
		}
	}
}

func TestMarkdownRendered(t *testing.T) {
	v, err := build(t, nil, content.Input{Fields: map[string]string{"markdown": "# Title\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```go\nx := 1\n```\n\n<script>alert(1)</script>\n\n[x](javascript:alert(1))"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<h1", "Title", "<table>", "<td>1</td>", `<code class="language-go">`} {
		if !strings.Contains(v.HTML, want) {
			t.Errorf("rendered HTML lacks %q: %s", want, v.HTML)
		}
	}
	if strings.Contains(v.HTML, "<script") || strings.Contains(v.HTML, "javascript:") {
		t.Errorf("rendered HTML not sanitised: %s", v.HTML)
	}
	if v.Markdown == "" {
		t.Error("markdown source not kept")
	}
}

func TestHTMLWinsOverMarkdown(t *testing.T) {
	v, err := build(t, nil, content.Input{Fields: map[string]string{"html": "<p>given</p><script>x</script>", "markdown": "# other"}})
	if err != nil {
		t.Fatal(err)
	}
	if v.HTML != "<p>given</p>" || v.Markdown != "# other" {
		t.Errorf("got %+v", v)
	}
}

func TestGenericValue(t *testing.T) {
	v, err := build(t, nil, content.Input{Value: json.RawMessage(`"<p>x</p><img src=x onerror=alert(1)>"`)})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(v.HTML, "onerror") || !strings.Contains(v.HTML, "<p>x</p>") {
		t.Errorf("string value: %q", v.HTML)
	}
	v, err = build(t, nil, content.Input{Value: json.RawMessage(`{"markdown":"**b**"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(v.HTML, "<strong>b</strong>") {
		t.Errorf("object value: %q", v.HTML)
	}
}

func TestRequiredAndKept(t *testing.T) {
	if _, err := build(t, nil, content.Input{}); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("empty create: %v, want 422", err)
	}
	old := json.RawMessage(`{"html":"<p>old</p>"}`)
	raw, err := Kind{}.Build(context.Background(), content.Env{}, old, content.Input{Fields: map[string]string{"title": "x"}})
	if err != nil || string(raw) != string(old) {
		t.Errorf("update without content: %s %v", raw, err)
	}
}

func TestCaps(t *testing.T) {
	big := strings.Repeat("a", MaxLength+1)
	if _, err := build(t, nil, content.Input{Fields: map[string]string{"html": big}}); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("oversized html: %v", err)
	}
	if _, err := build(t, nil, content.Input{Fields: map[string]string{"markdown": big}}); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("oversized markdown: %v", err)
	}
}

func TestViewAndCopy(t *testing.T) {
	raw := json.RawMessage(`{"html":"<p>x</p>","markdown":"x"}`)
	got, err := Kind{}.View(content.Env{}, raw)
	if err != nil || got.(Value).HTML != "<p>x</p>" {
		t.Errorf("view: %v %v", got, err)
	}
	cp, err := Kind{}.Copy(context.Background(), content.Env{}, raw)
	if err != nil || string(cp) != string(raw) {
		t.Errorf("copy: %s %v", cp, err)
	}
}
