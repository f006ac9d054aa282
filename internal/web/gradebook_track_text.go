package web

import "fmt"

// trackText are the words of a learner's track in one topic (the page
// under the learner's detail) in one language.
type trackText struct {
	Title, Open, Back, Nothing, Kind                                     string
	Quiz, AttemptFormat, Started, Ended, UnderWay, Score, Passed, Failed string
	Pending, AnsweredFormat, Question, Given, Right, Points, NoAnswer    string
	True, False, Grade, GradeLabelFormat, Graded, BadPoints              string
	SCORM, Completion, Success, Session, Total, Exit, Location           string
	SuspendFormat, Interactions, ID, Type, Response, Correct, Result     string
	CMI5, H5P, Verb, Object, When, Duration, Updated                     string
}

var trackTexts = map[string]trackText{
	"en": {
		Title: "Track", Open: "Open the track", Back: "Back to the learner", Nothing: "Nothing is recorded for this topic yet.",
		Kind: "Kind", Quiz: "Quiz attempts", AttemptFormat: "Attempt %d", Started: "Started", Ended: "Ended",
		UnderWay: "under way", Score: "Score", Passed: "passed", Failed: "not passed", Pending: "an answer waits for grading",
		AnsweredFormat: "%d of %d answered, %d right", Question: "Question", Given: "Answer given", Right: "Right answer",
		Points: "Points", NoAnswer: "no answer", True: "true", False: "false", Grade: "Save the grade",
		GradeLabelFormat: "Points for this answer, 0 to %g", Graded: "Grade saved.", BadPoints: "The points must be a number.",
		SCORM: "SCORM runtime data", Completion: "Completion", Success: "Success", Session: "Latest session",
		Total: "Total time", Exit: "Exit", Location: "Bookmark", SuspendFormat: "%d characters of suspend data",
		Interactions: "Interactions", ID: "Id", Type: "Type", Response: "Response", Correct: "Correct response",
		Result: "Result", CMI5: "cmi5 statements", H5P: "H5P results", Verb: "Verb", Object: "Object", When: "Time",
		Duration: "Duration", Updated: "Last saved",
	},
	"pl": {
		Title: "Ślad", Open: "Otwórz ślad", Back: "Wróć do uczestnika", Nothing: "Dla tego tematu nic jeszcze nie zapisano.",
		Kind: "Rodzaj", Quiz: "Podejścia do quizu", AttemptFormat: "Podejście %d", Started: "Rozpoczęto", Ended: "Zakończono",
		UnderWay: "w toku", Score: "Wynik", Passed: "zaliczone", Failed: "niezaliczone", Pending: "odpowiedź czeka na ocenę",
		AnsweredFormat: "odpowiedzi: %d z %d, poprawne: %d", Question: "Pytanie", Given: "Udzielona odpowiedź",
		Right: "Poprawna odpowiedź", Points: "Punkty", NoAnswer: "brak odpowiedzi", True: "prawda", False: "fałsz",
		Grade: "Zapisz ocenę", GradeLabelFormat: "Punkty za tę odpowiedź, od 0 do %g", Graded: "Ocena zapisana.", BadPoints: "Punkty muszą być liczbą.",
		SCORM: "Dane wykonawcze SCORM", Completion: "Ukończenie", Success: "Powodzenie", Session: "Ostatnia sesja",
		Total: "Łączny czas", Exit: "Wyjście", Location: "Zakładka", SuspendFormat: "Dane wstrzymania: %d znaków",
		Interactions: "Interakcje", ID: "Identyfikator", Type: "Typ", Response: "Odpowiedź", Correct: "Poprawna odpowiedź",
		Result: "Rezultat", CMI5: "Zapisy cmi5", H5P: "Wyniki H5P", Verb: "Czasownik", Object: "Obiekt", When: "Czas",
		Duration: "Trwanie", Updated: "Ostatni zapis",
	},
	"zh": {
		Title: "学习记录", Open: "查看记录", Back: "返回学员详情", Nothing: "该主题尚无记录。", Kind: "类型",
		Quiz: "测验作答", AttemptFormat: "第 %d 次作答", Started: "开始于", Ended: "结束于", UnderWay: "进行中",
		Score: "得分", Passed: "通过", Failed: "未通过", Pending: "有答案待评分", AnsweredFormat: "已答 %d 题（共 %d 题），答对 %d 题",
		Question: "题目", Given: "学员答案", Right: "正确答案", Points: "分值", NoAnswer: "未作答", True: "正确", False: "错误",
		Grade: "保存评分", GradeLabelFormat: "此答案得分（0 至 %g）", Graded: "评分已保存。", BadPoints: "分值必须是数字。",
		SCORM: "SCORM 运行数据", Completion: "完成状态", Success: "成功状态", Session: "最近一次会话", Total: "总用时",
		Exit: "退出方式", Location: "书签", SuspendFormat: "挂起数据 %d 个字符", Interactions: "交互", ID: "标识",
		Type: "类型", Response: "作答", Correct: "正确作答", Result: "结果", CMI5: "cmi5 记录", H5P: "H5P 结果",
		Verb: "动词", Object: "对象", When: "时间", Duration: "时长", Updated: "最近保存",
	},
}

// AttemptN is "Attempt 2".
func (t trackText) AttemptN(n int64) string { return fmt.Sprintf(t.AttemptFormat, n) }

// AnsweredOf is "3 of 4 answered, 2 right".
func (t trackText) AnsweredOf(answered int64, total int, right int64) string {
	return fmt.Sprintf(t.AnsweredFormat, answered, total, right)
}

// Suspend is "120 characters of suspend data".
func (t trackText) Suspend(n int64) string { return fmt.Sprintf(t.SuspendFormat, n) }

// GradeLabel names the grading field of an essay worth points.
func (t trackText) GradeLabel(points float64) string { return fmt.Sprintf(t.GradeLabelFormat, points) }

// Word translates a true/false answer; other answers are the learner's
// or the author's own words.
func (t trackText) Word(qtype, s string) string {
	if qtype == "truefalse" {
		switch s {
		case "true":
			return t.True
		case "false":
			return t.False
		}
	}
	return s
}

// Clock writes seconds as h:mm:ss, which reads the same in every
// language.
func (t trackText) Clock(seconds int64) string {
	return fmt.Sprintf("%d:%02d:%02d", seconds/3600, seconds/60%60, seconds%60)
}

// Yes reads an optional true or false: false when absent.
func (t trackText) Yes(b *bool) bool { return b != nil && *b }
