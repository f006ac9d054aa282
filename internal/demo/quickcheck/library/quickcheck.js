/*
 * Quick check (LMS.QuickCheck 1.0): a short multiple-choice quiz for the
 * H5P player. The learner picks one answer per question and checks; a
 * check with every question answered completes the content with its score
 * (an xAPI "completed" statement). The chosen answers are the content's
 * state, so a learner who comes back finds them again.
 *
 * Written for the LMS platform. MIT licence.
 */
(function (H5P) {
  'use strict';

  const LMS = (window.LMS = window.LMS || {});

  // Texts of the content type; the content's l10n parameters override them.
  const defaultTexts = {
    questionNumber: 'Question :number of :total',
    check: 'Check',
    retry: 'Try again',
    showSolution: 'Show solution',
    unanswered: 'Answer every question before you check: :answered of :total answered.',
    notAnswered: 'Not answered yet.',
    result: 'You got :score of :total right.',
    correct: 'Correct.',
    incorrect: 'Not quite.',
    solution: 'The answer is: :answer.',
    yourAnswer: 'Your answer',
    rightAnswer: 'Right answer',
    empty: 'This quiz has no questions yet.'
  };

  // Each instance gets its own prefix for element ids and radio groups, so
  // that two quizzes on one page never share a group.
  let instances = 0;

  function text(value) {
    return typeof value === 'string' ? value.trim() : '';
  }

  // fill replaces the :name placeholders of a text by values[name].
  function fill(template, values) {
    return String(template).replace(/:([a-z]+)/g, (whole, name) =>
      Object.prototype.hasOwnProperty.call(values, name) ? String(values[name]) : whole);
  }

  // readTexts takes the non-empty string texts of the parameters over the
  // defaults.
  function readTexts(l10n) {
    const out = Object.assign({}, defaultTexts);
    if (l10n && typeof l10n === 'object') {
      Object.keys(defaultTexts).forEach((key) => {
        if (text(l10n[key]) !== '') {
          out[key] = l10n[key];
        }
      });
    }
    return out;
  }

  // readQuestions keeps the usable questions of the parameters: a text and
  // at least two answers, one of them marked correct (the first so marked
  // counts). Answers are plain text.
  function readQuestions(list) {
    const out = [];
    (Array.isArray(list) ? list : []).forEach((q) => {
      if (!q || typeof q !== 'object') {
        return;
      }
      const answers = (Array.isArray(q.answers) ? q.answers : []).filter((a) => a && text(a.text) !== '');
      const correct = answers.findIndex((a) => a.correct === true);
      if (text(q.text) === '' || answers.length < 2 || correct < 0) {
        return;
      }
      out.push({
        text: text(q.text),
        answers: answers.map((a) => text(a.text)),
        correct: correct,
        explanation: text(q.explanation)
      });
    });
    return out;
  }

  // readAnswers reads the answers of a saved state: one answer index, or
  // null, per question. A state of another version of the questions (a
  // different count) is dropped.
  function readAnswers(state, questions) {
    const saved = state && Array.isArray(state.answers) && state.answers.length === questions.length ?
      state.answers : [];
    return questions.map((q, i) => {
      const a = saved[i];
      return Number.isInteger(a) && a >= 0 && a < q.answers.length ? a : null;
    });
  }

  function element(tag, className, content) {
    const node = document.createElement(tag);
    if (className) {
      node.className = className;
    }
    if (content !== undefined) {
      node.textContent = content;
    }
    return node;
  }

  /**
   * The content type's constructor, as the H5P core calls it.
   *
   * @param {object} params the content parameters (see semantics.json)
   * @param {number|string} contentId the content's id
   * @param {object} [contentData] extras of the core: previousState, metadata
   */
  function QuickCheck(params, contentId, contentData) {
    H5P.EventDispatcher.call(this);
    params = params || {};
    contentData = contentData || {};
    this.contentId = contentId;
    this.metadata = contentData.metadata || {};
    this.texts = readTexts(params.l10n);
    this.intro = text(params.intro);
    this.questions = readQuestions(params.questions);

    const previous = contentData.previousState;
    this.answers = readAnswers(previous, this.questions);
    // A check (and a shown solution) is restored only with every answer
    // it was made with.
    this.checked = Boolean(previous && previous.checked === true) && this.allAnswered();
    this.solutionsShown = Boolean(previous && previous.solutions === true) &&
      (this.checked || !previous.checked);
    // missing is set by a check with unanswered questions, to point them out.
    this.missing = false;

    instances += 1;
    this.prefix = 'lms-quickcheck-' + instances;
    this.parts = [];
  }

  QuickCheck.prototype = Object.create(H5P.EventDispatcher.prototype);
  QuickCheck.prototype.constructor = QuickCheck;

  /**
   * Renders the quiz into the container the core gives (a jQuery object).
   *
   * @param {jQuery|HTMLElement} $container
   */
  QuickCheck.prototype.attach = function ($container) {
    const container = $container && typeof $container.get === 'function' ? $container.get(0) : $container;
    container.classList.add('lms-quickcheck-container');
    container.textContent = '';
    container.appendChild(this.render());
    this.update();
    this.trigger('resize');
  };

  QuickCheck.prototype.render = function () {
    const t = this.texts;
    const total = this.questions.length;
    const root = element('div', 'lms-quickcheck');
    if (this.intro) {
      root.appendChild(element('p', 'lms-quickcheck__intro', this.intro));
    }
    if (total === 0) {
      root.appendChild(element('p', 'lms-quickcheck__empty', t.empty));
      this.root = root;
      return root;
    }

    this.parts = this.questions.map((q, i) => {
      const set = element('fieldset', 'lms-quickcheck__question');
      set.setAttribute('data-question', String(i));
      const legend = element('legend', 'lms-quickcheck__legend');
      legend.appendChild(element('span', 'lms-quickcheck__number', fill(t.questionNumber, { number: i + 1, total: total })));
      legend.appendChild(element('span', 'lms-quickcheck__text', q.text));
      set.appendChild(legend);

      const list = element('div', 'lms-quickcheck__answers');
      const part = { set: set, inputs: [], labels: [], marks: [], feedback: null };
      q.answers.forEach((answer, j) => {
        const id = this.prefix + '-q' + i + '-a' + j;
        const label = element('label', 'lms-quickcheck__answer');
        label.htmlFor = id;
        const input = document.createElement('input');
        input.type = 'radio';
        input.id = id;
        input.name = this.prefix + '-q' + i;
        input.value = String(j);
        input.addEventListener('change', () => {
          if (input.checked) {
            this.choose(i, j);
          }
        });
        const mark = element('span', 'lms-quickcheck__mark');
        label.appendChild(input);
        label.appendChild(element('span', 'lms-quickcheck__label', answer));
        label.appendChild(mark);
        list.appendChild(label);
        part.inputs.push(input);
        part.labels.push(label);
        part.marks.push(mark);
      });
      set.appendChild(list);
      part.feedback = element('p', 'lms-quickcheck__feedback');
      set.appendChild(part.feedback);
      root.appendChild(set);
      return part;
    });

    const actions = element('div', 'lms-quickcheck__actions');
    this.checkButton = this.button(t.check, 'lms-quickcheck__check', () => this.check());
    this.solutionButton = this.button(t.showSolution, 'lms-quickcheck__solution', () => {
      this.showSolutions();
      this.retryButton.focus();
    });
    this.retryButton = this.button(t.retry, 'lms-quickcheck__retry', () => {
      this.resetTask();
      this.parts[0].inputs[0].focus();
    });
    actions.appendChild(this.checkButton);
    actions.appendChild(this.solutionButton);
    actions.appendChild(this.retryButton);

    // The result and the reminder of unanswered questions, announced
    // politely by screen readers, come before the buttons.
    this.status = element('p', 'lms-quickcheck__status');
    this.status.setAttribute('role', 'status');
    root.appendChild(this.status);
    root.appendChild(actions);
    this.root = root;
    return root;
  };

  QuickCheck.prototype.button = function (label, className, onClick) {
    const b = element('button', 'lms-quickcheck__button ' + className, label);
    b.type = 'button';
    b.addEventListener('click', onClick);
    return b;
  };

  // update shows the state (answers, check, solutions) in the page: the one
  // place that writes it, whatever changed.
  QuickCheck.prototype.update = function () {
    if (this.parts.length === 0) {
      return;
    }
    const t = this.texts;
    const locked = this.checked || this.solutionsShown;
    this.parts.forEach((part, i) => {
      const q = this.questions[i];
      const chosen = this.answers[i];
      part.inputs.forEach((input, j) => {
        const mine = chosen === j;
        const right = j === q.correct;
        input.checked = mine;
        input.disabled = locked;
        part.labels[j].classList.toggle('is-correct', (this.checked && mine && right) || (this.solutionsShown && right));
        part.labels[j].classList.toggle('is-wrong', this.checked && mine && !right);
        let mark = '';
        if (this.checked && mine) {
          mark = t.yourAnswer;
        } else if (this.solutionsShown && right) {
          mark = t.rightAnswer;
        }
        part.marks[j].textContent = mark;
        part.marks[j].hidden = mark === '';
      });

      const solution = fill(t.solution, { answer: q.answers[q.correct] });
      const explained = (s) => (q.explanation ? s + ' ' + q.explanation : s);
      let feedback = '';
      let kind = '';
      if (this.checked && chosen === q.correct) {
        feedback = explained(t.correct);
        kind = 'is-correct';
      } else if (this.checked) {
        feedback = this.solutionsShown ? explained(t.incorrect + ' ' + solution) : t.incorrect;
        kind = 'is-wrong';
      } else if (this.solutionsShown) {
        feedback = explained(solution);
      } else if (this.missing && chosen === null) {
        feedback = t.notAnswered;
        kind = 'is-missing';
      }
      part.feedback.textContent = feedback;
      part.feedback.hidden = feedback === '';
      part.feedback.className = 'lms-quickcheck__feedback' + (kind ? ' ' + kind : '');
      part.set.classList.toggle('is-missing', kind === 'is-missing');
    });

    const score = this.getScore();
    const max = this.getMaxScore();
    this.checkButton.hidden = locked;
    this.solutionButton.hidden = !this.checked || this.solutionsShown || score === max;
    this.retryButton.hidden = !locked;
    if (this.checked) {
      this.status.textContent = fill(t.result, { score: score, total: max });
    } else if (this.missing) {
      this.status.textContent = fill(t.unanswered, { answered: this.answeredCount(), total: max });
    } else {
      this.status.textContent = '';
    }
  };

  // choose records the learner's pick of answer j for question i.
  QuickCheck.prototype.choose = function (i, j) {
    if (this.checked || this.solutionsShown) {
      return;
    }
    this.answers[i] = j;
    if (this.missing && this.allAnswered()) {
      this.missing = false;
    }
    this.update();
    this.triggerXAPI('interacted');
    this.trigger('resize');
  };

  // check scores the answers once every question has one; otherwise it
  // points out the questions left.
  QuickCheck.prototype.check = function () {
    if (this.checked || this.parts.length === 0) {
      return;
    }
    if (!this.allAnswered()) {
      this.missing = true;
      this.update();
      this.trigger('resize');
      return;
    }
    this.missing = false;
    this.checked = true;
    this.update();
    const score = this.getScore();
    const max = this.getMaxScore();
    this.triggerXAPIScored(score, max, 'completed', true, score === max);
    // The check button is gone: keep the keyboard focus in the quiz.
    (this.solutionButton.hidden ? this.retryButton : this.solutionButton).focus();
    this.trigger('resize');
  };

  QuickCheck.prototype.answeredCount = function () {
    return this.answers.filter((a) => a !== null).length;
  };

  QuickCheck.prototype.allAnswered = function () {
    return this.answeredCount() === this.questions.length;
  };

  /** @returns {number} how many questions have their correct answer chosen */
  QuickCheck.prototype.getScore = function () {
    return this.answers.reduce((n, a, i) => n + (a === this.questions[i].correct ? 1 : 0), 0);
  };

  /** @returns {number} the number of questions */
  QuickCheck.prototype.getMaxScore = function () {
    return this.questions.length;
  };

  /** @returns {boolean} whether the learner has chosen any answer */
  QuickCheck.prototype.getAnswerGiven = function () {
    return this.answeredCount() > 0;
  };

  /** Shows the right answer of every question; answers can no longer change. */
  QuickCheck.prototype.showSolutions = function () {
    this.solutionsShown = true;
    this.missing = false;
    this.update();
    this.trigger('resize');
  };

  /** Clears every answer, the check and the solutions. */
  QuickCheck.prototype.resetTask = function () {
    this.answers = this.questions.map(() => null);
    this.checked = false;
    this.solutionsShown = false;
    this.missing = false;
    this.update();
    this.trigger('resize');
  };

  /**
   * The state the core saves for the learner and hands back as
   * contentData.previousState.
   *
   * @returns {{answers: Array<number|null>, checked: boolean, solutions: boolean}}
   */
  QuickCheck.prototype.getCurrentState = function () {
    return { answers: this.answers.slice(), checked: this.checked, solutions: this.solutionsShown };
  };

  /** @returns {string} the title of the content, for xAPI statements */
  QuickCheck.prototype.getTitle = function () {
    const title = text(this.metadata.title) || 'Quick check';
    return typeof H5P.createTitle === 'function' ? H5P.createTitle(title) : title;
  };

  LMS.QuickCheck = QuickCheck;
})(window.H5P);
