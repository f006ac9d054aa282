package liascript

import (
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/fixtures"
)

func TestParseWorkshop(t *testing.T) {
	s := Parse(string(fixtures.Read(t, "liascript/workshop.md")))
	h := s.Header
	if h.Author != "Sebastian Zug & André Dietrich" || h.Version != "0.0.6" || h.Language != "de" || h.Narrator != "Deutsch Male" ||
		h.Logo != "logo.jpg" || len(h.Imports) != 4 || h.Imports[0] != "https://github.com/liaTemplates/rextester" || len(h.Scripts) != 5 {
		t.Errorf("header %+v", h)
	}
	if s.Title != "Freie Lehr-Lern-Materialien ohne Wenn und Aber" || len(s.Sections) != 33 {
		t.Errorf("title %q, %d sections", s.Title, len(s.Sections))
	}
	var quizSection string
	for _, sec := range s.Sections {
		if sec.Quizzes > 0 {
			quizSection += sec.Title + " "
		}
	}
	if s.Quizzes != 2 || strings.TrimSpace(quizSection) != "Quizfrage?" {
		t.Errorf("%d quizzes in %q", s.Quizzes, quizSection)
	}
}

func TestParseRules(t *testing.T) {
	s := Parse("<!--\nauthor: A\n@macro\n# not a heading\n@end\n-->\n# One\n\n```\n# in code\n[[x]]\n```\n\n## Two\n\n[( )] a\n[(X)] b\n\n[[word]]\n[[?]] hint\n\n<!--\n# hidden\n-->\n### Three\ntext [[inline]] here\n")
	if s.Header.Author != "A" || len(s.Sections) != 3 || s.Sections[1].Quizzes != 2 || s.Quizzes != 2 || s.Sections[2].Level != 3 {
		t.Errorf("%+v", s)
	}
}

// FuzzParse checks that any input parses without panicking into a
// structure whose counts agree.
func FuzzParse(f *testing.F) {
	f.Add("<!--\nauthor: A\nimport: https://x.org/a\n        https://x.org/b\n-->\n# T\n[[X]] a\n[[ ]] b\n## S\n[[w]]\n")
	f.Add("# A\n```\n# B\n")
	f.Add("<!-- unterminated\n# A")
	f.Fuzz(func(t *testing.T, md string) {
		s := Parse(md)
		total := 0
		for _, sec := range s.Sections {
			if sec.Level < 1 || sec.Level > 6 || len(sec.Title) > maxField {
				t.Fatalf("section %+v", sec)
			}
			total += sec.Quizzes
		}
		if total > s.Quizzes || len(s.Sections) > maxSections || len(s.Header.Imports) > maxList {
			t.Fatalf("counts: %+v", s)
		}
	})
}
