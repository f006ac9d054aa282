package lmsctl

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestTables: what a person at a terminal sees of a page, a record and
// an empty answer.
func TestTables(t *testing.T) {
	page := Result{Data: json.RawMessage(`[{"id":7,"title":"Soil\nbasics","status":"draft","authors":[{"id":1}],"position":2}]`),
		Meta: json.RawMessage(`{"current_page":1,"last_page":3,"total":31,"per_page":15}`)}
	cases := []struct {
		name string
		v    any
		want []string
	}{
		{"page", page.shown(), []string{"ID  TITLE        STATUS  POSITION", "7   Soil basics  draft   2", "page 1 of 3 (31 in all)"}},
		{"record", json.RawMessage(`{"id":7,"tags":["a","b"],"summary":null}`), []string{"id       7", `tags     ["a","b"]`, "summary  -"}},
		{"nothing", json.RawMessage(`null`), []string{"ok"}},
		{"empty list", json.RawMessage(`[]`), []string{"(none)"}},
	}
	for _, c := range cases {
		var out bytes.Buffer
		if err := (printer{w: &out}).print(c.v); err != nil {
			t.Fatal(err)
		}
		for _, line := range c.want {
			if !strings.Contains(out.String(), line) {
				t.Errorf("%s: output lacks %q:\n%s", c.name, line, out.String())
			}
		}
	}
	// JSON keeps the page's shape for programs.
	var out bytes.Buffer
	if err := (printer{w: &out, json: true}).print(page.shown()); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Data []map[string]any `json:"data"`
		Meta map[string]any   `json:"meta"`
	}
	if err := json.Unmarshal(out.Bytes(), &back); err != nil || back.Data[0]["title"] != "Soil\nbasics" || back.Meta["total"] != float64(31) {
		t.Fatalf("JSON page: %s", out.String())
	}
}

func TestProgressBar(t *testing.T) {
	var out bytes.Buffer
	bar := progressBar(&out)
	for _, sent := range []int64{0, 1 << 19, 1 << 19, 1 << 20} {
		bar(sent, 1<<20)
	}
	want := "\rupload [..............................]   0% of 1.0 MiB" +
		"\rupload [###############...............]  50% of 1.0 MiB" +
		"\rupload [##############################] 100% of 1.0 MiB\n"
	if out.String() != want {
		t.Fatalf("progress:\n%q\nwant\n%q", out.String(), want)
	}
}
