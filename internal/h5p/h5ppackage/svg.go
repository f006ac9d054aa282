package h5ppackage

import (
	"bytes"
	"encoding/xml"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"
)

// UnsafeSVG reports whether an SVG document could run script when a
// browser renders it from our origin: script elements, event-handler
// attributes (onload=...), javascript:, vbscript: or data:text/html URLs
// (also when hidden behind character references, entities or
// whitespace), and elements that embed other documents (foreignObject,
// iframe, embed, object, handler). It errs on the side of "unsafe": a
// document it cannot parse is judged by a plain text scan.
func UnsafeSVG(data []byte) bool {
	if norm := normalizeMarkup(data); containsScriptURL(norm) || bytes.Contains(norm, []byte("<script")) {
		return true
	}
	entities, ok := declaredEntities(data)
	if !ok {
		return true // an entity expansion bomb is hostile in itself
	}
	return unsafeMarkup(data, entities)
}

var (
	scriptURLMarkers = [][]byte{[]byte("javascript:"), []byte("vbscript:"), []byte("data:text/html")}
	embeddingTags    = map[string]bool{"script": true, "foreignobject": true, "iframe": true,
		"embed": true, "object": true, "handler": true}

	entityDeclRe = regexp.MustCompile(`<!ENTITY\s+([A-Za-z_][\w.:\-]*)\s+(?:"([^"]*)"|'([^']*)')\s*>`)
	entityRefRe  = regexp.MustCompile(`&([A-Za-z_][\w.:\-]*);`)
	// For documents the XML decoder gives up on.
	eventAttrRe = regexp.MustCompile(`(?i)<[^>]*[\s/"']on[a-z]+\s*=`)
	embedTagRe  = regexp.MustCompile(`(?i)<\s*(foreignobject|iframe|embed|object|handler)[\s/>]`)
)

func containsScriptURL(norm []byte) bool {
	for _, m := range scriptURLMarkers {
		if bytes.Contains(norm, m) {
			return true
		}
	}
	return false
}

// unsafeMarkup walks the elements and attributes of the document.
func unsafeMarkup(data []byte, entities map[string]string) bool {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = false
	d.Entity = entities
	// Without a transcoder, read any declared charset as-is: the markers
	// looked for are ASCII.
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return false
		}
		if err != nil {
			return eventAttrRe.Match(data) || embedTagRe.Match(data)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if embeddingTags[strings.ToLower(el.Name.Local)] {
			return true
		}
		for _, a := range el.Attr {
			name := strings.ToLower(a.Name.Local)
			value := normalizeMarkup([]byte(a.Value))
			switch {
			case strings.HasPrefix(name, "on"),
				containsScriptURL(value),
				// <set attributeName="onclick" to="...">
				name == "attributename" && bytes.HasPrefix(value, []byte("on")):
				return true
			}
		}
	}
}

// declaredEntities returns the internal entities the document declares,
// fully expanded, plus the HTML named references that browsers decode in
// inline SVG and attackers use to hide "javascript:". ok is false when the
// expansion grows past a sane size or depth.
func declaredEntities(data []byte) (map[string]string, bool) {
	entities := map[string]string{"colon": ":", "Tab": "\t", "NewLine": "\n"}
	defs := map[string]string{}
	for _, m := range entityDeclRe.FindAllSubmatch(data, -1) {
		defs[string(m[1])] = string(m[2]) + string(m[3])
	}
	budget := 1 << 20
	var expand func(name string, depth int) (string, bool)
	expand = func(name string, depth int) (string, bool) {
		if depth > 8 {
			return "", false
		}
		ok := true
		out := entityRefRe.ReplaceAllStringFunc(defs[name], func(ref string) string {
			inner := ref[1 : len(ref)-1]
			if _, declared := defs[inner]; !declared || !ok {
				return ref
			}
			s, good := expand(inner, depth+1)
			ok = ok && good
			return s
		})
		budget -= len(out)
		return out, ok && budget >= 0
	}
	for name := range defs {
		s, ok := expand(name, 0)
		if !ok {
			return nil, false
		}
		entities[name] = s
	}
	return entities, true
}

// normalizeMarkup lower-cases ASCII, decodes numeric character references
// and &colon; &tab; &newline;, and drops whitespace and control bytes, so
// "Java&#x09;Script&colon;" reads "javascript:".
func normalizeMarkup(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		if c == '&' {
			if r, n := decodeReference(b[i:]); n > 0 {
				i += n
				if r < utf8.RuneSelf {
					out = appendFolded(out, byte(r))
				} else {
					out = utf8.AppendRune(out, r)
				}
				continue
			}
		}
		out = appendFolded(out, c)
		i++
	}
	return out
}

func appendFolded(out []byte, c byte) []byte {
	switch {
	case c <= ' ' || c == 0x7f:
		return out
	case c >= 'A' && c <= 'Z':
		return append(out, c+'a'-'A')
	}
	return append(out, c)
}

// decodeReference decodes the character reference at the start of b and
// returns the rune and the bytes used, or n == 0 when there is none.
func decodeReference(b []byte) (r rune, n int) {
	if len(b) < 3 || b[0] != '&' {
		return 0, 0
	}
	if b[1] != '#' {
		for _, named := range []struct {
			name string
			r    rune
		}{{"colon;", ':'}, {"tab;", '\t'}, {"newline;", '\n'}} {
			if len(b) >= 1+len(named.name) && strings.EqualFold(string(b[1:1+len(named.name)]), named.name) {
				return named.r, 1 + len(named.name)
			}
		}
		return 0, 0
	}
	i, base := 2, 10
	if b[2] == 'x' || b[2] == 'X' {
		i, base = 3, 16
	}
	start, v := i, 0
	for ; i < len(b) && i-start < 10; i++ {
		d := digitValue(b[i], base)
		if d < 0 {
			break
		}
		v = v*base + d
	}
	if i == start {
		return 0, 0
	}
	if i < len(b) && b[i] == ';' {
		i++
	}
	if v > utf8.MaxRune {
		v = utf8.RuneError
	}
	return rune(v), i
}

func digitValue(c byte, base int) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case base == 16 && c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case base == 16 && c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
