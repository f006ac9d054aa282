package cmi5demo_test

import (
	"bytes"
	"testing"

	"github.com/lms-platform/lms/internal/demo/cmi5demo"
	"github.com/lms-platform/lms/internal/kinds/cmi5"
)

// TestPackage: the generated course passes the cmi5 import's checks (the
// schema, the AU's file present in the zip) with the AU as declared.
func TestPackage(t *testing.T) {
	data, err := cmi5demo.Package()
	if err != nil {
		t.Fatal(err)
	}
	course, pkg, err := cmi5.OpenZip(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	aus := course.AUs()
	if course.ID != cmi5demo.CourseID || len(aus) != 1 || aus[0].ID != cmi5demo.AUID || cmi5.Text(aus[0].Title) != cmi5demo.Title ||
		aus[0].URL != "index.html" ||
		aus[0].MoveOn != cmi5.CompletedAndPassed || aus[0].MasteryScore == nil || *aus[0].MasteryScore != 0.5 {
		t.Fatalf("course %+v, AUs %+v", course, aus)
	}
	files := map[string]bool{}
	for _, f := range pkg.Files() {
		files[f] = true
	}
	if !files["index.html"] || !files["au.js"] {
		t.Fatalf("files %v", pkg.Files())
	}
}
