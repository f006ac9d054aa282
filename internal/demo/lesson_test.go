package demo

import (
	"testing"

	"github.com/lms-platform/lms/internal/kinds/liascript"
)

// TestHabitsLesson: the demo's LiaScript lesson has the header, sections
// and quizzes its player reports against.
func TestHabitsLesson(t *testing.T) {
	s := liascript.Parse(habitsLesson)
	if s.Title != "Check yourself: study habits" || s.Header.Author != "LMS demo" || s.Header.Language != "en" ||
		len(s.Sections) != 4 || s.Quizzes != 2 || s.Sections[1].Quizzes != 1 || s.Sections[2].Quizzes != 1 {
		t.Fatalf("structure %+v", s)
	}
}
