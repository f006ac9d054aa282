package server

import (
	"encoding/json"

	"github.com/lms-platform/lms/internal/content/h5pcontent"
	"github.com/lms-platform/lms/internal/learning"
)

// newLearning builds learning before the capabilities that call it.
func (s *Server) newLearning() {
	s.Learning = &learning.Service{Clock: s.Clock, Kinds: s.Kinds, FileURL: s.Files.URL, Settings: s.Settings,
		H5PContentID: h5pContentID}
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
