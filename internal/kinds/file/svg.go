package file

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/content"
)

// SVG images can carry scripts that run when the image is opened on its
// own. Rather than rewrite the image, one holding anything that can run
// code is refused: script, foreignObject and embedding elements, event
// handler attributes, javascript: (and non-image data:) links, animations
// that change links, and DOCTYPEs declaring entities. The files route also
// serves SVG under a sandboxing Content-Security-Policy.

var svgBanned = map[string]bool{
	"script": true, "foreignobject": true, "iframe": true, "embed": true, "object": true,
	"handler": true, "listener": true, "frame": true, "frameset": true, "applet": true, "meta": true,
	"link": true, "base": true,
}

func errUnsafeSVG(field string) error {
	return apperr.Field(field, "The SVG image may not contain scripts, event handlers, embedded documents or javascript: links.")
}

func checkSVG(f content.File, field string) error {
	rc, err := f.Open()
	if err != nil {
		return fmt.Errorf("file: open upload: %w", err)
	}
	defer rc.Close()
	return scanSVG(rc, field)
}

func scanSVG(r io.Reader, field string) error {
	dec := xml.NewDecoder(r)
	dec.Strict = true
	// Entities other than XML's own are never expanded.
	dec.Entity = map[string]string{}
	root := true
	inStyle := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			if root {
				return apperr.Field(field, "The file is not an SVG image.")
			}
			return nil
		}
		if err != nil {
			return apperr.Field(field, "The SVG image is not well-formed XML.")
		}
		switch t := tok.(type) {
		case xml.Directive:
			if d := strings.ToUpper(string(t)); strings.Contains(d, "ENTITY") || strings.Contains(d, "[") {
				return errUnsafeSVG(field)
			}
		case xml.StartElement:
			name := strings.ToLower(t.Name.Local)
			if root && name != "svg" {
				return apperr.Field(field, "The file is not an SVG image.")
			}
			root = false
			if svgBanned[name] {
				return errUnsafeSVG(field)
			}
			if name == "style" {
				inStyle++
			}
			for _, a := range t.Attr {
				if unsafeSVGAttr(name, a) {
					return errUnsafeSVG(field)
				}
			}
		case xml.EndElement:
			if strings.EqualFold(t.Name.Local, "style") && inStyle > 0 {
				inStyle--
			}
		case xml.CharData:
			if inStyle > 0 && unsafeURL(string(t)) {
				return errUnsafeSVG(field)
			}
		}
	}
}

func unsafeSVGAttr(element string, a xml.Attr) bool {
	name := strings.ToLower(a.Name.Local)
	if strings.HasPrefix(name, "on") {
		return true
	}
	// Animations could turn a harmless link into a javascript: one.
	if (element == "set" || element == "animate") && name == "attributename" && strings.HasSuffix(strings.ToLower(a.Value), "href") {
		return true
	}
	return unsafeURL(a.Value)
}

// unsafeURL finds javascript:, vbscript: and non-image data: URLs, also
// when spelled with whitespace or control characters inside, as browsers
// ignore those.
func unsafeURL(v string) bool {
	var b strings.Builder
	for _, r := range strings.ToLower(v) {
		if r > ' ' {
			b.WriteRune(r)
		}
	}
	s := b.String()
	if strings.Contains(s, "javascript:") || strings.Contains(s, "vbscript:") {
		return true
	}
	for i := strings.Index(s, "data:"); i >= 0; {
		if !strings.HasPrefix(s[i+5:], "image/") || strings.HasPrefix(s[i+5:], "image/svg") {
			return true
		}
		next := strings.Index(s[i+5:], "data:")
		if next < 0 {
			break
		}
		i += 5 + next
	}
	return false
}
