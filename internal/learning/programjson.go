package learning

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Encoding a program of hundreds of topics is most of the cost of serving
// it once the program is cached, so the cache also keeps each lesson and
// topic already encoded (by encoding/json, once), and a request only
// splices in the caller's statuses. ProgramJSON writes the same document
// as encoding the envelope of Program; a test holds them equal.

// lessonJSON is a lesson encoded without its closing brace, topics and
// child lessons.
type lessonJSON struct {
	head     []byte
	topics   []topicJSON
	children []lessonJSON
}

// topicJSON is a topic encoded without its progress and closing brace.
type topicJSON struct {
	id   int64
	head []byte
}

// marshal encodes v as the API does: HTML characters are not escaped.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// cut encodes v, whose encoding ends with suffix, and returns it without
// the suffix.
func cut(v any, suffix string) ([]byte, error) {
	b, err := marshal(v)
	if err != nil {
		return nil, err
	}
	if !bytes.HasSuffix(b, []byte(suffix)) {
		return nil, fmt.Errorf("learning: encoding of %T does not end with %s", v, suffix)
	}
	return b[:len(b)-len(suffix)], nil
}

func encodeLessons(lessons []LearnerLesson) ([]lessonJSON, error) {
	out := make([]lessonJSON, len(lessons))
	for i, l := range lessons {
		bare := l
		bare.Topics, bare.Lessons = nil, nil
		var err error
		if out[i].head, err = cut(bare, `,"topics":null,"lessons":null}`); err != nil {
			return nil, err
		}
		out[i].topics = make([]topicJSON, len(l.Topics))
		for j, topic := range l.Topics {
			topic.Progress = nil
			out[i].topics[j].id = topic.ID
			if out[i].topics[j].head, err = cut(topic, `,"progress":null}`); err != nil {
				return nil, err
			}
		}
		if out[i].children, err = encodeLessons(l.Lessons); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// appendLessons writes the lessons with each topic's progress from
// progress, or null progress when progress is nil (anonymous callers).
func appendLessons(buf []byte, lessons []lessonJSON, progress map[int64]topicProgress) []byte {
	buf = append(buf, '[')
	for i, l := range lessons {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, l.head...)
		buf = append(buf, `,"topics":[`...)
		for j, t := range l.topics {
			if j > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, t.head...)
			if progress == nil {
				buf = append(buf, `,"progress":null}`...)
				continue
			}
			tp := progress[t.id]
			buf = append(buf, `,"progress":{"status":`...)
			buf = strconv.AppendInt(buf, int64(tp.Status), 10)
			buf = append(buf, `,"seconds":`...)
			buf = strconv.AppendInt(buf, tp.Seconds, 10)
			buf = append(buf, "}}"...)
		}
		buf = append(buf, `],"lessons":`...)
		buf = appendLessons(buf, l.children, progress)
		buf = append(buf, '}')
	}
	return append(buf, ']')
}

// ProgramJSON is Program as the response body the API sends: the
// envelope {success, message, data} with the program as data. A signed-in
// caller's answer is kept whole (see answerEntries).
func (s *Service) ProgramJSON(ctx context.Context, t *platform.Tenant, q sqldb.Querier, p *access.Principal, courseID int64) (*httpx.Body, error) {
	if p == nil {
		prog, static, _, err := s.program(ctx, t, q, nil, courseID)
		if err != nil {
			return nil, err
		}
		body, err := encodeProgram(prog, static, nil)
		return httpx.FreshBody(body), err
	}
	now := s.now()
	n, err := learnerCounters(ctx, t, q, p.UserID, courseID)
	if err != nil {
		return nil, err
	}
	static, err := s.staticAt(ctx, t, q, courseID, n.program, now)
	if err != nil {
		return nil, err
	}
	answers := answersOf(t)
	key := answerKey{user: p.UserID, course: courseID}
	if a, ok := answers.Get(key, n.progress, now); ok && a.static == static && a.access == n.access {
		stale := false
		kept := func() (bool, error) {
			stale = !a.asked
			return a.assigned, nil
		}
		if err := readableBy(p, static.course, now, kept); !stale {
			if err != nil {
				return nil, err
			}
			return a.body, nil
		}
	}
	a := learnerAnswer{access: n.access, until: static.expires}
	ask := func() (bool, error) {
		ok, until, err := courses.AssignedUntil(ctx, t, now, p.UserID, courseID)
		a.asked, a.assigned = true, ok
		if until.Before(a.until) {
			a.until = until
		}
		return ok, err
	}
	if err := readableBy(p, static.course, now, ask); err != nil {
		return nil, err
	}
	prog, static, progress, err := s.program(ctx, t, q, p, courseID)
	if err != nil {
		return nil, err
	}
	a.static = static
	body, err := encodeProgram(prog, static, progress)
	if err != nil {
		return nil, err
	}
	a.body = httpx.KeptBody(body)
	answers.Put(key, n.progress, a.until, now, a)
	return a.body, nil
}

// encodeProgram writes the envelope of prog, whose lessons are static's,
// with the caller's progress (nil: anonymous).
func encodeProgram(prog LearnerProgram, static *staticProgram, progress map[int64]topicProgress) ([]byte, error) {
	summary := prog.Progress
	prog.Lessons, prog.Progress = nil, nil
	head, err := cut(prog, `,"lessons":null,"progress":null}`)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 0, len(static.anonymous)+len(static.anonymous)/4+len(head)+256)
	buf = append(buf, `{"success":true,"message":"","data":`...)
	buf = append(buf, head...)
	buf = append(buf, `,"lessons":`...)
	if summary == nil {
		buf = append(buf, static.anonymous...)
	} else {
		buf = appendLessons(buf, static.encoded, progress)
	}
	sum, err := marshal(summary)
	if err != nil {
		return nil, err
	}
	buf = append(buf, `,"progress":`...)
	buf = append(buf, sum...)
	return append(buf, "}}\n"...), nil
}
