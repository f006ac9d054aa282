package richtext

import "github.com/lms-platform/lms/internal/kinds"

// New is the rich text kind; it needs nothing of deps.
func New(kinds.Deps) Kind { return Kind{} }
