package file

import (
	"bytes"
	"testing"

	"github.com/lms-platform/lms/internal/apperr"
)

// FuzzScanSVG checks that any input is either accepted or refused with a
// 422, never a panic or another error.
func FuzzScanSVG(f *testing.F) {
	f.Add([]byte(`<svg xmlns="http://www.w3.org/2000/svg"><rect/></svg>`))
	f.Add([]byte(`<svg><script>alert(1)</script></svg>`))
	f.Add([]byte(`<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "b">]><svg>&a;</svg>`))
	f.Add([]byte(`<svg><a href="java&#10;script:x"/></svg>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		err := scanSVG(bytes.NewReader(data), "file")
		if err != nil && !apperr.Is(err, apperr.Invalid) {
			t.Fatalf("unexpected error kind: %v", err)
		}
	})
}
