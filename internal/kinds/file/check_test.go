package file

import (
	"testing"

	"github.com/lms-platform/lms/internal/apperr"
)

func TestCheckContent(t *testing.T) {
	html := []byte("<html><body><script>alert(1)</script></body></html>")
	for _, c := range []struct {
		name string
		data []byte
		ok   bool
	}{
		{"essay.pdf", []byte("%PDF-1.7\n..."), true},
		{"x.pdf", html, false},
		{"notes.txt", []byte("plain words, nothing more\n"), true},
		{"notes.txt", html, false},
		{"table.csv", []byte("a,b\n1,2\n"), true},
		{"report.docx", []byte("PK\x03\x04rest of the archive"), true},
		{"report.docx", html, false},
		{"empty.zip", []byte("PK\x05\x06" + string(make([]byte, 18))), true},
		{"old.doc", []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1, 0}, true},
		{"old.doc", []byte("{\\rtf1 not a compound file"), false},
		{"photo.png", html, false},
		{"drawing.svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), false},
		// Extensions the package does not know are not checked.
		{"code.py", html, true},
	} {
		err := CheckContent(upload(c.name, c.data), "file")
		if c.ok && err != nil {
			t.Errorf("%s (%.12q): refused: %v", c.name, c.data, err)
		}
		if !c.ok {
			if e := apperr.As(err); e == nil || e.Kind != apperr.Invalid {
				t.Errorf("%s (%.12q): %v, want a 422", c.name, c.data, err)
			}
		}
	}
}
