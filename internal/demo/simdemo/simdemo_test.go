package simdemo_test

import (
	"archive/zip"
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/demo/simdemo"
	"github.com/lms-platform/lms/internal/kinds/interactive"
)

func TestPackage(t *testing.T) {
	data, err := simdemo.Package()
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range zr.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		files[f.Name] = string(b)
	}
	m, problems := interactive.ParseManifest([]byte(files["lms-interactive.json"]))
	if len(problems) != 0 || m.Entry != "index.html" || len(m.Steps) != 3 || m.Steps[0].ID != "aperture" || m.Steps[2].ID != "iso" {
		t.Fatalf("manifest %+v %v", m, problems)
	}
	if !strings.Contains(files["index.html"], `<canvas id="view"`) || !strings.Contains(files["index.html"], `<script src="sim.js">`) {
		t.Errorf("index.html: %s", files["index.html"])
	}
	js := files["sim.js"]
	if strings.Contains(js, "STEPS") || !strings.Contains(js, `"id":"shutter"`) {
		t.Errorf("sim.js lacks the steps")
	}
	for _, msg := range []string{"lms-interactive:step", "lms-interactive:complete", "lms-interactive:score", "lms-interactive:init",
		"lms-interactive:resize"} {
		if !strings.Contains(js, msg) {
			t.Errorf("sim.js never uses %s", msg)
		}
	}
}
