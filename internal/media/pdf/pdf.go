// Package pdf is the PDF service: it lays out documents (course
// certificates) as PDF with embedded TrueType subsets and a ToUnicode map,
// so their text can be searched and copied in any script the fonts cover.
// It is served behind the internal token (Handler) and called over HTTP
// (Client), as the spec's separate PDF service is, so it can run in its own
// process by configuration alone.
package pdf

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/go-pdf/fpdf"
)

// Document is what the service lays out: a title and the lines under it,
// each centred on a landscape A4 page.
type Document struct {
	Title string   `json:"title" maxLength:"300"`
	Lines []string `json:"lines" maxItems:"40"`
}

// Limits of a document.
const (
	maxLines   = 40
	maxLineLen = 300
)

// Fonts are the TrueType files documents are set in: Latin holds the
// Latin, Greek and Cyrillic scripts (Polish letters included), CJK the
// Chinese, Japanese and Korean ideographs and kana.
type Fonts struct {
	Latin, CJK []byte
}

// ErrInvalid marks a document the service refuses.
var ErrInvalid = errors.New("pdf: invalid document")

// Render lays out doc as a certificate page.
func (f *Fonts) Render(doc Document) ([]byte, error) {
	if err := check(doc); err != nil {
		return nil, err
	}
	p := fpdf.New("L", "mm", "A4", "")
	p.SetCompression(true)
	p.SetCreator("LMS", true)
	p.SetTitle(doc.Title, true)
	p.AddUTF8FontFromBytes(latinFont, "", f.Latin)
	p.AddUTF8FontFromBytes(cjkFont, "", f.CJK)
	if err := p.Error(); err != nil {
		return nil, fmt.Errorf("pdf: load fonts: %w", err)
	}
	p.SetAutoPageBreak(false, 0)
	p.AddPage()
	w, h := p.GetPageSize()
	p.SetDrawColor(40, 70, 120)
	p.SetLineWidth(1.2)
	p.Rect(10, 10, w-20, h-20, "D")
	p.SetLineWidth(0.4)
	p.Rect(14, 14, w-28, h-28, "D")

	y := 55.0
	p.SetTextColor(40, 70, 120)
	centred(p, w, y, doc.Title, 30)
	p.SetTextColor(20, 20, 20)
	y += 22
	for i, line := range doc.Lines {
		size := 16.0
		if i%2 == 1 { // the values between the connecting phrases: name, course
			size = 22
		}
		centred(p, w, y, line, size)
		y += size * 0.6
	}
	var b bytes.Buffer
	if err := p.Output(&b); err != nil {
		return nil, fmt.Errorf("pdf: write: %w", err)
	}
	return b.Bytes(), nil
}

func check(doc Document) error {
	if strings.TrimSpace(doc.Title) == "" {
		return fmt.Errorf("%w: the title is empty", ErrInvalid)
	}
	if len(doc.Lines) > maxLines {
		return fmt.Errorf("%w: more than %d lines", ErrInvalid, maxLines)
	}
	for _, l := range append([]string{doc.Title}, doc.Lines...) {
		if len([]rune(l)) > maxLineLen {
			return fmt.Errorf("%w: a line is longer than %d characters", ErrInvalid, maxLineLen)
		}
	}
	return nil
}

const (
	latinFont = "latin"
	cjkFont   = "cjk"
)

// run is a part of a line set in one font.
type run struct {
	font, text string
}

// runs splits a line where it changes between the fonts: ideographs, kana,
// hangul and their punctuation go to the CJK font, the rest to the Latin
// one (whose glyphs are the better for Latin text, which the CJK font also
// has).
func runs(line string) []run {
	var out []run
	for _, r := range line {
		font := latinFont
		if isCJK(r) {
			font = cjkFont
		}
		if n := len(out); n > 0 && out[n-1].font == font {
			out[n-1].text += string(r)
			continue
		}
		out = append(out, run{font: font, text: string(r)})
	}
	return out
}

func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Bopomofo) ||
		(r >= 0x3000 && r <= 0x303f) || (r >= 0xff00 && r <= 0xffef)
}

// centred writes line centred on the page at baseline y.
func centred(p *fpdf.Fpdf, pageWidth, y float64, line string, size float64) {
	parts := runs(strings.TrimSpace(line))
	width := 0.0
	for _, r := range parts {
		p.SetFont(r.font, "", size)
		width += p.GetStringWidth(r.text)
	}
	x := (pageWidth - width) / 2
	for _, r := range parts {
		p.SetFont(r.font, "", size)
		p.Text(x, y, r.text)
		x += p.GetStringWidth(r.text)
	}
}
