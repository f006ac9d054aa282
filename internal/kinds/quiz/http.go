package quiz

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/gift"
	"github.com/lms-platform/lms/internal/httpx"
)

type startInput struct {
	Body struct {
		TopicID int64 `json:"topic_id" minimum:"1" doc:"The quiz topic."`
	}
}

type mineInput struct {
	httpx.PageQuery
	TopicID int64 `query:"topic_id" minimum:"0" doc:"Only attempts at this quiz topic."`
}

type idInput struct {
	ID int64 `path:"id" doc:"Attempt id."`
}

type answerInput struct {
	ID   int64 `path:"id" doc:"Attempt id."`
	Body struct {
		QuestionID int64         `json:"question_id" doc:"A question of the attempt."`
		Answer     gift.Response `json:"answer" doc:"choices (multiple choice: option indexes), truth (true/false), text (short answer, numerical, essay) or matches (matching: one target per item, in order)."`
	}
}

type gradeInput struct {
	ID   int64 `path:"id" doc:"Attempt id."`
	Body struct {
		QuestionID int64   `json:"question_id" doc:"An essay question of the attempt."`
		Score      float64 `json:"score" minimum:"0" doc:"Points, from 0 to the question's score."`
	}
}

type topicAttemptsInput struct {
	httpx.PageQuery
	TopicID int64 `path:"topic_id" doc:"Quiz topic id."`
}

type topicInput struct {
	TopicID int64 `path:"topic_id" doc:"Quiz topic id."`
}

type addQuestionInput struct {
	Body struct {
		TopicID int64    `json:"topic_id" minimum:"1" doc:"The quiz topic."`
		Value   string   `json:"value" minLength:"1" maxLength:"65536" doc:"One question in GIFT."`
		Score   *float64 `json:"score,omitempty" minimum:"0" maximum:"1000" doc:"Points for a fully right answer; default 1."`
	}
}

type updateQuestionInput struct {
	TopicID int64 `path:"topic_id" doc:"Quiz topic id."`
	ID      int64 `path:"id" doc:"Question id."`
	Body    struct {
		Value *string  `json:"value,omitempty" minLength:"1" maxLength:"65536" doc:"One question in GIFT."`
		Score *float64 `json:"score,omitempty" minimum:"0" maximum:"1000" doc:"Points for a fully right answer."`
	}
}

type questionInput struct {
	TopicID int64 `path:"topic_id" doc:"Quiz topic id."`
	ID      int64 `path:"id" doc:"Question id."`
}

type orderInput struct {
	TopicID int64 `path:"topic_id" doc:"Quiz topic id."`
	Body    struct {
		IDs []int64 `json:"ids" maxItems:"500" doc:"Every question id of the quiz, in the new order."`
	}
}

// route is a quiz route; scope is what a scoped token needs: attempts are
// the learner's progress, the admin routes course material.
func route(method, path string, scope httpx.Scope, summary, description string, errors ...int) httpx.Route {
	return httpx.Route{Method: method, Path: path, Scope: scope, Summary: summary, Description: description, Tags: []string{"quizzes"},
		Who: httpx.User, Errors: errors}
}

func answer[T any](v T, err error) (*httpx.Response[T], error) {
	if err != nil {
		return nil, err
	}
	return httpx.OK(v)
}

func paged[T any](list []T, q httpx.PageQuery, total int64, err error) (*httpx.PageResponse[T], error) {
	if err != nil {
		return nil, err
	}
	return httpx.Paged(list, q, total)
}

// Routes registers the learner's attempt routes (those the reference
// frontend's /bff allow-list forwards), then the admin routes of attempts
// and questions.
func Routes(api huma.API, s *Service) {
	start := route(http.MethodPost, "/api/quiz-attempts", "progress:write", "Start an attempt at a quiz topic",
		"Starts the caller's next attempt, or returns the attempt still under way (200). Refused when the quiz's maxAttempts are used. "+
			"The attempt ends itself after lms_gift_quiz.max_quiz_time minutes.", http.StatusUnprocessableEntity)
	start.Status, start.Also = http.StatusCreated, []int{http.StatusOK}
	httpx.Handle(api, start, func(ctx context.Context, in *startInput) (*httpx.Response[AttemptView], error) {
		v, created, err := s.Start(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.Body.TopicID)
		if err != nil {
			return nil, err
		}
		if !created {
			r, err := httpx.OKMessage(v, "Attempt under way.")
			r.Status = http.StatusOK
			return r, err
		}
		return httpx.Created(v, "Attempt started.")
	})
	httpx.Handle(api, route(http.MethodGet, "/api/quiz-attempts", "progress:read", "List my quiz attempts, newest first", "Without questions; filter topic_id."),
		func(ctx context.Context, in *mineInput) (*httpx.PageResponse[AttemptView], error) {
			list, total, err := s.Mine(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.TopicID, in.Offset(), in.PerPage)
			return paged(list, in.PageQuery, total, err)
		})
	httpx.Handle(api, route(http.MethodGet, "/api/quiz-attempts/{id}", "progress:read", "One of my attempts with its questions and saved answers",
		"While under way the questions show nothing of the right answers; once ended, the score and the pass. The review of each question "+
			"(right answers, feedback, points) follows the attempt's review setting: after the end (after_end), as soon as the question is answered (after_answer), or never."),
		func(ctx context.Context, in *idInput) (*httpx.Response[AttemptView], error) {
			return answer(s.Get(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID))
		})
	httpx.Handle(api, route(http.MethodPost, "/api/quiz-attempts/{id}/answer", "progress:write", "Save an answer to one question of my attempt",
		"Saved as given, replacing an earlier answer to the question; 409 once the attempt has ended or its time is over. "+
			"Under the review setting after_answer the reply holds the answer's review and the answer is final: a second answer to the question is refused (409).",
		http.StatusConflict, http.StatusUnprocessableEntity),
		func(ctx context.Context, in *answerInput) (*httpx.Response[SavedAnswer], error) {
			return answer(s.SaveAnswer(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, in.Body.QuestionID, in.Body.Answer))
		})
	httpx.Handle(api, route(http.MethodPost, "/api/quiz-attempts/{id}/end", "progress:write", "End my attempt",
		"Scores the attempt, decides its pass on the quiz's minPassScore and completes the topic when it passed (or, without a pass score, when it ended). Ending an ended attempt shows it."),
		func(ctx context.Context, in *idInput) (*httpx.Response[AttemptView], error) {
			return answer(s.End(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID))
		})

	httpx.Handle(api, route(http.MethodGet, "/api/admin/topics/{topic_id}/quiz-attempts", "courses:read", "List a quiz topic's attempts, newest first",
		"For admins and the course's tutors.", http.StatusUnprocessableEntity),
		func(ctx context.Context, in *topicAttemptsInput) (*httpx.PageResponse[AttemptView], error) {
			list, total, err := s.Attempts(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.TopicID, in.Offset(), in.PerPage)
			return paged(list, in.PageQuery, total, err)
		})
	httpx.Handle(api, route(http.MethodGet, "/api/admin/quiz-attempts/{id}", "courses:read", "Any attempt with its answers and their scores",
		"For admins and the course's tutors."),
		func(ctx context.Context, in *idInput) (*httpx.Response[AttemptView], error) {
			return answer(s.Review(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID))
		})
	httpx.Handle(api, route(http.MethodPost, "/api/admin/quiz-attempts/{id}/grade", "courses:write", "Grade an essay answer of an ended attempt",
		"The attempt's score and pass, and the learner's topic progress, follow.", http.StatusConflict, http.StatusUnprocessableEntity),
		func(ctx context.Context, in *gradeInput) (*httpx.Response[AttemptView], error) {
			return answer(s.Grade(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, in.Body.QuestionID, in.Body.Score))
		})

	add := route(http.MethodPost, "/api/admin/gift-questions", "courses:write", "Add a GIFT question to a quiz topic",
		"The question is parsed as Moodle imports GIFT; a parse error names the line and what was expected.", http.StatusUnprocessableEntity)
	add.Status = http.StatusCreated
	httpx.Handle(api, add, func(ctx context.Context, in *addQuestionInput) (*httpx.Response[QuizQuestion], error) {
		q, err := s.AddQuestion(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.Body.TopicID, in.Body.Value, in.Body.Score)
		if err != nil {
			return nil, err
		}
		return httpx.Created(q, "Question added.")
	})
	httpx.Handle(api, route(http.MethodGet, "/api/admin/topics/{topic_id}/gift-questions", "courses:read", "List a quiz topic's questions in order",
		"With their GIFT text, score and parse, right answers included: for those who may read the course.", http.StatusUnprocessableEntity),
		func(ctx context.Context, in *topicInput) (*httpx.Response[[]QuizQuestion], error) {
			return answer(s.Questions(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.TopicID))
		})
	httpx.Handle(api, route(http.MethodPut, "/api/admin/topics/{topic_id}/gift-questions/order", "courses:write", "Reorder a quiz topic's questions",
		"ids names every question once.", http.StatusUnprocessableEntity),
		func(ctx context.Context, in *orderInput) (*httpx.Response[[]QuizQuestion], error) {
			return answer(s.OrderQuestions(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.TopicID, in.Body.IDs))
		})
	httpx.Handle(api, route(http.MethodPut, "/api/admin/topics/{topic_id}/gift-questions/{id}", "courses:write", "Change a question's GIFT text or score",
		"Attempts under way keep the question as they started with it.", http.StatusUnprocessableEntity),
		func(ctx context.Context, in *updateQuestionInput) (*httpx.Response[QuizQuestion], error) {
			return answer(s.UpdateQuestion(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.TopicID, in.ID, in.Body.Value, in.Body.Score))
		})
	httpx.Handle(api, route(http.MethodDelete, "/api/admin/topics/{topic_id}/gift-questions/{id}", "courses:write", "Delete a question (idempotent)",
		"Attempts under way keep the question.", http.StatusUnprocessableEntity),
		func(ctx context.Context, in *questionInput) (*httpx.Response[*httpx.Empty], error) {
			if err := s.DeleteQuestion(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.TopicID, in.ID); err != nil {
				return nil, err
			}
			return httpx.Done("Question deleted.")
		})
}
