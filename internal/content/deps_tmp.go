package content

import (
	_ "github.com/microcosm-cc/bluemonday"
	_ "github.com/robfig/cron/v3"
	_ "github.com/yuin/goldmark"
)
