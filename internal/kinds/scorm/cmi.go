package scorm

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/kinds/scorm/manifest"
)

// The CMI data model travels flattened, as the player's runtime
// (scorm-again) renders it: {"cmi.core.lesson_status": "incomplete",
// "cmi.interactions.0.id": "q1", ...}. The whole model is stored as sent;
// the fields progress needs are read from it here.

const (
	maxCMIKeys      = 20000
	maxCMIValue     = 64000 * 4 // 2004 suspend_data: 64,000 characters
	maxCMIKey       = 255
	suspendData2004 = 64000
)

var cmiKey = regexp.MustCompile(`^(cmi|adl)\.[A-Za-z0-9_.]+$`)

// checkCMI validates a committed model: keys of the data model, text or
// number values, within the caps. Empty lists are dropped. Every element
// that is wrong is named as sent, under its own key.
func checkCMI(cmi map[string]any) error {
	if len(cmi) > maxCMIKeys {
		return apperr.New(apperr.Invalid, fmt.Sprintf("A commit holds at most %d CMI elements.", maxCMIKeys))
	}
	problems := apperr.Problems{}
	for k, v := range cmi {
		if len(k) > maxCMIKey || !cmiKey.MatchString(k) {
			name := k
			if len(name) > maxCMIKey {
				name = strings.ToValidUTF8(name[:maxCMIKey], "") + "…"
			}
			problems.Add(name, fmt.Sprintf("%q is not an element of the CMI data model.", name))
			continue
		}
		switch x := v.(type) {
		case string:
			if len(x) > maxCMIValue {
				problems.Add(k, fmt.Sprintf("The value of %s is too long.", k))
			}
		case float64, bool, nil:
		case map[string]any:
			// scorm-again renders an empty list (no interactions, no
			// objectives) as {} in its flattened model: it holds nothing.
			if len(x) != 0 {
				problems.Add(k, fmt.Sprintf("The value of %s must be text or a number.", k))
			}
			delete(cmi, k)
		case []any:
			if len(x) != 0 {
				problems.Add(k, fmt.Sprintf("The value of %s must be text or a number.", k))
			}
			delete(cmi, k)
		default:
			problems.Add(k, fmt.Sprintf("The value of %s must be text or a number.", k))
		}
	}
	if s, _ := cmi["cmi.suspend_data"].(string); problems["cmi.suspend_data"] == nil && len([]rune(s)) > suspendData2004 {
		problems.Add("cmi.suspend_data", "cmi.suspend_data may hold at most 64,000 characters.")
	}
	return problems.Err()
}

func text(cmi map[string]any, key string) string {
	switch v := cmi[key].(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

func number(cmi map[string]any, key string) *float64 {
	s := strings.TrimSpace(text(cmi, key))
	if s == "" {
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

// reading is what progress reads of a model.
type reading struct {
	Completion, Success string
	Raw, Min, Max       *float64
	Scaled              *float64
	Exit                string
	SessionSeconds      int64
}

// read reads the fields progress needs. In 1.2 a masteryscore decides
// passed or failed from the raw score when the SCO did not set either
// (the model is changed to say so, as the SCO would read it back).
func read(cmi map[string]any, is2004 bool, item manifest.Item) reading {
	if is2004 {
		r := reading{Completion: orDefault(text(cmi, "cmi.completion_status"), "unknown"),
			Success: orDefault(text(cmi, "cmi.success_status"), "unknown"),
			Raw:     number(cmi, "cmi.score.raw"), Min: number(cmi, "cmi.score.min"), Max: number(cmi, "cmi.score.max"),
			Scaled: number(cmi, "cmi.score.scaled"), Exit: text(cmi, "cmi.exit"),
			SessionSeconds: isoSeconds(text(cmi, "cmi.session_time"))}
		// The completion threshold decides completion from the progress
		// measure when the manifest gives one (RTE 4.2.4.1).
		if th := item.CompletionThreshold; th != nil && th.CompletedByMeasure != nil && *th.CompletedByMeasure {
			if pm := number(cmi, "cmi.progress_measure"); pm != nil {
				r.Completion = "incomplete"
				if *pm >= th.MinProgressMeasure {
					r.Completion = "completed"
				}
			}
		}
		return r
	}
	status := orDefault(text(cmi, "cmi.core.lesson_status"), "not attempted")
	raw := number(cmi, "cmi.core.score.raw")
	if m := item.MasteryScore; m != nil && raw != nil && status != "passed" && status != "failed" && status != "not attempted" {
		status = "failed"
		if *raw >= *m {
			status = "passed"
		}
		cmi["cmi.core.lesson_status"] = status
	}
	r := reading{Completion: status, Success: "unknown", Raw: raw, Min: number(cmi, "cmi.core.score.min"),
		Max: number(cmi, "cmi.core.score.max"), Exit: text(cmi, "cmi.core.exit"),
		SessionSeconds: hmsSeconds(text(cmi, "cmi.core.session_time"))}
	if status == "passed" || status == "failed" {
		r.Success = status
	}
	return r
}

// done tells whether a track's status completes its topic.
func done(completion, success string) bool {
	return completion == "completed" || completion == "passed" || success == "passed"
}

// ended tells whether an attempt is over (so that a launch after a normal
// exit starts a new one).
func ended(completion, success string) bool {
	return done(completion, success) || completion == "failed" || success == "failed"
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// hmsSeconds reads a SCORM 1.2 CMITimespan, HHHH:MM:SS.SS.
func hmsSeconds(s string) int64 {
	parts := strings.Split(strings.TrimSpace(s), ":")
	if len(parts) != 3 {
		return 0
	}
	h, err1 := strconv.ParseInt(parts[0], 10, 64)
	m, err2 := strconv.ParseInt(parts[1], 10, 64)
	sec, err3 := strconv.ParseFloat(parts[2], 64)
	if err1 != nil || err2 != nil || err3 != nil || h < 0 || m < 0 || sec < 0 || h > 1e6 {
		return 0
	}
	return h*3600 + m*60 + int64(sec)
}

var isoDuration = regexp.MustCompile(`^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)

// isoSeconds reads a SCORM 2004 timeinterval (ISO 8601 duration); years
// and months count as 365 and 30 days.
func isoSeconds(s string) int64 {
	m := isoDuration.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0
	}
	var total float64
	for i, unit := range []float64{365 * 86400, 30 * 86400, 86400, 3600, 60, 1} {
		if m[i+1] != "" {
			f, _ := strconv.ParseFloat(m[i+1], 64)
			total += f * unit
		}
	}
	if total > 1e10 {
		return 0
	}
	return int64(total)
}

func hms(seconds int64) string {
	return fmt.Sprintf("%04d:%02d:%02d", seconds/3600, seconds/60%60, seconds%60)
}

func iso(seconds int64) string {
	return "PT" + strconv.FormatInt(seconds, 10) + "S"
}

// skipOnLoad are elements the runtime computes or refuses to load:
// counts and children lists, the times and entry (set by the launch).
func skipOnLoad(key string) bool {
	return strings.HasSuffix(key, "._count") || strings.HasSuffix(key, "._children") ||
		strings.HasSuffix(key, "session_time") || strings.HasSuffix(key, "total_time") ||
		key == "cmi.core.entry" || key == "cmi.entry" || strings.HasPrefix(key, "adl.nav.")
}

// initial is the model the runtime loads before the SCO starts: the
// stored model of a resumed attempt, then what the LMS supplies. credit
// is "credit", or "no-credit" for a preview that records nothing; the
// runtime leaves the 1.2 element empty unless the LMS sets it.
func initial(stored map[string]any, is2004 bool, item manifest.Item, learnerID, learnerName, entry, credit string, total int64) map[string]any {
	out := map[string]any{}
	for k, v := range stored {
		if !skipOnLoad(k) {
			out[k] = v
		}
	}
	set := func(k, v string) {
		if v != "" {
			out[k] = v
		}
	}
	if is2004 {
		set("cmi.credit", credit)
		set("cmi.learner_id", learnerID)
		set("cmi.learner_name", learnerName)
		set("cmi.entry", entry)
		set("cmi.total_time", iso(total))
		set("cmi.launch_data", item.DataFromLMS)
		set("cmi.max_time_allowed", item.MaxTimeAllowed)
		set("cmi.time_limit_action", item.TimeLimitAction)
		if th := item.CompletionThreshold; th != nil && th.CompletedByMeasure != nil && *th.CompletedByMeasure {
			out["cmi.completion_threshold"] = strconv.FormatFloat(th.MinProgressMeasure, 'f', -1, 64)
		}
		if sq := item.Sequencing; sq != nil && sq.Objectives != nil && sq.Objectives.Primary != nil {
			if p := sq.Objectives.Primary; p.SatisfiedByMeasure != nil && *p.SatisfiedByMeasure && p.MinNormalizedMeasure != "" {
				out["cmi.scaled_passing_score"] = p.MinNormalizedMeasure
			}
		}
		return out
	}
	set("cmi.core.credit", credit)
	set("cmi.core.student_id", learnerID)
	set("cmi.core.student_name", learnerName)
	set("cmi.core.entry", entry)
	set("cmi.core.total_time", hms(total))
	set("cmi.launch_data", item.DataFromLMS)
	set("cmi.student_data.max_time_allowed", item.MaxTimeAllowed)
	set("cmi.student_data.time_limit_action", item.TimeLimitAction)
	if m := item.MasteryScore; m != nil {
		out["cmi.student_data.mastery_score"] = strconv.FormatFloat(*m, 'f', -1, 64)
	}
	return out
}
