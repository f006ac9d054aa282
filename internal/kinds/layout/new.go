package layout

import (
	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/kinds"
)

// Part is the layout kind with its practice routes.
type Part struct {
	*Kind
	practice *Practice
}

// New is the layout kind: its H5PFrames are checked with the H5P kind's
// client (h5p), its LiaScriptLessons with the LiaScript courses (lia).
func New(d kinds.Deps, h5p H5PContents, lia LiaCourses) Part {
	return Part{Kind: &Kind{H5P: h5p, LiaScript: lia}, practice: &Practice{Topics: d.Topics, Progress: d.Learning}}
}

// Routes registers the practice routes.
func (k Part) Routes(api huma.API) { Routes(api, k.practice) }
