package interactive

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseManifest(t *testing.T) {
	m, errs := ParseManifest([]byte(`{"entry":"app/index.html","steps":[{"id":"a","title":"A"},{"id":"b-2","title":"B"}],` +
		`"network":["HTTPS://Tiles.Example.org:443","wss://live.example.org:8443"]}`))
	if errs != nil {
		t.Fatal(errs)
	}
	if m.Entry != "app/index.html" || m.Step("b-2") != 1 || m.Step("c") != -1 ||
		strings.Join(m.Network, " ") != "https://tiles.example.org wss://live.example.org:8443" {
		t.Errorf("parsed %+v", m)
	}
	for _, bad := range []string{`[]`, `{"entry":"index.html"}`, `{"entry":"a/../index.html","steps":[{"id":"a","title":"A"}]}`,
		`{"entry":"index.html","steps":[{"id":"a","title":"A"}],"network":["https://*.example.org"]}`,
		`{"entry":"index.html","steps":[{"id":"a","title":"A"}],"network":["https://user@example.org"]}`,
		`{"entry":"index.html","steps":[{"id":"a","title":"A"}]} {}`} {
		if _, errs := ParseManifest([]byte(bad)); errs == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

// FuzzParseManifest checks that any input either fails with problems or
// yields a manifest that keeps every rule.
func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"entry":"index.html","steps":[{"id":"a","title":"A"}],"network":["https://x.org"]}`))
	f.Add([]byte(`{"title":"T","entry":"a/b.htm","steps":[{"id":"a","title":"A"},{"id":"b","title":"B"}]}`))
	f.Add([]byte(`{"entry":"../x.html","steps":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, errs := ParseManifest(data)
		if errs != nil {
			if len(errs) == 0 {
				t.Fatal("empty problem map")
			}
			return
		}
		if entryProblem(m.Entry) != "" || len(m.Steps) == 0 || len(m.Steps) > MaxSteps || len(m.Network) > MaxOrigins {
			t.Fatalf("accepted %q", data)
		}
		seen := map[string]bool{}
		for _, s := range m.Steps {
			if !stepID.MatchString(s.ID) || seen[s.ID] {
				t.Fatalf("bad step %q in %q", s.ID, data)
			}
			seen[s.ID] = true
		}
		for _, o := range m.Network {
			if norm, msg := origin(o); msg != "" || norm != o {
				t.Fatalf("origin %q not normal", o)
			}
		}
		again, errs := ParseManifest(mustJSON(t, m))
		if errs != nil || again.Entry != m.Entry || len(again.Steps) != len(m.Steps) {
			t.Fatalf("round trip of %q: %v", data, errs)
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
