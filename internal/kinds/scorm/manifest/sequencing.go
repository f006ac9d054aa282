package manifest

// Sequencing is an IMS Simple Sequencing element of a SCORM 2004
// manifest (on an item, an organization, or in the sequencingCollection),
// kept whole so that the player's sequencing and later versions of it can
// read what the author wrote. The fields follow the element and attribute
// names of the IMS schema; absent attributes stay nil, so the schema's
// defaults apply (see Defaults).
type Sequencing struct {
	ID              string           `xml:"ID,attr" json:"id,omitempty"`
	IDRef           string           `xml:"IDRef,attr" json:"idref,omitempty"`
	ControlMode     *ControlMode     `xml:"controlMode" json:"control_mode,omitempty"`
	Rules           *Rules           `xml:"sequencingRules" json:"rules,omitempty"`
	LimitConditions *LimitConditions `xml:"limitConditions" json:"limit_conditions,omitempty"`
	RollupRules     *RollupRules     `xml:"rollupRules" json:"rollup_rules,omitempty"`
	// ADLObjectives (4th edition's adlseq:objectives) must stand before
	// Objectives: both elements are named objectives, and a field matches
	// by local name unless it names the namespace, so the first field that
	// matches takes the element.
	ADLObjectives       *ADLObjectives        `xml:"http://www.adlnet.org/xsd/adlseq_v1p3 objectives" json:"adl_objectives,omitempty"`
	Objectives          *Objectives           `xml:"objectives" json:"objectives,omitempty"`
	DeliveryControls    *DeliveryControls     `xml:"deliveryControls" json:"delivery_controls,omitempty"`
	Randomization       *Randomization        `xml:"randomizationControls" json:"randomization,omitempty"`
	RollupConsideration *RollupConsiderations `xml:"rollupConsiderations" json:"rollup_considerations,omitempty"`
	ConstrainedChoice   *ConstrainedChoice    `xml:"constrainedChoiceConsiderations" json:"constrained_choice,omitempty"`
}

// ControlMode says which navigation an activity's children allow.
type ControlMode struct {
	Choice                         *bool `xml:"choice,attr" json:"choice,omitempty"`
	ChoiceExit                     *bool `xml:"choiceExit,attr" json:"choice_exit,omitempty"`
	Flow                           *bool `xml:"flow,attr" json:"flow,omitempty"`
	ForwardOnly                    *bool `xml:"forwardOnly,attr" json:"forward_only,omitempty"`
	UseCurrentAttemptObjectiveInfo *bool `xml:"useCurrentAttemptObjectiveInfo,attr" json:"use_current_attempt_objective_info,omitempty"`
	UseCurrentAttemptProgressInfo  *bool `xml:"useCurrentAttemptProgressInfo,attr" json:"use_current_attempt_progress_info,omitempty"`
}

// Rules are the pre-condition, exit and post-condition rules.
type Rules struct {
	Pre  []Rule `xml:"preConditionRule" json:"pre,omitempty"`
	Exit []Rule `xml:"exitConditionRule" json:"exit,omitempty"`
	Post []Rule `xml:"postConditionRule" json:"post,omitempty"`
}

// Rule is one sequencing rule: conditions and an action.
type Rule struct {
	Conditions Conditions `xml:"ruleConditions" json:"conditions"`
	Action     Action     `xml:"ruleAction" json:"action"`
}

// Conditions are a rule's conditions and how they combine (all, any).
type Conditions struct {
	Combination string      `xml:"conditionCombination,attr" json:"combination,omitempty"`
	List        []Condition `xml:"ruleCondition" json:"list"`
}

// Condition is one rule or rollup condition.
type Condition struct {
	Condition           string `xml:"condition,attr" json:"condition"`
	Operator            string `xml:"operator,attr" json:"operator,omitempty"`
	ReferencedObjective string `xml:"referencedObjective,attr" json:"referenced_objective,omitempty"`
	MeasureThreshold    string `xml:"measureThreshold,attr" json:"measure_threshold,omitempty"`
}

// Action is a rule's action (skip, disabled, exitParent, retry, ...).
type Action struct {
	Action string `xml:"action,attr" json:"action"`
}

// LimitConditions limit the attempts of an activity.
type LimitConditions struct {
	AttemptLimit                 string `xml:"attemptLimit,attr" json:"attempt_limit,omitempty"`
	AttemptAbsoluteDurationLimit string `xml:"attemptAbsoluteDurationLimit,attr" json:"attempt_absolute_duration_limit,omitempty"`
}

// RollupRules say how children's status rolls up to their parent.
type RollupRules struct {
	ObjectiveSatisfied *bool        `xml:"rollupObjectiveSatisfied,attr" json:"objective_satisfied,omitempty"`
	ProgressCompletion *bool        `xml:"rollupProgressCompletion,attr" json:"progress_completion,omitempty"`
	MeasureWeight      string       `xml:"objectiveMeasureWeight,attr" json:"measure_weight,omitempty"`
	Rules              []RollupRule `xml:"rollupRule" json:"rules,omitempty"`
}

// RollupRule is one rollup rule.
type RollupRule struct {
	ChildActivitySet string           `xml:"childActivitySet,attr" json:"child_activity_set,omitempty"`
	MinimumCount     string           `xml:"minimumCount,attr" json:"minimum_count,omitempty"`
	MinimumPercent   string           `xml:"minimumPercent,attr" json:"minimum_percent,omitempty"`
	Conditions       RollupConditions `xml:"rollupConditions" json:"conditions"`
	Action           Action           `xml:"rollupAction" json:"action"`
}

// RollupConditions are a rollup rule's conditions.
type RollupConditions struct {
	Combination string      `xml:"conditionCombination,attr" json:"combination,omitempty"`
	List        []Condition `xml:"rollupCondition" json:"list"`
}

// Objectives are an activity's primary and other objectives.
type Objectives struct {
	Primary *Objective  `xml:"primaryObjective" json:"primary,omitempty"`
	Others  []Objective `xml:"objective" json:"others,omitempty"`
}

// Objective is one learning objective and its global mappings.
type Objective struct {
	ObjectiveID          string    `xml:"objectiveID,attr" json:"objective_id,omitempty"`
	SatisfiedByMeasure   *bool     `xml:"satisfiedByMeasure,attr" json:"satisfied_by_measure,omitempty"`
	MinNormalizedMeasure string    `xml:"minNormalizedMeasure" json:"min_normalized_measure,omitempty"`
	MapInfo              []MapInfo `xml:"mapInfo" json:"map_info,omitempty"`
}

// MapInfo maps a local objective to a global one.
type MapInfo struct {
	TargetObjectiveID      string `xml:"targetObjectiveID,attr" json:"target_objective_id"`
	ReadSatisfiedStatus    *bool  `xml:"readSatisfiedStatus,attr" json:"read_satisfied_status,omitempty"`
	ReadNormalizedMeasure  *bool  `xml:"readNormalizedMeasure,attr" json:"read_normalized_measure,omitempty"`
	WriteSatisfiedStatus   *bool  `xml:"writeSatisfiedStatus,attr" json:"write_satisfied_status,omitempty"`
	WriteNormalizedMeasure *bool  `xml:"writeNormalizedMeasure,attr" json:"write_normalized_measure,omitempty"`
}

// ADLObjectives are the 4th edition's extension of an activity's
// objectives (adlseq:objectives): further maps of the objectives the IMS
// element declares, for the completion status, the progress measure and
// the raw, min and max scores.
type ADLObjectives struct {
	List []ADLObjective `xml:"objective" json:"list,omitempty"`
}

// ADLObjective names an objective of the activity (its objectiveID) and
// its ADL maps.
type ADLObjective struct {
	ObjectiveID string       `xml:"objectiveID,attr" json:"objective_id"`
	MapInfo     []ADLMapInfo `xml:"mapInfo" json:"map_info,omitempty"`
}

// ADLMapInfo maps an objective's completion, progress and scores to a
// global objective. Reads default to true, writes to false (the ADL
// schema's defaults).
type ADLMapInfo struct {
	TargetObjectiveID     string `xml:"targetObjectiveID,attr" json:"target_objective_id"`
	ReadRawScore          *bool  `xml:"readRawScore,attr" json:"read_raw_score,omitempty"`
	ReadMinScore          *bool  `xml:"readMinScore,attr" json:"read_min_score,omitempty"`
	ReadMaxScore          *bool  `xml:"readMaxScore,attr" json:"read_max_score,omitempty"`
	ReadCompletionStatus  *bool  `xml:"readCompletionStatus,attr" json:"read_completion_status,omitempty"`
	ReadProgressMeasure   *bool  `xml:"readProgressMeasure,attr" json:"read_progress_measure,omitempty"`
	WriteRawScore         *bool  `xml:"writeRawScore,attr" json:"write_raw_score,omitempty"`
	WriteMinScore         *bool  `xml:"writeMinScore,attr" json:"write_min_score,omitempty"`
	WriteMaxScore         *bool  `xml:"writeMaxScore,attr" json:"write_max_score,omitempty"`
	WriteCompletionStatus *bool  `xml:"writeCompletionStatus,attr" json:"write_completion_status,omitempty"`
	WriteProgressMeasure  *bool  `xml:"writeProgressMeasure,attr" json:"write_progress_measure,omitempty"`
}

// DeliveryControls say whether the content reports its own status.
type DeliveryControls struct {
	Tracked                *bool `xml:"tracked,attr" json:"tracked,omitempty"`
	CompletionSetByContent *bool `xml:"completionSetByContent,attr" json:"completion_set_by_content,omitempty"`
	ObjectiveSetByContent  *bool `xml:"objectiveSetByContent,attr" json:"objective_set_by_content,omitempty"`
}

// Randomization controls (kept; the player does not reorder).
type Randomization struct {
	RandomizationTiming string `xml:"randomizationTiming,attr" json:"randomization_timing,omitempty"`
	SelectCount         string `xml:"selectCount,attr" json:"select_count,omitempty"`
	ReorderChildren     *bool  `xml:"reorderChildren,attr" json:"reorder_children,omitempty"`
	SelectionTiming     string `xml:"selectionTiming,attr" json:"selection_timing,omitempty"`
}

// RollupConsiderations (ADL extension) say when a child counts in rollup.
type RollupConsiderations struct {
	RequiredForSatisfied        string `xml:"requiredForSatisfied,attr" json:"required_for_satisfied,omitempty"`
	RequiredForNotSatisfied     string `xml:"requiredForNotSatisfied,attr" json:"required_for_not_satisfied,omitempty"`
	RequiredForCompleted        string `xml:"requiredForCompleted,attr" json:"required_for_completed,omitempty"`
	RequiredForIncomplete       string `xml:"requiredForIncomplete,attr" json:"required_for_incomplete,omitempty"`
	MeasureSatisfactionIfActive *bool  `xml:"measureSatisfactionIfActive,attr" json:"measure_satisfaction_if_active,omitempty"`
}

// ConstrainedChoice (ADL extension) limits choice to nearby activities.
type ConstrainedChoice struct {
	PreventActivation *bool `xml:"preventActivation,attr" json:"prevent_activation,omitempty"`
	ConstrainChoice   *bool `xml:"constrainChoice,attr" json:"constrain_choice,omitempty"`
}
