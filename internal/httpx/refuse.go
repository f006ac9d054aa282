package httpx

import "github.com/danielgtaylor/huma/v2"

// Refuse answers err from a huma middleware, as Guard answers its own
// refusals, so that other capabilities' middleware (the scope check of
// scoped tokens) refuse in the same envelope.
func Refuse(api huma.API, hc huma.Context, err error) { writeGuardError(api, hc, err) }
