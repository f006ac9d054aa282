package pdf_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/media/pdf"
)

func fonts(t testing.TB) *pdf.Fonts {
	f, err := pdf.LoadFonts("")
	if err != nil {
		t.Fatal(err)
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

// pdfText is the text of a PDF as poppler's pdftotext reads it.
func pdfText(t *testing.T, doc []byte) string {
	t.Helper()
	cmd := exec.Command("pdftotext", "-q", "-", "-")
	cmd.Stdin = bytes.NewReader(doc)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdftotext (Debian package poppler-utils): %v", err)
	}
	return string(out)
}

// On a machine without the fonts (the lookup finds nothing in an empty
// directory) Polish and Chinese text is set in the embedded fonts.
func TestFontsWithoutSystemFonts(t *testing.T) {
	f, err := pdf.LoadFonts(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(f.Latin, pdf.EmbeddedFonts().Latin) || !bytes.Equal(f.CJK, pdf.EmbeddedFonts().CJK) {
		t.Fatal("an empty directory did not leave the embedded fonts")
	}
	out, err := f.Render(certificate)
	if err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, out)
	for _, want := range []string{"Zofia Żółkiewska 王小明", "Statystyka 统计学"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text lacks %q:\n%s", want, text)
		}
	}
}

// A directory's fonts replace the embedded ones, each on its own; an
// explicit pair of files must be readable.
func TestFontsFromTheSystem(t *testing.T) {
	dir := t.TempDir()
	latin := []byte("not really a font")
	if err := os.MkdirAll(filepath.Join(dir, "dejavu"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dejavu", pdf.LatinFile), latin, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := pdf.LoadFonts(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(f.Latin, latin) || !bytes.Equal(f.CJK, pdf.EmbeddedFonts().CJK) {
		t.Errorf("the directory's Latin font was not taken, or the embedded CJK one was not kept")
	}
	missing := filepath.Join(dir, "missing.ttf")
	if _, err := pdf.LoadFonts(filepath.Join(dir, "dejavu", pdf.LatinFile) + ":" + missing); err == nil {
		t.Error("a missing CJK file loaded")
	}
	if _, err := pdf.LoadFonts(missing); err == nil {
		t.Error("a setting that is neither a directory nor a pair loaded")
	}
}
