package web

import (
	"net/http"
	"strings"
)

// teachWords are the words of the authoring pages in one language, by
// key. Templates read them with {{.Data.T.S "key"}}; a key missing from a
// language falls back to English (TestTeachWordsComplete keeps the three
// complete).
type teachWords map[string]string

// S is the word for key (the key itself when unknown, so a mistake shows
// on the page instead of an empty label).
func (t teachWords) S(key string) string {
	if s, ok := t[key]; ok {
		return s
	}
	if s, ok := teachText["en"][key]; ok {
		return s
	}
	return key
}

// teachLang is the language of the authoring pages: the first of English,
// Polish and Chinese the browser's Accept-Language names, else English.
func teachLang(r *http.Request) string {
	for _, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
		tag, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		base, _, _ := strings.Cut(strings.ToLower(tag), "-")
		if _, ok := teachText[base]; ok {
			return base
		}
	}
	return "en"
}

var teachText = map[string]teachWords{
	"en": {
		"teach": "Teaching", "dashboard_lead": "Build courses, add topics of every kind and publish them to your learners.",
		"courses": "Courses", "new_course": "New course", "all_courses": "All courses", "your_courses": "Your courses",
		"no_courses": "No courses yet.", "title": "Title", "summary": "Summary", "image": "Image", "tags": "Tags",
		"tags_hint": "Separated by commas.", "categories": "Categories", "status": "Status", "starts": "Opens on",
		"ends": "Closes on", "tutors": "Tutors", "learners": "Learners", "completion": "Completion", "n_finished": "finished", "average": "average", "save": "Save",
		"create": "Create course", "edit": "Edit", "delete": "Delete", "cancel": "Cancel", "search": "Search",
		"status_draft": "Draft", "status_published": "Published", "status_archived": "Archived",
		"status_published_unactivated": "Published, not open", "any_status": "Any status", "filter": "Filter",
		"course_details": "Course details", "program": "Program", "lessons": "Lessons", "add_lesson": "Add lesson",
		"lesson_title": "Lesson title", "add_topic": "Add topic", "clone": "Clone", "move_up": "Move up",
		"move_down": "Move down", "drag_hint": "Drag lessons and topics to reorder them, or use the arrow buttons.",
		"no_lessons": "This course has no lessons yet. Add the first one below.", "no_topics": "No topics yet.",
		"saved": "Saved.", "created": "The course was created.", "deleted": "Deleted.", "topic_added": "The topic was added.",
		"lesson_cloned": "The lesson was cloned.", "moved": "Moved.",
		"delete_course_q": "Delete this course?", "delete_lesson_q": "Delete this lesson?", "delete_topic_q": "Delete this topic?",
		"delete_warning": "This cannot be undone. Learners lose their progress in it.", "delete_confirm": "Yes, delete",
		"view_as_learner": "View as a learner", "kind": "Kind", "choose_kind": "What kind of topic?", "lesson": "Lesson",
		"kind_richtext": "Rich text", "kind_video": "Video", "kind_audio": "Audio", "kind_image": "Image",
		"kind_pdf": "PDF document", "kind_oembed": "Embedded URL", "kind_h5p": "H5P", "kind_scorm": "SCORM package",
		"kind_cmi5": "cmi5 package", "kind_liascript": "LiaScript", "kind_lti": "External tool (LTI)",
		"kind_quiz": "GIFT quiz", "kind_project": "Project", "kind_interactive": "Interactive app", "kind_layout": "Layout",
		"kind_richtext_d": "Formatted text written here.", "kind_video_d": "Upload a video file or link a video site.",
		"kind_audio_d": "Upload an MP3 or Ogg file.", "kind_image_d": "Upload a picture.", "kind_pdf_d": "Upload a PDF.",
		"kind_oembed_d": "A page of a video or media site.", "kind_h5p_d": "Upload an .h5p package, or create one in the H5P editor.",
		"kind_scorm_d": "Upload a SCORM 1.2 or 2004 .zip.", "kind_cmi5_d": "Upload a cmi5 .zip or cmi5.xml.",
		"kind_liascript_d": "LiaScript Markdown, pasted or uploaded.", "kind_lti_d": "Launch a registered LTI 1.3 tool.",
		"kind_quiz_d": "Questions in GIFT, pasted or uploaded.", "kind_project_d": "Learners upload their work.",
		"kind_interactive_d": "Upload an interactive app package (.zip).", "kind_layout_d": "A study page of approved components (JSON).",
		"text": "Text", "text_hint": "Markdown: **bold**, _italic_, # headings, lists and links.", "file": "File",
		"upload_hint": "Up to", "video_site": "Or a video site URL", "url": "URL", "package": "Package",
		"gift": "Questions in GIFT", "gift_file": "Or a GIFT file", "max_attempts": "Attempts per learner (0: no limit)",
		"min_pass": "Points to pass", "time_limit": "Time limit", "time_limit_site": "The site's quiz time limit applies to every quiz.",
		"instructions": "Instructions", "accept": "Accepted file types", "accept_hint": "Extensions, separated by commas, e.g. pdf, docx.",
		"tool": "Tool", "deep_link": "Or choose content in the tool", "deep_link_help": "The tool opens in a new window; what you choose there becomes topics of the lesson. Reload this course afterwards to see them.", "deep_link_go": "Open the tool to choose", "no_tools": "No LTI tool is registered yet: an administrator adds tools under Administration, LTI.",
		"document":       "Document (JSON array of nodes)",
		"layout_help":    "One JSON array of nodes {component, props}; start from the components below.",
		"layout_outline": "Nodes of the document", "layout_broken": "The document is not a JSON array yet: its nodes cannot be listed.",
		"layout_palette": "Approved components", "layout_palette_help": "Each with an example node: insert it, or copy it into the document, then change its text.",
		"layout_insert": "Insert", "layout_not_json": "The document is not a JSON array: correct it before inserting a component.", "fallback": "Fallback text (Markdown)", "height": "Height in pixels",
		"lia_completion": "Complete when", "lia_all": "every section is visited and every quiz solved", "lia_sections": "every section is visited", "lia_quizzes": "every quiz is solved",
		"choose_sco": "The package has several SCOs. Choose the one this topic plays.",
		"choose_au":  "The package has several assignable units. Choose the one this topic plays.",
		"uploading":  "Uploading…", "topic": "Topic", "questions": "Questions", "right_answer": "Right answer",
		"score": "Points", "processing": "Processing", "processing_hint": "The video is being transcoded; this notice updates by itself.", "check_again": "Check again",
		"processing_done": "Ready", "processing_queued": "waiting in line", "processing_running": "transcoding", "processing_failed": "Transcoding failed", "attempts": "Attempts",
		"unlimited": "unlimited", "problem": "The API refused this:", "no_access": "Authoring is for tutors and administrators.",
		"back_to_course": "Back to the course", "tutors_hint": "Who may edit the course.", "none": "—",
		"course_list_lead": "Every course you may edit, with its status and learners.", "open": "Open",
		"kinds_title": "Topic kinds", "failed": "That did not work", "form_unreadable": "The form could not be read.",
		"form_too_large": "The form is too large.", "bad_number": "Give a number, e.g. 7.5.", "bad_date": "Give a date as YYYY-MM-DD.", "steps": "Steps", "true": "True", "false": "False",
		"h5p_editor": "H5P editor", "h5p_open_editor": "Create it in the H5P editor instead", "h5p_upload_instead": "Upload an .h5p package instead",
		"h5p_edit_content": "Edit the content in the H5P editor", "h5p_editor_help": "Build the content in the editor. Saving the form saves the content first, then the topic.",
		"h5p_editor_script": "The H5P editor needs JavaScript. Without it, upload an .h5p package.", "h5p_saving": "Saving the H5P content…",
		"h5p_editor_off":  "The H5P editor is not available here: this site has no content origin to run it on.",
		"h5p_editor_down": "The H5P service cannot be reached right now. Please try again in a moment.",
	},
	"pl": {
		"teach": "Nauczanie", "dashboard_lead": "Twórz kursy, dodawaj tematy każdego rodzaju i publikuj je dla uczniów.",
		"courses": "Kursy", "new_course": "Nowy kurs", "all_courses": "Wszystkie kursy", "your_courses": "Twoje kursy",
		"no_courses": "Nie ma jeszcze kursów.", "title": "Tytuł", "summary": "Streszczenie", "image": "Obraz", "tags": "Tagi",
		"tags_hint": "Oddzielone przecinkami.", "categories": "Kategorie", "status": "Stan", "starts": "Otwarty od",
		"ends": "Zamknięty od", "tutors": "Prowadzący", "learners": "Uczniowie", "completion": "Ukończenie", "n_finished": "ukończyło", "average": "średnio", "save": "Zapisz",
		"create": "Utwórz kurs", "edit": "Edytuj", "delete": "Usuń", "cancel": "Anuluj", "search": "Szukaj",
		"status_draft": "Szkic", "status_published": "Opublikowany", "status_archived": "Zarchiwizowany",
		"status_published_unactivated": "Opublikowany, nieotwarty", "any_status": "Dowolny stan", "filter": "Filtruj",
		"course_details": "Dane kursu", "program": "Program", "lessons": "Lekcje", "add_lesson": "Dodaj lekcję",
		"lesson_title": "Tytuł lekcji", "add_topic": "Dodaj temat", "clone": "Powiel", "move_up": "W górę",
		"move_down": "W dół", "drag_hint": "Przeciągaj lekcje i tematy, aby zmienić ich kolejność, albo użyj strzałek.",
		"no_lessons": "Ten kurs nie ma jeszcze lekcji. Dodaj pierwszą poniżej.", "no_topics": "Brak tematów.",
		"saved": "Zapisano.", "created": "Kurs został utworzony.", "deleted": "Usunięto.", "topic_added": "Temat został dodany.",
		"lesson_cloned": "Lekcja została powielona.", "moved": "Przeniesiono.",
		"delete_course_q": "Usunąć ten kurs?", "delete_lesson_q": "Usunąć tę lekcję?", "delete_topic_q": "Usunąć ten temat?",
		"delete_warning": "Tego nie można cofnąć. Uczniowie stracą swoje postępy.", "delete_confirm": "Tak, usuń",
		"view_as_learner": "Zobacz jak uczeń", "kind": "Rodzaj", "choose_kind": "Jaki rodzaj tematu?", "lesson": "Lekcja",
		"kind_richtext": "Tekst sformatowany", "kind_video": "Wideo", "kind_audio": "Dźwięk", "kind_image": "Obraz",
		"kind_pdf": "Dokument PDF", "kind_oembed": "Osadzony adres URL", "kind_h5p": "H5P", "kind_scorm": "Pakiet SCORM",
		"kind_cmi5": "Pakiet cmi5", "kind_liascript": "LiaScript", "kind_lti": "Narzędzie zewnętrzne (LTI)",
		"kind_quiz": "Quiz GIFT", "kind_project": "Projekt", "kind_interactive": "Aplikacja interaktywna", "kind_layout": "Układ strony",
		"kind_richtext_d": "Tekst z formatowaniem pisany tutaj.", "kind_video_d": "Prześlij plik wideo albo podaj serwis wideo.",
		"kind_audio_d": "Prześlij plik MP3 lub Ogg.", "kind_image_d": "Prześlij obraz.", "kind_pdf_d": "Prześlij plik PDF.",
		"kind_oembed_d": "Strona serwisu z wideo lub multimediami.", "kind_h5p_d": "Prześlij pakiet .h5p albo utwórz treść w edytorze H5P.",
		"kind_scorm_d": "Prześlij plik .zip SCORM 1.2 lub 2004.", "kind_cmi5_d": "Prześlij plik .zip cmi5 albo cmi5.xml.",
		"kind_liascript_d": "Markdown LiaScript, wklejony lub przesłany.", "kind_lti_d": "Uruchom zarejestrowane narzędzie LTI 1.3.",
		"kind_quiz_d": "Pytania w formacie GIFT, wklejone lub przesłane.", "kind_project_d": "Uczniowie przesyłają swoje prace.",
		"kind_interactive_d": "Prześlij pakiet aplikacji interaktywnej (.zip).", "kind_layout_d": "Strona z zatwierdzonych komponentów (JSON).",
		"text": "Tekst", "text_hint": "Markdown: **pogrubienie**, _kursywa_, # nagłówki, listy i odnośniki.", "file": "Plik",
		"upload_hint": "Do", "video_site": "Albo adres URL serwisu wideo", "url": "Adres URL", "package": "Pakiet",
		"gift": "Pytania w formacie GIFT", "gift_file": "Albo plik GIFT", "max_attempts": "Podejścia na ucznia (0: bez limitu)",
		"min_pass": "Punkty do zaliczenia", "time_limit": "Limit czasu", "time_limit_site": "Limit czasu quizów witryny dotyczy każdego quizu.",
		"instructions": "Polecenie", "accept": "Dozwolone typy plików", "accept_hint": "Rozszerzenia oddzielone przecinkami, np. pdf, docx.",
		"tool": "Narzędzie", "deep_link": "Albo wybierz treść w narzędziu", "deep_link_help": "Narzędzie otworzy się w nowym oknie; to, co tam wybierzesz, stanie się tematami lekcji. Potem odśwież stronę kursu, by je zobaczyć.", "deep_link_go": "Otwórz narzędzie, by wybrać", "no_tools": "Nie zarejestrowano jeszcze żadnego narzędzia LTI: administrator dodaje je w Administracji, LTI.",
		"document":       "Dokument (tablica JSON węzłów)",
		"layout_help":    "Jedna tablica JSON węzłów {component, props}; zacznij od komponentów poniżej.",
		"layout_outline": "Węzły dokumentu", "layout_broken": "Dokument nie jest jeszcze tablicą JSON: nie da się wypisać jego węzłów.",
		"layout_palette": "Zatwierdzone komponenty", "layout_palette_help": "Każdy z przykładowym węzłem: wstaw go albo skopiuj do dokumentu, potem zmień jego tekst.",
		"layout_insert": "Wstaw", "layout_not_json": "Dokument nie jest tablicą JSON: popraw go przed wstawieniem komponentu.", "fallback": "Tekst zastępczy (Markdown)", "height": "Wysokość w pikselach",
		"lia_completion": "Ukończone, gdy", "lia_all": "odwiedzono każdą sekcję i rozwiązano każdy quiz", "lia_sections": "odwiedzono każdą sekcję", "lia_quizzes": "rozwiązano każdy quiz",
		"choose_sco": "Pakiet ma kilka SCO. Wybierz to, które odtwarza ten temat.",
		"choose_au":  "Pakiet ma kilka jednostek AU. Wybierz tę, którą odtwarza ten temat.",
		"uploading":  "Przesyłanie…", "topic": "Temat", "questions": "Pytania", "right_answer": "Poprawna odpowiedź",
		"score": "Punkty", "processing": "Przetwarzanie", "processing_hint": "Wideo jest konwertowane; ten komunikat odświeża się sam.", "check_again": "Sprawdź ponownie",
		"processing_done": "Gotowe", "processing_queued": "czeka w kolejce", "processing_running": "trwa konwersja", "processing_failed": "Konwersja nie powiodła się", "attempts": "Podejścia",
		"unlimited": "bez limitu", "problem": "API odrzuciło to:", "no_access": "Tworzenie kursów jest dla prowadzących i administratorów.",
		"back_to_course": "Wróć do kursu", "tutors_hint": "Kto może edytować kurs.", "none": "—",
		"course_list_lead": "Wszystkie kursy, które możesz edytować, z ich stanem i uczniami.", "open": "Otwórz",
		"kinds_title": "Rodzaje tematów", "failed": "To się nie udało", "form_unreadable": "Nie udało się odczytać formularza.",
		"form_too_large": "Formularz jest za duży.", "bad_number": "Podaj liczbę, np. 7,5.", "bad_date": "Podaj datę w formacie RRRR-MM-DD.", "steps": "Kroki", "true": "Prawda", "false": "Fałsz",
		"h5p_editor": "Edytor H5P", "h5p_open_editor": "Zamiast tego utwórz go w edytorze H5P", "h5p_upload_instead": "Zamiast tego prześlij pakiet .h5p",
		"h5p_edit_content": "Edytuj treść w edytorze H5P", "h5p_editor_help": "Zbuduj treść w edytorze. Zapisanie formularza zapisuje najpierw treść, potem temat.",
		"h5p_editor_script": "Edytor H5P wymaga JavaScriptu. Bez niego prześlij pakiet .h5p.", "h5p_saving": "Zapisywanie treści H5P…",
		"h5p_editor_off":  "Edytor H5P nie jest tu dostępny: ta witryna nie ma osobnego źródła treści, w którym mógłby działać.",
		"h5p_editor_down": "Usługa H5P jest teraz nieosiągalna. Spróbuj ponownie za chwilę.",
	},
	"zh": {
		"teach": "教学", "dashboard_lead": "创建课程，添加各种类型的主题，并向学员发布。",
		"courses": "课程", "new_course": "新建课程", "all_courses": "全部课程", "your_courses": "你的课程",
		"no_courses": "还没有课程。", "title": "标题", "summary": "简介", "image": "图片", "tags": "标签",
		"tags_hint": "用逗号分隔。", "categories": "分类", "status": "状态", "starts": "开放日期",
		"ends": "关闭日期", "tutors": "导师", "learners": "学员", "completion": "完成率", "n_finished": "人已完成", "average": "平均", "save": "保存",
		"create": "创建课程", "edit": "编辑", "delete": "删除", "cancel": "取消", "search": "搜索",
		"status_draft": "草稿", "status_published": "已发布", "status_archived": "已归档",
		"status_published_unactivated": "已发布，未开放", "any_status": "任意状态", "filter": "筛选",
		"course_details": "课程信息", "program": "课程大纲", "lessons": "课", "add_lesson": "添加课",
		"lesson_title": "课的标题", "add_topic": "添加主题", "clone": "复制", "move_up": "上移",
		"move_down": "下移", "drag_hint": "拖动课和主题来调整顺序，或使用箭头按钮。",
		"no_lessons": "这门课程还没有课。请在下方添加第一课。", "no_topics": "还没有主题。",
		"saved": "已保存。", "created": "课程已创建。", "deleted": "已删除。", "topic_added": "主题已添加。",
		"lesson_cloned": "课已复制。", "moved": "已移动。",
		"delete_course_q": "删除这门课程？", "delete_lesson_q": "删除这一课？", "delete_topic_q": "删除这个主题？",
		"delete_warning": "此操作无法撤销。学员将失去其中的学习进度。", "delete_confirm": "是的，删除",
		"view_as_learner": "以学员身份查看", "kind": "类型", "choose_kind": "哪种类型的主题？", "lesson": "课",
		"kind_richtext": "富文本", "kind_video": "视频", "kind_audio": "音频", "kind_image": "图片",
		"kind_pdf": "PDF 文档", "kind_oembed": "嵌入网址", "kind_h5p": "H5P", "kind_scorm": "SCORM 课件包",
		"kind_cmi5": "cmi5 课件包", "kind_liascript": "LiaScript", "kind_lti": "外部工具（LTI）",
		"kind_quiz": "GIFT 测验", "kind_project": "项目作业", "kind_interactive": "互动应用", "kind_layout": "页面布局",
		"kind_richtext_d": "在这里编写带格式的文字。", "kind_video_d": "上传视频文件或链接视频网站。",
		"kind_audio_d": "上传 MP3 或 Ogg 文件。", "kind_image_d": "上传一张图片。", "kind_pdf_d": "上传 PDF 文件。",
		"kind_oembed_d": "视频或媒体网站的页面。", "kind_h5p_d": "上传 .h5p 课件包，或在 H5P 编辑器中创建。",
		"kind_scorm_d": "上传 SCORM 1.2 或 2004 的 .zip 文件。", "kind_cmi5_d": "上传 cmi5 的 .zip 或 cmi5.xml。",
		"kind_liascript_d": "粘贴或上传 LiaScript Markdown。", "kind_lti_d": "启动已注册的 LTI 1.3 工具。",
		"kind_quiz_d": "粘贴或上传 GIFT 格式的题目。", "kind_project_d": "学员上传自己的作业。",
		"kind_interactive_d": "上传互动应用包（.zip）。", "kind_layout_d": "由认可组件组成的学习页面（JSON）。",
		"text": "正文", "text_hint": "Markdown：**粗体**、_斜体_、# 标题、列表和链接。", "file": "文件",
		"upload_hint": "最大", "video_site": "或视频网站网址", "url": "网址", "package": "课件包",
		"gift": "GIFT 格式的题目", "gift_file": "或 GIFT 文件", "max_attempts": "每位学员的作答次数（0 表示不限）",
		"min_pass": "及格分数", "time_limit": "时间限制", "time_limit_site": "站点的测验时间限制适用于所有测验。",
		"instructions": "作业说明", "accept": "允许的文件类型", "accept_hint": "扩展名，用逗号分隔，例如 pdf, docx。",
		"tool": "工具", "deep_link": "或在工具中选择内容", "deep_link_help": "工具将在新窗口中打开；你在其中选择的内容会成为本课的主题。之后刷新课程页面即可看到。", "deep_link_go": "打开工具进行选择", "no_tools": "尚未注册任何 LTI 工具：管理员可在“管理 › LTI”中添加工具。",
		"document":       "文档（节点的 JSON 数组）",
		"layout_help":    "一个由节点 {component, props} 组成的 JSON 数组；可从下面的组件开始。",
		"layout_outline": "文档的节点", "layout_broken": "文档还不是 JSON 数组，无法列出其节点。",
		"layout_palette": "认可的组件", "layout_palette_help": "每个组件都附有示例节点：插入或复制到文档中，再修改其中的文字。",
		"layout_insert": "插入", "layout_not_json": "文档不是 JSON 数组：请先改正，再插入组件。", "fallback": "备用文本（Markdown）", "height": "高度（像素）",
		"lia_completion": "完成条件", "lia_all": "访问所有章节并答对所有测验", "lia_sections": "访问所有章节", "lia_quizzes": "答对所有测验",
		"choose_sco": "该课件包包含多个 SCO。请选择此主题播放的一个。",
		"choose_au":  "该课件包包含多个可分配单元。请选择此主题播放的一个。",
		"uploading":  "正在上传…", "topic": "主题", "questions": "题目", "right_answer": "正确答案",
		"score": "分数", "processing": "处理中", "processing_hint": "视频正在转码；此提示会自动更新。", "check_again": "再次检查",
		"processing_done": "就绪", "processing_queued": "排队等待中", "processing_running": "正在转码", "processing_failed": "转码失败", "attempts": "作答次数",
		"unlimited": "不限", "problem": "API 拒绝了此操作：", "no_access": "课程编写仅限导师和管理员。",
		"back_to_course": "返回课程", "tutors_hint": "谁可以编辑这门课程。", "none": "—",
		"course_list_lead": "你可以编辑的所有课程，以及它们的状态和学员。", "open": "打开",
		"kinds_title": "主题类型", "failed": "操作未成功", "form_unreadable": "无法读取表单。",
		"form_too_large": "表单过大。", "bad_number": "请输入数字，例如 7.5。", "bad_date": "请按 YYYY-MM-DD 格式输入日期。", "steps": "步骤", "true": "正确", "false": "错误",
		"h5p_editor": "H5P 编辑器", "h5p_open_editor": "改为在 H5P 编辑器中创建", "h5p_upload_instead": "改为上传 .h5p 课件包",
		"h5p_edit_content": "在 H5P 编辑器中编辑内容", "h5p_editor_help": "在编辑器中制作内容。保存表单时先保存内容，再保存主题。",
		"h5p_editor_script": "H5P 编辑器需要 JavaScript。没有它时，请上传 .h5p 课件包。", "h5p_saving": "正在保存 H5P 内容…",
		"h5p_editor_off":  "此处无法使用 H5P 编辑器：本站没有运行它的内容源。",
		"h5p_editor_down": "暂时无法连接 H5P 服务，请稍后再试。",
	},
}
