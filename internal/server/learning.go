package server

import (
	"encoding/json"

	"github.com/lms-platform/lms/internal/kinds/h5pcontent"
	"github.com/lms-platform/lms/internal/kinds/layout"
	"github.com/lms-platform/lms/internal/learning"
)

// newLearning builds learning before the capabilities that call it; it
// holds the registry of kinds, which the kinds join once built
// (topicRoutes).
func (s *Server) newLearning() {
	s.Learning = &learning.Service{Clock: s.Clock, Kinds: s.Kinds, FileURL: s.Files.URL, Settings: s.Settings,
		H5PContentID: h5pContentID, H5PPlayed: h5pPlayed}
}

// learningRoutes registers the learner routes (programs, previews,
// progress) and the scheduled jobs of learning. The scheduler is absent
// when only the API description is built.
func (s *Server) learningRoutes() {
	learning.Routes(s.API, s.Learning)
	if s.Jobs != nil {
		s.Jobs.Add(s.Learning.Jobs()...)
	}
}

// h5pContentID reads the H5P content id of an H5P topic's value.
func h5pContentID(class string, value json.RawMessage) (string, bool) {
	if class != h5pcontent.Class {
		return "", false
	}
	id, err := h5pcontent.ContentID(value)
	return id, err == nil && id != ""
}

// h5pPlayed is the H5P content an H5P topic plays, or those a layout
// topic's H5PFrames play.
func h5pPlayed(class string, value json.RawMessage) []string {
	if id, ok := h5pContentID(class, value); ok {
		return []string{id}
	}
	if class == layout.Class {
		return layout.H5PContentIDs(value)
	}
	return nil
}
