package oembed

import (
	"html"
	"iter"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file reads untrusted HTML: the pages searched for a discovery link
// and the html of oEmbed responses. It only looks for tags and their
// attributes; nothing it reads is passed on as markup. The iframe or image
// that reaches the stored value is written anew from checked attribute
// values, so a page the scanner misreads can at worst lose its embed.

// tag is a start or end tag with its attributes, names in lower case and
// values with character references decoded.
type tag struct {
	name  string
	end   bool
	attrs []attr
}

type attr struct{ name, value string }

func (t tag) attr(name string) (string, bool) {
	for _, a := range t.attrs {
		if a.name == name {
			return a.value, true
		}
	}
	return "", false
}

// rawText elements hold text up to their end tag, never markup.
var rawText = map[string]bool{
	"script": true, "style": true, "textarea": true, "title": true, "xmp": true,
	"iframe": true, "noembed": true, "noframes": true, "noscript": true,
}

// tags yields the tags of doc in order, skipping comments, doctypes and
// the content of raw text elements, and stopping at an unterminated tag.
func tags(doc string) iter.Seq[tag] {
	return func(yield func(tag) bool) {
		low := lowerASCII(doc)
		i := 0
		for i < len(doc) {
			j := strings.IndexByte(doc[i:], '<')
			if j < 0 {
				return
			}
			i += j
			rest := doc[i:]
			switch {
			case strings.HasPrefix(rest, "<!--"):
				k := strings.Index(rest[4:], "-->")
				if k < 0 {
					return
				}
				i += 4 + k + 3
				continue
			case strings.HasPrefix(rest, "<!"), strings.HasPrefix(rest, "<?"):
				k := strings.IndexByte(rest, '>')
				if k < 0 {
					return
				}
				i += k + 1
				continue
			case strings.HasPrefix(rest, "</"):
				k := strings.IndexByte(rest, '>')
				if k < 0 {
					return
				}
				if name, _ := tagName(low[i+2 : i+k]); name != "" {
					if !yield(tag{name: name, end: true}) {
						return
					}
				}
				i += k + 1
				continue
			}
			name, n := tagName(low[i+1:])
			if name == "" {
				i++ // a "<" that starts no tag is text
				continue
			}
			attrs, used, ok := scanAttrs(doc[i+1+n:])
			if !ok {
				return
			}
			i += 1 + n + used
			if !yield(tag{name: name, attrs: attrs}) {
				return
			}
			if name == "plaintext" {
				return
			}
			if rawText[name] {
				k := endTag(low[i:], name)
				if k < 0 {
					return
				}
				i += k
			}
		}
	}
}

// tagName reads a tag name from the start of s (already in lower case):
// a letter, then anything up to a space, "/" or ">". It returns the name
// and its length, or "" when s starts no name.
func tagName(s string) (string, int) {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return "", 0
	}
	n := 1
	for n < len(s) && !isSpace(s[n]) && s[n] != '/' && s[n] != '>' {
		n++
	}
	return s[:n], n
}

// endTag returns the index in low of the end tag of a raw text element,
// or -1.
func endTag(low, name string) int {
	from := 0
	for {
		k := strings.Index(low[from:], "</"+name)
		if k < 0 {
			return -1
		}
		at := from + k
		after := at + 2 + len(name)
		if after == len(low) || isSpace(low[after]) || low[after] == '/' || low[after] == '>' {
			return at
		}
		from = after
	}
}

// scanAttrs reads attributes up to and including the ">" that ends a tag.
// It returns them, the bytes used, and false when the tag does not end.
// The first of two attributes with one name wins, as in browsers.
func scanAttrs(s string) ([]attr, int, bool) {
	var attrs []attr
	i := 0
	for {
		for i < len(s) && (isSpace(s[i]) || s[i] == '/') {
			i++
		}
		if i >= len(s) {
			return nil, 0, false
		}
		if s[i] == '>' {
			return attrs, i + 1, true
		}
		start := i
		i++ // the first character is part of the name even if it is "="
		for i < len(s) && !isSpace(s[i]) && s[i] != '/' && s[i] != '>' && s[i] != '=' {
			i++
		}
		name := lowerASCII(s[start:i])
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		value := ""
		if i < len(s) && s[i] == '=' {
			i++
			for i < len(s) && isSpace(s[i]) {
				i++
			}
			if i >= len(s) {
				return nil, 0, false
			}
			switch q := s[i]; q {
			case '"', '\'':
				k := strings.IndexByte(s[i+1:], q)
				if k < 0 {
					return nil, 0, false
				}
				value = s[i+1 : i+1+k]
				i += k + 2
			case '>':
			default:
				v := i
				for i < len(s) && !isSpace(s[i]) && s[i] != '>' {
					i++
				}
				value = s[v:i]
			}
		}
		if !hasAttr(attrs, name) {
			attrs = append(attrs, attr{name: name, value: html.UnescapeString(value)})
		}
	}
}

func hasAttr(attrs []attr, name string) bool {
	for _, a := range attrs {
		if a.name == name {
			return true
		}
	}
	return false
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// lowerASCII lowers ASCII letters only, so indexes into the result are
// indexes into s.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'A' && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// discover returns the JSON oEmbed endpoint a page announces in its head
// (<link rel="alternate" type="application/json+oembed" href="...">),
// resolved against base, or "" when it announces none.
func discover(doc string, base *url.URL) string {
	for t := range tags(doc) {
		if (t.end && t.name == "head") || (!t.end && t.name == "body") {
			break
		}
		if t.end || t.name != "link" {
			continue
		}
		rel, _ := t.attr("rel")
		typ, _ := t.attr("type")
		href, _ := t.attr("href")
		if !hasToken(rel, "alternate") || !isJSONOEmbed(typ) {
			continue
		}
		href = strings.TrimSpace(href)
		if href == "" {
			continue
		}
		ref, err := url.Parse(href)
		if err != nil {
			continue
		}
		u := base.ResolveReference(ref)
		if (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
			return u.String()
		}
	}
	return ""
}

func hasToken(list, token string) bool {
	for _, f := range strings.Fields(list) {
		if strings.EqualFold(f, token) {
			return true
		}
	}
	return false
}

// isJSONOEmbed accepts the media type of the spec and the "text/" variant
// some sites announce, with parameters.
func isJSONOEmbed(typ string) bool {
	typ, _, _ = strings.Cut(typ, ";")
	typ = strings.ToLower(strings.TrimSpace(typ))
	return typ == "application/json+oembed" || typ == "text/json+oembed"
}

// Attributes of the iframes written by embedHTML.
const (
	iframeSandbox  = "allow-scripts allow-same-origin allow-presentation allow-popups"
	iframeReferrer = "strict-origin-when-cross-origin"
)

// safeFeatures are the permissions an embedded player may ask for in its
// allow attribute; camera, microphone, geolocation, payment and the like
// are dropped.
var safeFeatures = map[string]bool{
	"accelerometer": true, "autoplay": true, "clipboard-write": true, "encrypted-media": true,
	"fullscreen": true, "gyroscope": true, "picture-in-picture": true, "web-share": true,
}

// embedHTML returns an iframe written from the first iframe of doc whose
// src is an https URL on a host allowed reports true for, or "" when doc
// has none. Everything else in doc is dropped.
func embedHTML(doc string, allowed func(host string) bool) string {
	for t := range tags(doc) {
		if t.end || t.name != "iframe" {
			continue
		}
		src, _ := t.attr("src")
		u := httpsURL(src)
		if u == nil || !allowed(u.Hostname()) {
			continue
		}
		var b strings.Builder
		b.WriteString(`<iframe src="`)
		b.WriteString(html.EscapeString(u.String()))
		b.WriteString(`"`)
		for _, name := range []string{"width", "height"} {
			if v, _ := t.attr(name); isDimension(v) {
				b.WriteString(" " + name + `="` + v + `"`)
			}
		}
		if title, _ := t.attr("title"); strings.TrimSpace(title) != "" {
			b.WriteString(` title="` + html.EscapeString(clip(strings.TrimSpace(title), 300)) + `"`)
		}
		if allow := allowList(t); allow != "" {
			b.WriteString(` allow="` + allow + `"`)
		}
		if _, ok := t.attr("allowfullscreen"); ok {
			b.WriteString(" allowfullscreen")
		}
		b.WriteString(` sandbox="` + iframeSandbox + `" referrerpolicy="` + iframeReferrer +
			`" loading="lazy" frameborder="0"></iframe>`)
		return b.String()
	}
	return ""
}

// photoHTML is the img of a photo response, or "" when its URL is not
// https.
func photoHTML(src, alt string, width, height int) string {
	u := httpsURL(src)
	if u == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<img src="` + html.EscapeString(u.String()) + `"`)
	if width > 0 {
		b.WriteString(` width="` + strconv.Itoa(width) + `"`)
	}
	if height > 0 {
		b.WriteString(` height="` + strconv.Itoa(height) + `"`)
	}
	b.WriteString(` alt="` + html.EscapeString(alt) + `" loading="lazy" referrerpolicy="` + iframeReferrer + `">`)
	return b.String()
}

// httpsURL parses an https URL with a host and no user information;
// protocol-relative URLs ("//host/path") are taken as https.
func httpsURL(s string) *url.URL {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "//") {
		s = "https:" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Hostname() == "" || u.User != nil || u.Opaque != "" {
		return nil
	}
	if p := u.Port(); p != "" && p != "443" {
		return nil
	}
	return u
}

// isDimension accepts pixels or a percentage: "640", "100%".
func isDimension(v string) bool {
	v = strings.TrimSuffix(v, "%")
	if v == "" || len(v) > 5 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// allowList keeps the safe features of the iframe's allow attribute, with
// their default allowlist (the iframe's own origin); the legacy
// allowfullscreen attribute stays separate.
func allowList(t tag) string {
	v, _ := t.attr("allow")
	var keep []string
	for _, directive := range strings.Split(v, ";") {
		fields := strings.Fields(directive)
		if len(fields) == 0 {
			continue
		}
		f := strings.ToLower(fields[0])
		if safeFeatures[f] && !slices.Contains(keep, f) {
			keep = append(keep, f)
		}
	}
	return strings.Join(keep, "; ")
}

// clip cuts s to at most n runes and makes it valid UTF-8.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n])
}
