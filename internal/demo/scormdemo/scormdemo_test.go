package scormdemo_test

import (
	"archive/zip"
	"bytes"
	"io"
	"testing"

	"github.com/lms-platform/lms/internal/demo/scormdemo"
	"github.com/lms-platform/lms/internal/kinds/scorm/manifest"
)

func TestPackage(t *testing.T) {
	data, err := scormdemo.Package()
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	var doc []byte
	for _, f := range zr.File {
		names[f.Name] = true
		if f.Name == "imsmanifest.xml" {
			rc, _ := f.Open()
			doc, _ = io.ReadAll(rc)
			rc.Close()
		}
	}
	m, err := manifest.Parse(doc, func(n string) bool { return names[n] })
	if err != nil {
		t.Fatal(err)
	}
	scos := m.Launchables()
	if m.Version != manifest.V12 || len(scos) != 1 || scos[0].Launch != "index.html" || *scos[0].MasteryScore != 50 || len(m.Warnings) != 0 {
		t.Fatalf("manifest %+v", m)
	}
}
