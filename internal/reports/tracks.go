package reports

import "time"

// LearnerTracks is what the kinds kept of a learner's work in one topic, beside
// its progress: each part is present only for a topic of its kind that
// kept something.
type LearnerTracks struct {
	SCORM   *SCORMTrack   `json:"scorm,omitempty" doc:"A SCORM topic: the learner's CMI data of its SCOs, summed up."`
	CMI5    *CMI5Track    `json:"cmi5,omitempty" doc:"A cmi5 topic: the xAPI statements of the learner's registration."`
	Quiz    *QuizTrack    `json:"quiz,omitempty" doc:"A quiz topic: the learner's attempts."`
	H5P     *H5PTrack     `json:"h5p,omitempty" doc:"An H5P topic: the xAPI statements its content reported."`
	Project *ProjectTrack `json:"project,omitempty" doc:"A project topic: the files the learner submitted."`
}

// SCORMTrack sums up a learner's tracks of a SCORM topic's SCOs.
type SCORMTrack struct {
	SCOs      int       `json:"scos" doc:"SCOs the learner launched."`
	Status    string    `json:"status" doc:"The success status of the SCO tracked last when known (passed, failed), its completion status otherwise (completed, incomplete, ...)."`
	Score     *float64  `json:"score" doc:"The raw score of the SCO tracked last; null when none."`
	Seconds   int64     `json:"seconds" doc:"The time the SCO tracked last counted, over all its sessions."`
	UpdatedAt time.Time `json:"updated_at"`
}

// CMI5Track counts the statements of a learner's cmi5 registration.
type CMI5Track struct {
	Statements int       `json:"statements"`
	LastVerb   string    `json:"last_verb" doc:"The verb id of the latest statement."`
	LastAt     time.Time `json:"last_at"`
}

// QuizTrack sums up a learner's attempts at a quiz.
type QuizTrack struct {
	Attempts  int       `json:"attempts"`
	Finished  int       `json:"finished" doc:"Attempts that ended (submitted or timed out)."`
	BestScore *float64  `json:"best_score" doc:"The best score of an ended attempt, in percent; null when none ended."`
	Passed    bool      `json:"passed" doc:"Whether an ended attempt reached the pass score."`
	LastAt    time.Time `json:"last_at" doc:"When the latest attempt started."`
}

// H5PTrack sums up the statements an H5P topic reported for a learner.
type H5PTrack struct {
	Statements int       `json:"statements"`
	LastVerb   string    `json:"last_verb"`
	Score      *float64  `json:"score" doc:"The raw score of the latest scored statement; null when none."`
	MaxScore   *float64  `json:"max_score"`
	LastAt     time.Time `json:"last_at"`
}

// ProjectTrack lists the files a learner submitted to a project topic.
type ProjectTrack struct {
	Submissions []ProjectSubmission `json:"submissions"`
}

// ProjectSubmission is one file submitted to a project topic.
type ProjectSubmission struct {
	ID          int64     `json:"id"`
	Name        string    `json:"name"`
	Size        int64     `json:"size"`
	URL         string    `json:"url" doc:"A signed link to download the file."`
	SubmittedAt time.Time `json:"submitted_at"`
}
