package server

import (
	"context"

	"github.com/lms-platform/lms/internal/kinds/cmi5"
	"github.com/lms-platform/lms/internal/kinds/quiz"
	"github.com/lms-platform/lms/internal/kinds/scorm"
	"github.com/lms-platform/lms/internal/lrs"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/reports"
	"github.com/lms-platform/lms/internal/topics"
)

// reportRoutes registers the gradebook, which reads the learners'
// progress through learning and their tracks through the owners of each
// kind's records.
func (s *Server) reportRoutes() {
	reports.Routes(s.API, &reports.Service{Clock: s.Clock, Progress: s.Learning,
		Tracks: []reports.TrackSource{scormTracks, cmi5Tracks, quizTracks, s.h5pTracks, s.projectTracks},
		TopicSources: map[string]reports.TopicSource{"quiz": quizRecords, "scorm": scormRecords, "cmi5": cmi5Records,
			"h5p": s.h5pRecords}})
}

func scormTracks(ctx context.Context, t *platform.Tenant, userID int64, topicIDs []int64, into map[int64]*reports.LearnerTracks) error {
	found, err := scorm.TracksOf(ctx, t.DB, userID, topicIDs)
	for id, tr := range found {
		into[id].SCORM = &reports.SCORMTrack{SCOs: tr.SCOs, Status: tr.Status, Score: tr.Score, Seconds: tr.Seconds, UpdatedAt: tr.UpdatedAt}
	}
	return err
}

func cmi5Tracks(ctx context.Context, t *platform.Tenant, userID int64, topicIDs []int64, into map[int64]*reports.LearnerTracks) error {
	regs, err := cmi5.RegistrationsOf(ctx, t.DB, userID, topicIDs)
	if err != nil {
		return err
	}
	list := make([]string, 0, len(regs))
	for _, r := range regs {
		list = append(list, r)
	}
	counts, err := lrs.Registrations(ctx, t.DB, list)
	for id, r := range regs {
		c := counts[r]
		into[id].CMI5 = &reports.CMI5Track{Statements: c.Statements, LastVerb: c.LastVerb, LastAt: c.LastAt}
	}
	return err
}

func quizTracks(ctx context.Context, t *platform.Tenant, userID int64, topicIDs []int64, into map[int64]*reports.LearnerTracks) error {
	found, err := quiz.AttemptsOf(ctx, t.DB, userID, topicIDs)
	for id, tr := range found {
		into[id].Quiz = &reports.QuizTrack{Attempts: tr.Attempts, Finished: tr.Ended, BestScore: tr.BestPercent,
			Passed: tr.Passed, LastAt: tr.LastStarted}
	}
	return err
}

func (s *Server) h5pTracks(ctx context.Context, t *platform.Tenant, userID int64, topicIDs []int64, into map[int64]*reports.LearnerTracks) error {
	found, err := s.Learning.H5PTracks(ctx, t, userID, topicIDs)
	for id, tr := range found {
		into[id].H5P = &reports.H5PTrack{Statements: tr.Statements, LastVerb: tr.LastVerb, Score: tr.Score,
			MaxScore: tr.MaxScore, LastAt: tr.LastAt}
	}
	return err
}

// projectTracks lists the submitted files with signed links, which a
// browser follows without the tutor's token.
func (s *Server) projectTracks(ctx context.Context, t *platform.Tenant, userID int64, topicIDs []int64, into map[int64]*reports.LearnerTracks) error {
	found, err := topics.SubmissionsOf(ctx, t.DB, userID, topicIDs)
	for id, subs := range found {
		tr := &reports.ProjectTrack{Submissions: make([]reports.ProjectSubmission, len(subs))}
		for i, sub := range subs {
			tr.Submissions[i] = reports.ProjectSubmission{ID: sub.ID, Name: sub.Name, Size: sub.Size,
				URL: s.Files.URL(t, sub.Path), SubmittedAt: sub.CreatedAt}
		}
		into[id].Project = tr
	}
	return err
}

func quizRecords(ctx context.Context, t *platform.Tenant, userID, topicID int64, into *reports.TopicTrack) error {
	found, err := quiz.RecordsOf(ctx, t.DB, userID, topicID)
	for _, a := range found {
		out := reports.QuizAttempt{ID: a.ID, Number: a.Number, StartedAt: a.StartedAt, EndsAt: a.EndsAt, EndedAt: a.EndedAt,
			Score: a.Score, MaxScore: a.MaxScore, Passed: a.Passed, PendingGrading: a.Pending, Answered: a.Answered,
			Right: a.AllRight, Questions: make([]reports.QuizAnswer, len(a.Questions))}
		for i, q := range a.Questions {
			out.Questions[i] = reports.QuizAnswer{QuestionID: q.QuestionID, Type: q.Type, Prompt: q.Prompt, Points: q.Points,
				Earned: q.Earned, Answered: q.Answered, Answer: orEmpty(q.Answer), Right: orEmpty(q.Right)}
		}
		into.Quiz = append(into.Quiz, out)
	}
	return err
}

// orEmpty answers a list as [] rather than null.
func orEmpty(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}

func scormRecords(ctx context.Context, t *platform.Tenant, userID, topicID int64, into *reports.TopicTrack) error {
	found, err := scorm.RecordsOf(ctx, t.DB, userID, topicID)
	for _, r := range found {
		out := reports.SCORecord{SCOID: r.SCOID, Title: r.Title, Attempt: r.Attempt, Completion: r.Completion, Success: r.Success,
			ScoreRaw: r.ScoreRaw, ScoreMin: r.ScoreMin, ScoreMax: r.ScoreMax, ScoreScaled: r.ScoreScaled,
			TotalSeconds: r.TotalSeconds, SessionSeconds: r.SessionSeconds, Exit: r.Exit, Location: r.Location,
			SuspendDataLength: r.SuspendDataLength, CompletedAt: r.CompletedAt, UpdatedAt: r.UpdatedAt,
			Interactions: make([]reports.SCOInteraction, len(r.Interactions))}
		for i, it := range r.Interactions {
			out.Interactions[i] = reports.SCOInteraction{ID: it.ID, Type: it.Type, Description: it.Description,
				LearnerResponse: it.LearnerResponse, CorrectResponse: it.CorrectResponse, Result: it.Result, Latency: it.Latency,
				Time: it.Time}
		}
		into.SCORM = append(into.SCORM, out)
	}
	return err
}

// cmi5Records reads the statements of the learner's registration of the
// topic from the LRS.
func cmi5Records(ctx context.Context, t *platform.Tenant, userID, topicID int64, into *reports.TopicTrack) error {
	regs, err := cmi5.RegistrationsOf(ctx, t.DB, userID, []int64{topicID})
	if err != nil || regs[topicID] == "" {
		return err
	}
	found, err := lrs.RegistrationStatements(ctx, t.DB, regs[topicID], reports.MaxStatements)
	for _, st := range found {
		into.CMI5 = append(into.CMI5, reports.Statement(st.Body, st.Stored))
	}
	return err
}

func (s *Server) h5pRecords(ctx context.Context, t *platform.Tenant, userID, topicID int64, into *reports.TopicTrack) error {
	found, err := s.Learning.H5PStatements(ctx, t, userID, topicID, reports.MaxStatements)
	for _, st := range found {
		into.H5P = append(into.H5P, reports.Statement(st.Body, st.At))
	}
	return err
}
