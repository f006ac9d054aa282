package lrs

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/limit"
	"github.com/lms-platform/lms/internal/platform"
)

// The LRS's limits (docs/content-kinds.md, "cmi5 and the LRS"; the OpenAPI
// description of each xAPI route). They bound what one request can make the service
// hold: a statement is parsed into a map several times its size, so the
// caps are on what is sent, before anything is decoded.
const (
	// MaxStatement caps one statement as sent (its JSON), 413 beyond.
	MaxStatement = 1 << 20
	// MaxRequest caps an LRS request body (a batch of statements with
	// their attachments, or a document), 413 beyond.
	MaxRequest = 10 << 20
	// MaxBatch caps the statements of one PUT or POST, 413 beyond.
	MaxBatch = 500
	// StatementsPerMinute caps the statements a launch session may send in
	// a fixed window of one minute (429 with Retry-After beyond); a tenant
	// admin's credentials are not limited.
	StatementsPerMinute = 200
	// PageBytes is the budget of one page of a statement query: a page
	// ends, with a more link, before the statement that would take it
	// past this many bytes of statements (a page holds at least one).
	PageBytes = 2 << 20
)

var (
	errStatementTooLarge = apperr.New(apperr.TooLarge, fmt.Sprintf("A statement may have at most %d bytes (1 MiB).", MaxStatement))
	errBatchTooLarge     = apperr.New(apperr.TooLarge, fmt.Sprintf("A request may carry at most %d statements.", MaxBatch))
)

// allowStatements counts n statements of a launch session against its
// minute's budget; an admin's are not counted.
func (s *Service) allowStatements(ctx context.Context, t *platform.Tenant, scope Scope, n int) error {
	if scope.Admin || scope.Session == "" || s.Limiter == nil {
		return nil
	}
	key := "lrs-statements|" + t.DatabaseName + "|" + scope.Session
	d, err := limit.AllowN(ctx, s.Limiter, key, n, StatementsPerMinute, time.Minute)
	if err != nil {
		return apperr.Wrap(apperr.Unavailable, err, "The rate limiter is unavailable.")
	}
	if !d.Allowed {
		e := apperr.New(apperr.RateLimited, "A launch may send at most "+strconv.Itoa(StatementsPerMinute)+" statements a minute.")
		e.RetryAfter = max(int(math.Ceil(d.RetryAfter.Seconds())), 1)
		return e
	}
	return nil
}
