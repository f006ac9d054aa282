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
		Tracks: []reports.TrackSource{scormTracks, cmi5Tracks, quizTracks, s.h5pTracks, s.projectTracks}})
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
