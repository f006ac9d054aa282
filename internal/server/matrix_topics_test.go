package server_test

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"strconv"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
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

func matrixTopics(t *testing.T, env *apitest.Env, admin *apitest.User, lessonID int64) topicObjects {
	t.Helper()
	ctx, c := t.Context(), env.UserClient(admin)
	o := topicObjects{lesson: lessonID}
	topic := apitest.Must(c.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: o.lesson, Title: "Matrix",
		Topicable: `Lms\TopicTypeProject\Models\Project`, Instructions: client.Ptr("Upload it.")}))(t).ID
	o.topic = strconv.FormatInt(topic, 10)
	pdf := func() *client.File {
		return &client.File{Name: "matrix.pdf", Content: strings.NewReader("%PDF-1.7\n%%EOF\n")}
	}
	resource := apitest.Must(c.PostAdminTopicsIDResources(ctx, topic, client.PostAdminTopicsIDResourcesForm{Resource: pdf()}))(t)
	submission := apitest.Must(c.PostTopicsIDProject(ctx, topic, client.PostTopicsIDProjectForm{File: pdf()}))(t)
	o.resource = strconv.FormatInt(resource.ID, 10)
	o.submission = strconv.FormatInt(submission.ID, 10)
	quiz := apitest.Must(c.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: o.lesson, Title: "Matrix quiz",
		Topicable: matrixQuiz, Questions: []client.PostAdminTopicsBodyQuestionsItem{
			{Gift: client.Ptr("Matrix? {T}")}, {Gift: client.Ptr("Essay {}")}}}))(t).ID
	attempt := apitest.Must(c.PostQuizAttempts(ctx, client.StartInputBody{TopicID: quiz}))(t)
	if len(attempt.Questions) == 0 {
		t.Fatalf("matrix quiz attempt without questions: %+v", attempt)
	}
	o.quiz = strconv.FormatInt(quiz, 10)
	o.attempt = strconv.FormatInt(attempt.ID, 10)
	o.question = strconv.FormatInt(attempt.Questions[0].ID, 10)
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
