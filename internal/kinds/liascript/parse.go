package liascript

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Header is what the course's header comment declares.
type Header struct {
	Author   string   `json:"author,omitempty"`
	Email    string   `json:"email,omitempty"`
	Version  string   `json:"version,omitempty"`
	Language string   `json:"language,omitempty"`
	Narrator string   `json:"narrator,omitempty"`
	Logo     string   `json:"logo,omitempty"`
	Comment  string   `json:"comment,omitempty"`
	Imports  []string `json:"imports,omitempty" doc:"Templates the course imports (URLs); never fetched by the server."`
	Scripts  []string `json:"scripts,omitempty" doc:"Scripts the course loads (URLs); never fetched by the server."`
}

// Section is one heading of the course and the quizzes under it.
type Section struct {
	Level   int    `json:"level" doc:"Heading level, 1 to 6."`
	Title   string `json:"title"`
	Quizzes int    `json:"quizzes" doc:"Number of quizzes in the section (before the next heading)."`
}

// Structure is what Parse finds in a course.
type Structure struct {
	Title    string    `json:"title"`
	Header   Header    `json:"header"`
	Sections []Section `json:"sections"`
	Quizzes  int       `json:"quizzes" doc:"Quizzes of the whole course; numbered from 0 in document order."`
}

// Limits of what Parse keeps.
const (
	maxField    = 1000
	maxList     = 50
	maxSections = 2000
)

var (
	headerKey = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_.-]*)\s*:\s?(.*)$`)
	heading   = regexp.MustCompile(`^(#{1,6})\s+(.+?)\s*#*\s*$`)
	// A choice line: [[X]] or [[ ]] (multiple), [(X)] or [( )] (single).
	choiceLine = regexp.MustCompile(`^\s*(\[\[[ xX]\]\]|\[\([ xX]\)\])\s+\S`)
	// A text or selection quiz alone on its line: [[answer]], [[a|(b)]].
	textLine = regexp.MustCompile(`^\s*\[\[[^\]\[?][^\]\[]*\]\]\s*$`)
	hintLine = regexp.MustCompile(`^\s*\[\[\?\]\]`)
)

// Parse reads the header comment and the structure of a LiaScript course:
// its sections (headings outside code blocks and comments) and the quizzes
// of each. It never fails: what it cannot read it leaves out.
func Parse(md string) Structure {
	md = strings.ReplaceAll(strings.ToValidUTF8(md, "\uFFFD"), "\r\n", "\n")
	s := Structure{Sections: []Section{}}
	body := md
	if trimmed := strings.TrimLeft(md, " \t\n\ufeff"); strings.HasPrefix(trimmed, "<!--") {
		// The comment ends after its opening: "<!-->" opens one.
		if end := strings.Index(trimmed[4:], "-->"); end >= 0 {
			s.Header = parseHeader(trimmed[4 : 4+end])
			body = trimmed[4+end+3:]
		}
	}
	fence := ""
	inComment := false
	inQuiz := false
	for _, line := range strings.Split(body, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case inComment:
			if strings.Contains(line, "-->") {
				inComment = false
			}
			continue
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
			fence = trimmed[:3]
			inQuiz = false
			continue
		case strings.HasPrefix(trimmed, "<!--") && !strings.Contains(trimmed, "-->"):
			inComment = true
			continue
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			inQuiz = false
			if len(s.Sections) < maxSections {
				s.Sections = append(s.Sections, Section{Level: len(m[1]), Title: clip(m[2])})
			}
			if s.Title == "" && len(m[1]) == 1 {
				s.Title = clip(m[2])
			}
			continue
		}
		switch {
		case hintLine.MatchString(line):
			// Hints belong to the quiz above them.
		case choiceLine.MatchString(line):
			if !inQuiz {
				s.addQuiz()
			}
			inQuiz = true
		case textLine.MatchString(line):
			s.addQuiz()
			inQuiz = true
		default:
			if trimmed != "" {
				inQuiz = false
			}
		}
	}
	if s.Title == "" && len(s.Sections) > 0 {
		s.Title = s.Sections[0].Title
	}
	return s
}

func (s *Structure) addQuiz() {
	s.Quizzes++
	if n := len(s.Sections); n > 0 {
		s.Sections[n-1].Quizzes++
	}
}

// parseHeader reads "key: value" lines; indented lines continue the value
// above; macros (@name ... @end, @name: value) are skipped.
func parseHeader(text string) Header {
	var h Header
	values := map[string][]string{}
	key := ""
	inMacro := false
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if inMacro {
			if trimmed == "@end" {
				inMacro = false
			}
			continue
		}
		if strings.HasPrefix(trimmed, "@") && line == strings.TrimLeft(line, " \t") {
			key = ""
			if !strings.Contains(trimmed, ":") {
				inMacro = true
			}
			continue
		}
		if m := headerKey.FindStringSubmatch(line); m != nil {
			key = strings.ToLower(m[1])
			if v := strings.TrimSpace(m[2]); v != "" {
				values[key] = append(values[key], v)
			}
			continue
		}
		if trimmed == "" {
			continue
		}
		if key != "" && line != strings.TrimLeft(line, " \t") {
			values[key] = append(values[key], trimmed)
		}
	}
	first := func(k string) string {
		if v := values[k]; len(v) > 0 {
			return clip(v[0])
		}
		return ""
	}
	h.Author, h.Email, h.Version = first("author"), first("email"), first("version")
	h.Language, h.Narrator, h.Logo = first("language"), first("narrator"), first("logo")
	h.Comment = clip(strings.Join(values["comment"], " "))
	h.Imports = list(values["import"])
	h.Scripts = list(values["script"])
	return h
}

// list splits the lines of a multi-value field into its entries.
func list(lines []string) []string {
	var out []string
	for _, l := range lines {
		for _, f := range strings.Fields(l) {
			if len(out) < maxList {
				out = append(out, clip(f))
			}
		}
	}
	return out
}

func clip(s string) string {
	if len(s) <= maxField {
		return s
	}
	s = s[:maxField]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
