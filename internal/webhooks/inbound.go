package webhooks

import (
	"context"
	"crypto/hmac"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Tolerance is how far an inbound message's webhook-timestamp may be from
// the platform's clock, either way: an older message is a replay.
const Tolerance = 5 * time.Minute

// receiptLife is how long a receipt is kept: a message accepted with a
// timestamp Tolerance ahead of the clock still passes Verify for twice
// Tolerance, so its id must be remembered at least that long.
const receiptLife = 3 * Tolerance

// maxMessageID caps the webhook-id an inbound message may carry.
const maxMessageID = 255

var (
	errUnsigned     = apperr.New(apperr.Unauthorized, "The webhook-id, webhook-timestamp and webhook-signature headers are required.")
	ErrBadSignature = apperr.New(apperr.Unauthorized, "The webhook signature is not valid.")
	errStale        = apperr.New(apperr.Unauthorized, "The webhook timestamp is more than 5 minutes away from the server's time.")
	errReplay       = apperr.New(apperr.Conflict, "This webhook message was already received.")
)

// Signed is the Standard Webhooks headers of an inbound request; routes
// embed it in their input, so the API description names the headers.
type Signed struct {
	ID        string `header:"webhook-id" doc:"The message id; the same message is accepted once."`
	Timestamp string `header:"webhook-timestamp" doc:"When the message was signed, in Unix seconds; refused when more than 5 minutes from the server's time."`
	Signature string `header:"webhook-signature" doc:"Space-separated signatures v1,<base64 HMAC-SHA256 of \"webhook-id.webhook-timestamp.body\">; one must match."`
}

// SignedDoc describes the scheme for the API description of inbound routes.
const SignedDoc = "Authenticated by signature (Standard Webhooks, standardwebhooks.com), not by token: the headers " +
	"webhook-id, webhook-timestamp (Unix seconds) and webhook-signature (v1,<base64 HMAC-SHA256 of " +
	"\"<webhook-id>.<webhook-timestamp>.<raw body>\">, several separated by spaces while a secret rotates). The HMAC " +
	"key is the secret's base64 part after whsec_, or the bytes of a secret without that prefix. A missing or wrong " +
	"signature answers 401, a timestamp more than 5 minutes from the server's time 401, a webhook-id already " +
	"accepted 409; none of them changes anything."

// Verify checks the signature of an inbound message with secret at now:
// an Unauthorized error when the headers are missing, the timestamp is
// out of Tolerance or no signature matches. An empty secret (nothing
// configured) matches nothing.
func Verify(secret string, h Signed, body []byte, now time.Time) error {
	if h.ID == "" || h.Timestamp == "" || h.Signature == "" {
		return errUnsigned
	}
	if len(h.ID) > maxMessageID {
		return apperr.New(apperr.Unauthorized, fmt.Sprintf("The webhook-id may not be longer than %d characters.", maxMessageID))
	}
	ts, err := strconv.ParseInt(h.Timestamp, 10, 64)
	if err != nil {
		return apperr.New(apperr.Unauthorized, "The webhook-timestamp must be a time in Unix seconds.")
	}
	if d := now.Sub(time.Unix(ts, 0)); d > Tolerance || d < -Tolerance {
		return errStale
	}
	if secret == "" {
		return ErrBadSignature
	}
	key, err := secretKey(secret)
	if err != nil {
		return apperr.Wrap(apperr.Unauthorized, err, ErrBadSignature.Message)
	}
	want := signature(key, h.ID, ts, body)
	for _, sig := range strings.Fields(h.Signature) {
		version, text, ok := strings.Cut(sig, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(text)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrBadSignature
}

// Receive records that source accepted message msgID, in the transaction
// of what the message changes; a message already recorded is a replay
// (Conflict). Receipts too old to matter are dropped on the way.
func Receive(ctx context.Context, q sqldb.Querier, source, msgID string, now time.Time) error {
	if _, err := q.ExecContext(ctx, `DELETE FROM webhook_receipts WHERE received_at < $1`, now.Add(-receiptLife)); err != nil {
		return fmt.Errorf("webhooks: prune receipts: %w", err)
	}
	res, err := q.ExecContext(ctx, `INSERT INTO webhook_receipts (source, message_id, received_at) VALUES ($1, $2, $3)
		ON CONFLICT DO NOTHING`, source, msgID, now)
	if err != nil {
		return fmt.Errorf("webhooks: receipt: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errReplay
	}
	return nil
}

// Forget drops a receipt, for a message whose work failed after it was
// recorded: the sender's retry of it must be accepted.
func Forget(ctx context.Context, q sqldb.Querier, source, msgID string) error {
	_, err := q.ExecContext(ctx, `DELETE FROM webhook_receipts WHERE source = $1 AND message_id = $2`, source, msgID)
	return err
}
