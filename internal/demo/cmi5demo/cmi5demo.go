// Package cmi5demo makes the demo's cmi5 course: one AU, written for the
// demo (no third-party content), that asks one question about study
// habits. It speaks cmi5 with fetch() alone (au/au.js): it takes its auth
// token from the launch's fetch URL, reads LMS.LaunchData, sends
// initialized, then completed and passed (or failed) when the learner
// answers, and terminated when the learner finishes, and goes back to the
// returnURL.
package cmi5demo

import (
	"archive/zip"
	"bytes"
	"embed"
	"io/fs"
)

// Title is the AU's title; CourseID and AUID are the IRIs au/cmi5.xml
// declares.
const (
	Title    = "Check yourself: spacing (cmi5)"
	CourseID = "https://lms.example/demo/cmi5/study-habits"
	AUID     = CourseID + "/check"
)

//go:embed au
var files embed.FS

// Package returns the zipped course: cmi5.xml at its root and the AU.
func Package() ([]byte, error) {
	root, err := fs.Sub(files, "au")
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	if err := zw.AddFS(root); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
