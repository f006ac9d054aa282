// Package quickcheck makes H5P packages of "Quick check" quizzes: a few
// multiple-choice questions that complete the content, with its score,
// when the learner checks them all answered.
//
// The package holds the content type that plays them, LMS.QuickCheck, in
// library/ (library.json, semantics.json, quickcheck.js, quickcheck.css):
// our own code, written for the platform, so the demo can show a working
// H5P exercise without third-party packages. Package writes that library
// into every .h5p archive it makes, beside h5p.json and the quiz as
// content/content.json.
package quickcheck

import (
	"archive/zip"
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lms-platform/lms/internal/h5p/h5ppackage"
)

//go:embed library
var library embed.FS

// Limits of a quiz, as semantics.json states them.
const (
	MaxQuestions = 10
	MinAnswers   = 2
	MaxAnswers   = 6
)

// Quiz is the content of one package.
type Quiz struct {
	// Title is the content's title (h5p.json), at most 255 characters.
	Title string
	// Language is the content's language code; "en" when empty.
	Language string
	// Intro is an optional sentence shown above the questions.
	Intro     string
	Questions []Question
}

// Question is one multiple-choice question. All texts are plain text.
type Question struct {
	Text    string
	Answers []string
	// Correct is the index of the right answer in Answers.
	Correct int
	// Explanation, optional, is shown once the question is answered
	// correctly or its solution is shown.
	Explanation string
}

// MachineName is the content type's machine name in library.json; its
// constructor is window.LMS.QuickCheck, where the H5P core looks for it.
const MachineName = "LMS.QuickCheck"

func libraryJSON() (h5ppackage.LibraryJSON, error) {
	var lib h5ppackage.LibraryJSON
	raw, err := library.ReadFile("library/library.json")
	if err != nil {
		return lib, err
	}
	if !json.Valid(raw) {
		return lib, errors.New("quickcheck: library.json is not valid JSON")
	}
	err = json.Unmarshal(raw, &lib)
	return lib, err
}

// Validate reports what makes the quiz unusable, every problem at once.
func (q Quiz) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("quickcheck: "+format, args...)) }
	if strings.TrimSpace(q.Title) == "" || utf8.RuneCountInString(q.Title) > 255 {
		bad("the title must have 1 to 255 characters")
	}
	if n := len(q.Questions); n == 0 || n > MaxQuestions {
		bad("a quiz has 1 to %d questions, not %d", MaxQuestions, n)
	}
	for i, qu := range q.Questions {
		if strings.TrimSpace(qu.Text) == "" {
			bad("question %d has no text", i+1)
		}
		if n := len(qu.Answers); n < MinAnswers || n > MaxAnswers {
			bad("question %d has %d answers; it needs %d to %d", i+1, n, MinAnswers, MaxAnswers)
		}
		for j, a := range qu.Answers {
			if strings.TrimSpace(a) == "" {
				bad("answer %d of question %d is empty", j+1, i+1)
			}
		}
		if qu.Correct < 0 || qu.Correct >= len(qu.Answers) {
			bad("question %d: the correct answer %d is not one of its answers", i+1, qu.Correct+1)
		}
	}
	return errors.Join(errs...)
}

// Params are the content parameters (content/content.json), in the shape
// semantics.json describes.
type Params struct {
	Intro     string          `json:"intro,omitempty"`
	Questions []ParamQuestion `json:"questions"`
}

// ParamQuestion is a question of Params.
type ParamQuestion struct {
	Text        string        `json:"text"`
	Answers     []ParamAnswer `json:"answers"`
	Explanation string        `json:"explanation,omitempty"`
}

// ParamAnswer is an answer of ParamQuestion.
type ParamAnswer struct {
	Text    string `json:"text"`
	Correct bool   `json:"correct"`
}

// Params returns the content parameters of the quiz. The texts of the
// player (buttons, messages) keep the content type's English defaults.
func (q Quiz) Params() Params {
	p := Params{Intro: strings.TrimSpace(q.Intro), Questions: make([]ParamQuestion, len(q.Questions))}
	for i, qu := range q.Questions {
		pq := ParamQuestion{Text: strings.TrimSpace(qu.Text), Explanation: strings.TrimSpace(qu.Explanation),
			Answers: make([]ParamAnswer, len(qu.Answers))}
		for j, a := range qu.Answers {
			pq.Answers[j] = ParamAnswer{Text: strings.TrimSpace(a), Correct: j == qu.Correct}
		}
		p.Questions[i] = pq
	}
	return p
}

// h5pJSON is the package definition, h5p.json.
type h5pJSON struct {
	Title                 string                  `json:"title"`
	Language              string                  `json:"language"`
	MainLibrary           string                  `json:"mainLibrary"`
	EmbedTypes            []string                `json:"embedTypes"`
	License               string                  `json:"license"`
	DefaultLanguage       string                  `json:"defaultLanguage"`
	PreloadedDependencies []h5ppackage.Dependency `json:"preloadedDependencies"`
}

// built is the modification time of every archive entry, so that the same
// quiz always makes the same bytes.
var built = time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC)

// Package returns the quiz as an .h5p archive with the LMS.QuickCheck
// library in it.
func Package(q Quiz) ([]byte, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	lib, err := libraryJSON()
	if err != nil {
		return nil, fmt.Errorf("quickcheck: library.json: %w", err)
	}
	lang := q.Language
	if lang == "" {
		lang = "en"
	}
	def, err := json.MarshalIndent(h5pJSON{
		Title: strings.TrimSpace(q.Title), Language: lang, DefaultLanguage: lang, MainLibrary: lib.MachineName,
		EmbedTypes: []string{"div", "iframe"}, License: "U",
		PreloadedDependencies: []h5ppackage.Dependency{
			{MachineName: lib.MachineName, MajorVersion: lib.MajorVersion, MinorVersion: lib.MinorVersion}},
	}, "", "  ")
	if err != nil {
		return nil, err
	}
	params, err := json.MarshalIndent(q.Params(), "", "  ")
	if err != nil {
		return nil, err
	}

	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name string, data []byte) error {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: built})
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	if err := add("h5p.json", def); err != nil {
		return nil, err
	}
	if err := add("content/content.json", params); err != nil {
		return nil, err
	}
	dir := lib.Dir()
	err = fs.WalkDir(library, "library", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := library.ReadFile(path)
		if err != nil {
			return err
		}
		return add(dir+strings.TrimPrefix(path, "library"), data)
	})
	if err != nil {
		return nil, fmt.Errorf("quickcheck: library files: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
