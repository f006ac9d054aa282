package web

import "fmt"

// gradebookText are the words of the gradebook pages in one language.
type gradebookText struct {
	Title, Lead, Learners, Learner, Status, Percent, Score, Time, LastActivity, Topics string
	// Columns name the sortable columns, in the order of gradebookOrders.
	Columns                                                               []string
	Planned, Started, Finished, AnyStatus, Search, Filter, Export         string
	Previous, Next, PageOfFormat, NoLearners, Chart, ChartEmpty, ChartAlt string
	Incomplete, Complete, InProgress, Detail, Tracks, Files, Back         string
	Assign, AssignLead, Users, Groups, EndDate, EndDateHint, Never        string
	Assigned, Nobody, BadDate, Direct, ThroughGroups, Average             string
	Started2, Finished2, Deadline, Kind, Lesson, Download, Progress       string
	NoTracks, Attempts, Statements, Best, Submitted, Total, Sco           string
	// Group filter; the chart's description (%d finished of %d learners,
	// from day to day) and its table.
	Group, AnyGroup, ChartDescFormat, ChartTable, Day, FinishedThatDay string
	FinishedTotal                                                      string
}

var gradebookTexts = map[string]gradebookText{
	"en": {
		Title: "Progress", Lead: "Every learner of the course, topic by topic.", Learners: "Learners", Learner: "Learner",
		Status: "Status", Percent: "Done", Score: "Score", Time: "Time", LastActivity: "Last activity", Topics: "Topics",
		Columns: []string{"Learner", "E-mail", "Status", "Done", "Score", "Time", "Last activity"},
		Planned: "Not started", Started: "In progress", Finished: "Finished", AnyStatus: "Any status",
		Search: "Name or e-mail", Filter: "Filter", Export: "Export CSV", Previous: "Previous", Next: "Next",
		PageOfFormat: "Page %d of %d", NoLearners: "No learner matches.", Chart: "Completion over time",
		ChartEmpty: "No learner has finished the course yet.", ChartAlt: "Learners who had finished the course, by day",
		Incomplete: "not started", Complete: "complete", InProgress: "in progress", Detail: "Details", Tracks: "Tracks",
		Files: "Files", Back: "Back to the progress table", Assign: "Assign learners",
		AssignLead: "Give users and groups access to the course, until an end date or for good.", Users: "Users",
		Groups: "Groups", EndDate: "Access ends after", EndDateHint: "Leave empty for no end.", Never: "never",
		Assigned: "Access assigned.", Nobody: "Choose at least one user or group.", BadDate: "The end date is not a date.",
		Direct: "Assigned users", ThroughGroups: "Assigned groups", Average: "Average", Started2: "Started",
		Finished2: "Finished", Deadline: "Deadline", Kind: "Kind", Lesson: "Lesson", Download: "Download",
		Progress: "Progress", NoTracks: "—", Attempts: "attempts", Statements: "statements", Best: "best",
		Submitted: "submitted", Total: "learners", Sco: "SCORM",
		Group: "Group", AnyGroup: "Any group",
		ChartDescFormat: "%d of %d learners had finished the course, the first on %s and the latest on %s.",
		ChartTable:      "The chart as a table", Day: "Day", FinishedThatDay: "Finished that day", FinishedTotal: "Finished in all",
	},
	"pl": {
		Title: "Postępy", Lead: "Wszyscy uczestnicy kursu, temat po temacie.", Learners: "Uczestnicy", Learner: "Uczestnik",
		Status: "Stan", Percent: "Ukończono", Score: "Wynik", Time: "Czas", LastActivity: "Ostatnia aktywność", Topics: "Tematy",
		Columns: []string{"Uczestnik", "E-mail", "Stan", "Ukończono", "Wynik", "Czas", "Ostatnia aktywność"},
		Planned: "Nie rozpoczęto", Started: "W toku", Finished: "Ukończony", AnyStatus: "Każdy stan",
		Search: "Imię, nazwisko lub e-mail", Filter: "Filtruj", Export: "Eksportuj CSV", Previous: "Poprzednia",
		Next: "Następna", PageOfFormat: "Strona %d z %d", NoLearners: "Brak pasujących uczestników.",
		Chart: "Ukończenia w czasie", ChartEmpty: "Nikt jeszcze nie ukończył kursu.",
		ChartAlt: "Uczestnicy, którzy ukończyli kurs, dzień po dniu", Incomplete: "nie rozpoczęto", Complete: "ukończono",
		InProgress: "w toku", Detail: "Szczegóły", Tracks: "Ślady", Files: "Pliki", Back: "Wróć do tabeli postępów",
		Assign: "Przypisz uczestników", AssignLead: "Daj użytkownikom i grupom dostęp do kursu do wybranego dnia lub na stałe.",
		Users: "Użytkownicy", Groups: "Grupy", EndDate: "Dostęp kończy się po", EndDateHint: "Pozostaw puste, by nie kończyć.",
		Never: "nigdy", Assigned: "Dostęp przypisany.", Nobody: "Wybierz co najmniej jednego użytkownika lub grupę.",
		BadDate: "Data zakończenia nie jest datą.", Direct: "Przypisani użytkownicy", ThroughGroups: "Przypisane grupy",
		Average: "Średnio", Started2: "Rozpoczęto", Finished2: "Ukończono", Deadline: "Termin", Kind: "Rodzaj",
		Lesson: "Lekcja", Download: "Pobierz", Progress: "Postęp", NoTracks: "—", Attempts: "podejścia",
		Statements: "zapisy", Best: "najlepszy", Submitted: "przesłano", Total: "uczestników", Sco: "SCORM",
		Group: "Grupa", AnyGroup: "Każda grupa",
		ChartDescFormat: "Kurs ukończyło %d z %d uczestników, pierwszy %s, ostatni %s.",
		ChartTable:      "Wykres w postaci tabeli", Day: "Dzień", FinishedThatDay: "Ukończyli tego dnia", FinishedTotal: "Ukończyli łącznie",
	},
	"zh": {
		Title: "学习进度", Lead: "课程的每位学员，逐个主题查看。", Learners: "学员", Learner: "学员",
		Status: "状态", Percent: "完成度", Score: "得分", Time: "用时", LastActivity: "最近活动", Topics: "主题",
		Columns: []string{"学员", "电子邮件", "状态", "完成度", "得分", "用时", "最近活动"},
		Planned: "未开始", Started: "进行中", Finished: "已完成", AnyStatus: "全部状态", Search: "姓名或电子邮件",
		Filter: "筛选", Export: "导出 CSV", Previous: "上一页", Next: "下一页", PageOfFormat: "第 %d 页，共 %d 页",
		NoLearners: "没有符合条件的学员。", Chart: "完成情况随时间变化", ChartEmpty: "还没有学员完成本课程。",
		ChartAlt: "按日期统计已完成课程的学员", Incomplete: "未开始", Complete: "已完成", InProgress: "进行中",
		Detail: "详情", Tracks: "学习记录", Files: "文件", Back: "返回进度表", Assign: "分配学员",
		AssignLead: "为用户和用户组开通课程访问权限，可设置截止日期，也可长期有效。", Users: "用户", Groups: "用户组",
		EndDate: "访问截止于", EndDateHint: "留空表示不设截止日期。", Never: "永不", Assigned: "已分配访问权限。",
		Nobody: "请至少选择一个用户或用户组。", BadDate: "截止日期格式不正确。", Direct: "已分配的用户",
		ThroughGroups: "已分配的用户组", Average: "平均", Started2: "开始于", Finished2: "完成于", Deadline: "截止期限",
		Kind: "类型", Lesson: "课时", Download: "下载", Progress: "进度", NoTracks: "—", Attempts: "次作答",
		Statements: "条记录", Best: "最佳", Submitted: "提交于", Total: "名学员", Sco: "SCORM",
		Group: "用户组", AnyGroup: "全部用户组",
		ChartDescFormat: "共有 %d 名学员（总数 %d）完成了课程，最早于 %s，最近于 %s。",
		ChartTable:      "以表格查看图表", Day: "日期", FinishedThatDay: "当天完成", FinishedTotal: "累计完成",
	},
}

// State names a learner's state in the course.
func (t gradebookText) State(s string) string {
	switch s {
	case "started":
		return t.Started
	case "finished":
		return t.Finished
	}
	return t.Planned
}

// TopicState names a topic status (0 incomplete, 1 complete, 2 in
// progress).
func (t gradebookText) TopicState(n int64) string {
	switch n {
	case 1:
		return t.Complete
	case 2:
		return t.InProgress
	}
	return t.Incomplete
}

// Mark is the table cell's sign of a topic status; its words are beside
// it for screen readers.
func (t gradebookText) Mark(n int64) string {
	switch n {
	case 1:
		return "✓"
	case 2:
		return "◐"
	}
	return "·"
}

// PageOf is "Page 2 of 5".
func (t gradebookText) PageOf(cur, last int) string { return fmt.Sprintf(t.PageOfFormat, cur, last) }
