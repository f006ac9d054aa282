package media

import (
	"bytes"
	"fmt"
	"strings"
)

// Document is a PDF handout: a coloured title band, then headings,
// paragraphs, bullets and check boxes in the standard Helvetica fonts,
// flowed onto as many A4 pages as they need. Text is plain ASCII.
type Document struct {
	Title    string
	Subtitle string
	// Accent is the colour of the title band and the headings.
	Accent string
	blocks []block
}

type blockKind int

const (
	heading blockKind = iota
	paragraph
	bullet
	checkbox
)

type block struct {
	kind blockKind
	text string
}

// Heading adds a section heading.
func (d *Document) Heading(s string) { d.blocks = append(d.blocks, block{heading, s}) }

// Paragraph adds a paragraph.
func (d *Document) Paragraph(s string) { d.blocks = append(d.blocks, block{paragraph, s}) }

// Bullets adds one bullet per item.
func (d *Document) Bullets(items ...string) {
	for _, s := range items {
		d.blocks = append(d.blocks, block{bullet, s})
	}
}

// Checklist adds one empty check box per item.
func (d *Document) Checklist(items ...string) {
	for _, s := range items {
		d.blocks = append(d.blocks, block{checkbox, s})
	}
}

// Page geometry in points (A4).
const (
	pageW, pageH = 595.0, 842.0
	margin       = 56.0
	bandH        = 110.0
	bodySize     = 10.5
	leading      = 15.0
)

// PDF lays the document out and writes it.
func (d *Document) PDF() []byte {
	var pages []*bytes.Buffer
	var page *bytes.Buffer
	y := 0.0
	newPage := func() {
		page = &bytes.Buffer{}
		pages = append(pages, page)
		y = pageH - margin
		if len(pages) == 1 {
			d.titleBand(page)
			y = pageH - bandH - 34
		}
		// Footer: the title and the page number.
		fmt.Fprintf(page, "0.45 g BT /F1 8 Tf %.1f %.1f Td (%s - page %d) Tj ET\n", margin, 30.0,
			escape(d.Title), len(pages))
	}
	newPage()
	width := pageW - 2*margin
	for _, b := range d.blocks {
		switch b.kind {
		case heading:
			lines := wrap(b.text, width, 13, true)
			if y-leading*float64(len(lines)+2) < margin+20 {
				newPage()
			}
			y -= 8
			r, g, bl := rgb(d.Accent)
			for _, line := range lines {
				fmt.Fprintf(page, "%.3f %.3f %.3f rg BT /F2 13 Tf %.1f %.1f Td (%s) Tj ET\n", r, g, bl, margin, y, escape(line))
				y -= leading + 3
			}
		case paragraph, bullet, checkbox:
			indent := 0.0
			if b.kind != paragraph {
				indent = 16
			}
			lines := wrap(b.text, width-indent, bodySize, false)
			for i, line := range lines {
				if y < margin+20 {
					newPage()
				}
				if i == 0 {
					switch b.kind {
					case bullet:
						fmt.Fprintf(page, "0.2 g %.1f %.1f 3.2 3.2 re f\n", margin+4, y+2.4)
					case checkbox:
						fmt.Fprintf(page, "0.2 G 0.8 w %.1f %.1f 8 8 re S\n", margin+1, y-0.5)
					}
				}
				fmt.Fprintf(page, "0.13 g BT /F1 %.1f Tf %.1f %.1f Td (%s) Tj ET\n", bodySize, margin+indent, y, escape(line))
				y -= leading
			}
			y -= 5
		}
	}
	return d.assemble(pages)
}

// titleBand draws the coloured band with the title and subtitle.
func (d *Document) titleBand(page *bytes.Buffer) {
	r, g, b := rgb(d.Accent)
	fmt.Fprintf(page, "%.3f %.3f %.3f rg 0 %.1f %.1f %.1f re f\n", r, g, b, pageH-bandH, pageW, bandH)
	fmt.Fprintf(page, "1 g BT /F2 22 Tf %.1f %.1f Td (%s) Tj ET\n", margin, pageH-56, escape(d.Title))
	if d.Subtitle != "" {
		fmt.Fprintf(page, "1 g BT /F1 11 Tf %.1f %.1f Td (%s) Tj ET\n", margin, pageH-82, escape(d.Subtitle))
	}
}

// assemble writes the objects, the cross-reference table and the trailer.
// Objects: 1 catalog, 2 page tree, 3 and 4 fonts, 5 info, then a page and
// its content stream for each page.
func (d *Document) assemble(pages []*bytes.Buffer) []byte {
	var out bytes.Buffer
	var offsets []int
	obj := func(body string) {
		offsets = append(offsets, out.Len())
		fmt.Fprintf(&out, "%d 0 obj\n%s\nendobj\n", len(offsets), body)
	}
	out.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	kids := make([]string, len(pages))
	for i := range pages {
		kids[i] = fmt.Sprintf("%d 0 R", 6+2*i)
	}
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages)))
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>")
	obj(fmt.Sprintf("<< /Title (%s) /Producer (LMS demo seed) >>", escape(d.Title)))
	for i, p := range pages {
		obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.0f %.0f] "+
			"/Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> /Contents %d 0 R >>", pageW, pageH, 7+2*i))
		obj(fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", p.Len(), p.String()))
	}
	xref := out.Len()
	fmt.Fprintf(&out, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, off := range offsets {
		fmt.Fprintf(&out, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&out, "trailer\n<< /Size %d /Root 1 0 R /Info 5 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return out.Bytes()
}

// rgb turns "#rrggbb" into PDF colour components.
func rgb(hex string) (float64, float64, float64) {
	if len(hex) != 7 {
		hex = "#1d4ed8"
	}
	c := Hex(hex)
	return float64(c.R) / 255, float64(c.G) / 255, float64(c.B) / 255
}

// escape makes s a PDF string literal body, replacing characters outside
// printable ASCII (the fonts' encoding is used for ASCII only).
func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '(' || r == ')' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\u2019' || r == '\u2018':
			b.WriteByte('\'')
		case r == '\u201c' || r == '\u201d':
			b.WriteByte('"')
		case r == '\u2013' || r == '\u2014':
			b.WriteByte('-')
		case r < 0x20 || r > 0x7e:
			b.WriteByte('?')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// helvetica holds the widths of printable ASCII in Helvetica, in
// thousandths of the font size (from the font's metrics).
var helvetica = [95]int{
	278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, // space to /
	556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, // 0 to ?
	1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778, // @ to O
	667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556, // P to _
	333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556, // ` to o
	556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584, // p to ~
}

// textWidth is the width of s in points; bold text is taken as a tenth
// wider, which keeps wrapped lines inside the margins.
func textWidth(s string, size float64, bold bool) float64 {
	total := 0
	for _, r := range s {
		if r >= 32 && r <= 126 {
			total += helvetica[r-32]
		} else {
			total += 556
		}
	}
	w := float64(total) * size / 1000
	if bold {
		w *= 1.1
	}
	return w
}

// wrap breaks s into lines no wider than width.
func wrap(s string, width, size float64, bold bool) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		try := word
		if line != "" {
			try = line + " " + word
		}
		if line != "" && textWidth(try, size, bold) > width {
			lines = append(lines, line)
			line = word
			continue
		}
		line = try
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
