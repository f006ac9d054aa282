package pdf_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/media/pdf"
)

func fonts(t testing.TB) *pdf.Fonts {
	f, err := pdf.LoadFonts(pdf.DefaultFontFiles[0], pdf.DefaultFontFiles[1])
	if err != nil {
		t.Fatalf("%v (the build and CI install them)", err)
	}
	return f
}

var certificate = pdf.Document{Title: "Certificate of completion", Lines: []string{"This certifies that",
	"Zofia Żółkiewska 王小明", "has completed the course", "Statystyka 统计学", "on 4 May 2026", "Example School"}}

func TestRenderRefusesBadDocuments(t *testing.T) {
	f := fonts(t)
	for _, doc := range []pdf.Document{
		{Title: " "},
		{Title: "x", Lines: make([]string, 41)},
		{Title: strings.Repeat("ż", 301)},
	} {
		if _, err := f.Render(doc); !errors.Is(err, pdf.ErrInvalid) {
			t.Errorf("%.40v: %v", doc, err)
		}
	}
	out, err := f.Render(certificate)
	if err != nil || !bytes.HasPrefix(out, []byte("%PDF-")) {
		t.Fatalf("%v %.20q", err, out)
	}
	// Subsets, not whole fonts: the CJK font alone is 4 MB.
	if len(out) > 200<<10 {
		t.Errorf("a certificate takes %d KiB", len(out)>>10)
	}
}

// BenchmarkCertificate lays out one certificate with Latin, Polish and
// Chinese text (both fonts parsed and subset per document).
func BenchmarkCertificate(b *testing.B) {
	f := fonts(b)
	for b.Loop() {
		if _, err := f.Render(certificate); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "certificates/s")
}
