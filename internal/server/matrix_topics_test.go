package server_test

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"strconv"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/kinds/interactive/interactivetest"
)

// topicObjects are what the role matrix sends topic requests about: a
// project topic in the matrix's lesson (the admin's course), with an
// attachment and a submission, and a quiz topic with a question and the
// admin's attempt.
type topicObjects struct {
	lesson                      int64
	topic, resource, submission string
	quiz, question, attempt     string
}

const matrixRichText = `Lms\TopicTypes\Models\TopicContent\RichText`

func matrixTopics(t *testing.T, env *apitest.Env, admin *apitest.User, lessonID float64) topicObjects {
	t.Helper()
	o := topicObjects{lesson: int64(lessonID)}
	topic := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: admin.Token,
		Body: map[string]any{"lesson": o.lesson, "title": "Matrix", "topicable": `Lms\TopicTypeProject\Models\Project`,
			"instructions": "Upload it."}})
	if topic.Status != 201 {
		t.Fatalf("matrix topic: %s", topic.Body)
	}
	o.topic = strconv.Itoa(int(topic.Number("data.id")))
	body, ctype := matrixUpload(t, "resource")
	resource := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics/" + o.topic + "/resources", Token: admin.Token,
		Body: body, Type: ctype})
	body, ctype = matrixUpload(t, "file")
	submission := env.Do(apitest.Request{Method: "POST", Path: "/api/topics/" + o.topic + "/project", Token: admin.Token,
		Body: body, Type: ctype})
	if resource.Status != 201 || submission.Status != 201 {
		t.Fatalf("matrix topic files: %s %s", resource.Body, submission.Body)
	}
	o.resource = strconv.Itoa(int(resource.Number("data.id")))
	o.submission = strconv.Itoa(int(submission.Number("data.id")))
	quiz := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: admin.Token,
		Body: map[string]any{"lesson": o.lesson, "title": "Matrix quiz", "topicable": matrixQuiz,
			"questions": []map[string]any{{"gift": "Matrix? {T}"}, {"gift": "Essay {}"}}}})
	attempt := env.Do(apitest.Request{Method: "POST", Path: "/api/quiz-attempts", Token: admin.Token,
		Body: map[string]any{"topic_id": quiz.Number("data.id")}})
	if quiz.Status != 201 || attempt.Status != 201 {
		t.Fatalf("matrix quiz: %s %s", quiz.Body, attempt.Body)
	}
	o.quiz = strconv.Itoa(int(quiz.Number("data.id")))
	o.attempt = strconv.Itoa(int(attempt.Number("data.id")))
	o.question = strconv.Itoa(int(attempt.Number("data.questions.0.id")))
	return o
}

const matrixQuiz = `Lms\TopicTypeGift\Models\GiftQuiz`

// isQuiz reports whether a route is about quizzes: its {topic_id} is the
// quiz, its {id} an attempt or a question.
func isQuiz(route string) bool {
	return strings.Contains(route, "quiz-attempts") || strings.Contains(route, "gift-questions")
}

func matrixUpload(t *testing.T, field string) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	part, err := w.CreateFormFile(field, "matrix.pdf")
	if err != nil {
		t.Fatal(err)
	}
	part.Write([]byte("%PDF-1.7\n%%EOF\n"))
	w.Close()
	return b.Bytes(), w.FormDataContentType()
}

func (o topicObjects) params() map[string]string {
	return map[string]string{"{topic}": o.topic, "{topic_id}": o.topic, "{resource_id}": o.resource}
}

// id is the object {id} stands for in a topic or quiz path.
func (o topicObjects) id(path string) string {
	switch {
	case strings.Contains(path, "/project/submissions/"):
		return o.submission
	case strings.Contains(path, "gift-questions"):
		return o.question
	case strings.Contains(path, "quiz-attempts"):
		return o.attempt
	}
	return o.topic
}

// body is a body with which an allowed caller's request would succeed;
// ok is false for routes that are not the topics'.
func (o topicObjects) body(t *testing.T, method, route string) (body any, ctype string, ok bool) {
	switch {
	case route == "POST /api/quiz-attempts":
		return map[string]any{"topic_id": json.Number(o.quiz)}, "", true
	case strings.HasSuffix(route, "/answer"):
		return map[string]any{"question_id": json.Number(o.question), "answer": map[string]any{"truth": true}}, "", true
	case strings.HasSuffix(route, "/grade"):
		return map[string]any{"question_id": json.Number(o.question), "score": 1}, "", true
	case route == "POST /api/admin/gift-questions":
		return map[string]any{"topic_id": json.Number(o.quiz), "value": "Another? {T}"}, "", true
	case strings.HasSuffix(route, "/gift-questions/order"):
		return map[string]any{"ids": []json.Number{json.Number(o.question)}}, "", true
	case isQuiz(route) && method == "PUT":
		return map[string]any{"score": 2}, "", true
	case method == "POST" && route == "POST /api/admin/topics":
		return map[string]any{"lesson": o.lesson, "title": "Matrix", "topicable": matrixRichText, "html": "<p>x</p>"}, "", true
	case method == "POST" && (strings.HasSuffix(route, "/resources/") || strings.HasSuffix(route, "/resources")):
		body, ctype := matrixUpload(t, "resource")
		return body, ctype, true
	case route == "POST /api/admin/interactive":
		body, ctype := interactivetest.Upload(t, interactivetest.Manifest)
		return body, ctype, true
	case route == "POST /api/topics/{topic}/project":
		body, ctype := matrixUpload(t, "file")
		return body, ctype, true
	case route == "POST /api/admin/topics/{id}/clone":
		return map[string]any{"lesson_id": o.lesson}, "", true
	case strings.HasPrefix(route, method+" /api/admin/topics/") && (method == "PUT" || method == "PATCH" || method == "POST"):
		return map[string]any{"title": "Matrix", "name": "Matrix"}, "", true
	}
	return nil, "", false
}
