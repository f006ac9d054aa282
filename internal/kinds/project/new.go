package project

import "github.com/lms-platform/lms/internal/kinds"

// New is the project kind; it needs nothing of deps.
func New(kinds.Deps) Kind { return Kind{} }
