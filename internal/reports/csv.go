package reports

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Exports are read by spreadsheets, which run a cell that starts with =,
// +, - or @ as a formula (and some also after a tab or carriage return):
// such a cell is written with a leading apostrophe, which shows it as
// text. Names, e-mail addresses and titles are the learners' and authors'
// own words, so every text cell passes through safe.
func safe(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return "'" + v
	}
	return v
}

// table writes rows as CSV (RFC 4180, CRLF line ends) with a byte order
// mark, so that spreadsheets read the UTF-8 of names in any script.
func table(header []string, rows [][]string) []byte {
	var buf bytes.Buffer
	buf.WriteString("\ufeff")
	w := csv.NewWriter(&buf)
	w.UseCRLF = true
	for _, r := range append([][]string{header}, rows...) {
		for i := range r {
			r[i] = safe(r[i])
		}
		// A bytes.Buffer does not fail; Flush reports nothing else.
		_ = w.Write(r)
	}
	w.Flush()
	return buf.Bytes()
}

func csvTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func csvFloat(f *float64) string {
	if f == nil {
		return ""
	}
	return strconv.FormatFloat(*f, 'f', -1, 64)
}

// statusNames are the words of topic statuses in exports.
var statusNames = map[int]string{0: "incomplete", 1: "complete", 2: "in progress"}

func cellText(c GradebookCell) string {
	s := statusNames[c.Status]
	if c.Score != nil {
		s += fmt.Sprintf(" (%s/%s)", strconv.FormatFloat(c.Score.Raw, 'f', -1, 64), strconv.FormatFloat(c.Score.Max, 'f', -1, 64))
	}
	return s
}

// courseCSV is a course's gradebook: a learner a row, the summary columns,
// then a column per visible topic with the learner's status (and score).
func courseCSV(ts []GradebookTopic, ls []GradebookLearner) []byte {
	header := []string{"user_id", "name", "email", "status", "percent", "finished_topics", "total_topics", "score",
		"score_raw", "score_max", "seconds", "started_at", "finished_at", "deadline", "last_activity_at"}
	for _, t := range ts {
		header = append(header, t.LessonTitle+" / "+t.Title)
	}
	rows := make([][]string, len(ls))
	for i, l := range ls {
		r := []string{strconv.FormatInt(l.UserID, 10), l.Name, l.Email, l.Status, strconv.Itoa(l.Percent),
			strconv.Itoa(l.FinishedTopics), strconv.Itoa(l.TotalTopics), csvFloat(l.Score), csvFloat(l.ScoreRaw),
			csvFloat(l.ScoreMax), strconv.FormatInt(l.Seconds, 10), csvTime(l.StartedAt), csvTime(l.FinishedAt),
			csvTime(l.Deadline), csvTime(l.LastActivityAt)}
		for _, c := range l.Topics {
			r = append(r, cellText(c))
		}
		rows[i] = r
	}
	return table(header, rows)
}

// learnerCSV is one learner's progress: a topic a row, with a summary of
// its tracks.
func learnerCSV(d GradebookDetail) []byte {
	header := []string{"topic_id", "lesson", "topic", "kind", "status", "seconds", "score_raw", "score_max",
		"started_at", "finished_at", "last_activity_at", "tracks"}
	rows := make([][]string, len(d.Topics))
	for i, t := range d.Topics {
		var raw, outOf *float64
		if t.Score != nil {
			raw, outOf = &t.Score.Raw, &t.Score.Max
		}
		rows[i] = []string{strconv.FormatInt(t.ID, 10), t.LessonTitle, t.Title, t.Kind, statusNames[t.Status],
			strconv.FormatInt(t.Seconds, 10), csvFloat(raw), csvFloat(outOf), csvTime(t.StartedAt), csvTime(t.FinishedAt),
			csvTime(t.LastActivityAt), t.LearnerTracks.String()}
	}
	return table(header, rows)
}

// String sums the tracks up in a few words, for exports and pages.
func (tr LearnerTracks) String() string {
	var parts []string
	if s := tr.SCORM; s != nil {
		p := fmt.Sprintf("SCORM: %s", s.Status)
		if s.Score != nil {
			p += ", score " + csvFloat(s.Score)
		}
		parts = append(parts, p)
	}
	if c := tr.CMI5; c != nil {
		parts = append(parts, fmt.Sprintf("cmi5: %d statements, last %s", c.Statements, c.LastVerb))
	}
	if q := tr.Quiz; q != nil {
		p := fmt.Sprintf("quiz: %d attempts", q.Attempts)
		if q.BestScore != nil {
			p += ", best " + csvFloat(q.BestScore) + "%"
		}
		parts = append(parts, p)
	}
	if h := tr.H5P; h != nil {
		p := fmt.Sprintf("H5P: %d statements", h.Statements)
		if h.Score != nil && h.MaxScore != nil {
			p += ", score " + csvFloat(h.Score) + "/" + csvFloat(h.MaxScore)
		}
		parts = append(parts, p)
	}
	if pr := tr.Project; pr != nil {
		names := make([]string, len(pr.Submissions))
		for i, s := range pr.Submissions {
			names[i] = s.Name
		}
		parts = append(parts, fmt.Sprintf("project: %d files (%s)", len(names), strings.Join(names, ", ")))
	}
	return strings.Join(parts, "; ")
}
