// The reference frontend's only script. Pages work without it; on a topic
// page it records time (pings), completes the topic the way its kind
// completes, and talks to the H5P embed. It reaches the API only through
// /bff/ on this origin: the session token stays in an httpOnly cookie the
// script never sees.
(function () {
  'use strict';

  // The course outline comes folded, so that on a phone the topic starts
  // on the first screen; where the outline stands beside the topic (the
  // grid's breakpoint in app.css) it is opened. Without script it stays
  // folded, one tap away.
  var outline = document.querySelector('details[data-open-wide]');
  if (outline && window.matchMedia('(min-width: 960px)').matches) { outline.open = true; }

  var topic = document.getElementById('topic');
  if (!topic) { return; }

  // A transcoded video plays its HLS variants: natively where the browser
  // can, else through hls.js (loaded only then), else the original file.
  // data-player tells which.
  var hlsVideo = document.querySelector('video[data-hls]');
  if (hlsVideo) {
    var original = function () {
      hlsVideo.dataset.player = 'original';
      hlsVideo.src = hlsVideo.dataset.original;
    };
    if (hlsVideo.canPlayType('application/vnd.apple.mpegurl')) {
      hlsVideo.dataset.player = 'native';
      hlsVideo.src = hlsVideo.dataset.hls;
    } else {
      var s = document.createElement('script');
      s.src = '/assets/hls.min.js';
      s.onload = function () {
        if (!window.Hls || !window.Hls.isSupported()) { original(); return; }
        var hls = new window.Hls({ enableWorker: false });
        hls.on(window.Hls.Events.ERROR, function (_, data) {
          if (data.fatal) { hls.destroy(); original(); }
        });
        hls.on(window.Hls.Events.MANIFEST_PARSED, function (_, data) {
          hlsVideo.dataset.levels = String(data.levels.length);
        });
        hls.loadSource(hlsVideo.dataset.hls);
        hls.attachMedia(hlsVideo);
        hlsVideo.dataset.player = 'hls.js';
      };
      s.onerror = original;
      document.head.appendChild(s);
    }
  }

  var courseId = topic.dataset.course;
  var topicId = topic.dataset.topic;
  var mode = topic.dataset.mode;
  var signedIn = topic.dataset.signedIn === '1';
  var status = Number(topic.dataset.status || 0);
  var labels = { 0: 'Not started', 1: 'Complete', 2: 'In progress' };
  var words = { 0: 'not started', 1: 'complete', 2: 'in progress' };

  function bff(method, path, body) {
    var headers = { 'Accept': 'application/json' };
    if (body !== undefined) { headers['Content-Type'] = 'application/json'; }
    return fetch('/bff' + path, {
      method: method,
      credentials: 'same-origin',
      headers: headers,
      body: body === undefined ? undefined : JSON.stringify(body)
    });
  }

  // setStatus shows a new status on the page and in the outline.
  function setStatus(s) {
    if (s === status || status === 1) { return; }
    status = s;
    topic.dataset.status = String(s);
    var badge = document.getElementById('topic-status');
    if (badge) {
      badge.textContent = labels[s];
      badge.className = 'topic-status status-' + s;
    }
    var items = document.querySelectorAll('[data-topic-id="' + topicId + '"]');
    Array.prototype.forEach.call(items, function (el) {
      el.classList.remove('status-0', 'status-1', 'status-2');
      el.classList.add('status-' + s);
      var text = el.querySelector('.status-text');
      if (text) { text.textContent = '(' + words[s] + ')'; }
    });
    if (s === 1) {
      var form = document.getElementById('complete-form');
      if (form) { form.hidden = true; }
    }
  }

  // A SCORM topic: its player opens in the frame with the tracking token
  // posted (never in a URL); the SCO completes the topic itself, so the
  // page only asks for the status again now and then.
  var scormLaunch = document.getElementById('scorm-launch');
  if (scormLaunch) {
    // Posted after the page's load: a navigation of the frame started
    // while the page still loads is replaced by the frame's own first one.
    if (document.readyState === 'complete') { scormLaunch.submit(); } else {
      window.addEventListener('load', function () { scormLaunch.submit(); });
    }
    var box = document.getElementById('scorm-box');
    var full = document.getElementById('scorm-full');
    full.hidden = false;
    full.addEventListener('click', function () {
      var on = !box.classList.contains('scorm-full');
      box.classList.toggle('scorm-full', on);
      full.setAttribute('aria-pressed', String(on));
      full.textContent = on ? 'Leave full window' : 'Full window';
    });
    document.addEventListener('keydown', function (e) {
      if (e.key === 'Escape' && box.classList.contains('scorm-full')) { full.click(); }
    });
    if (signedIn) {
      setInterval(function () {
        if (status === 1) { return; }
        bff('GET', '/api/courses/progress/' + courseId)
          .then(function (res) { return res.ok ? res.json() : null; })
          .then(function (body) {
            var t = body && body.data && (body.data.topics || []).filter(function (x) { return String(x.topic_id) === topicId; })[0];
            if (t && t.status === 1) { setStatus(1); }
          })
          .catch(function () {});
      }, 10000);
    }
  }

  var completing = null;
  function complete() {
    if (!signedIn || status === 1) { return Promise.resolve(); }
    if (completing) { return completing; }
    completing = bff('PATCH', '/api/courses/progress/' + courseId,
      { progress: [{ topic_id: Number(topicId), status: 1 }] })
      .then(function (res) { if (res.ok) { setStatus(1); } })
      .catch(function () {})
      .then(function () { completing = null; });
    return completing;
  }

  // Time on the topic: a ping now and every 30 s while the page is
  // visible. The first ping also starts the course, so completion waits
  // for it.
  var PING_EVERY = 30000;
  function ping() {
    if (!signedIn || document.visibilityState !== 'visible') { return Promise.resolve(); }
    return bff('PUT', '/api/courses/progress/' + topicId + '/ping')
      .then(function (res) { return res.ok ? res.json() : null; })
      .then(function (body) {
        if (body && body.data && body.data.status === 2 && status === 0) { setStatus(2); }
      })
      .catch(function () {});
  }

  var started = mode === 'none' ? Promise.resolve() : ping();
  if (signedIn && mode !== 'none') {
    setInterval(ping, PING_EVERY);
    document.addEventListener('visibilitychange', function () {
      if (document.visibilityState === 'visible') { ping(); }
    });
  }

  function whenStarted(fn) { started.then(fn); }

  // Completion, as each kind defines it.
  if (signedIn) {
    if (mode === 'open') {
      whenStarted(complete);
    } else if (mode === 'read') {
      // Rich text completes once its end has been on screen.
      var end = document.getElementById('read-end');
      if (end && 'IntersectionObserver' in window) {
        var seen = new IntersectionObserver(function (entries) {
          entries.forEach(function (e) {
            if (e.isIntersecting) { seen.disconnect(); whenStarted(complete); }
          });
        });
        seen.observe(end);
      }
    } else if (mode === 'ended') {
      var media = document.querySelector('[data-track-end]');
      if (media) {
        media.addEventListener('ended', function () { whenStarted(complete); });
      }
    }
  }

  var form = document.getElementById('complete-form');
  if (form) {
    form.addEventListener('submit', function (e) {
      e.preventDefault();
      whenStarted(complete);
    });
  }

  // Practice questions of a layout topic: the answers are not in the
  // page; the API checks each one, and the first check completes the
  // topic.
  function showCheck(form, data) {
    var result = form.querySelector('.practice-result');
    var correct = {};
    (data.correct_options || []).forEach(function (i) { correct[i] = true; });
    Array.prototype.forEach.call(form.querySelectorAll('.practice-option'), function (label) {
      var input = label.querySelector('input');
      label.classList.toggle('is-correct', !!correct[input.value]);
      var mark = label.querySelector('.practice-mark');
      if (!mark) {
        mark = document.createElement('span');
        mark.className = 'practice-mark';
        label.appendChild(mark);
      }
      mark.textContent = correct[input.value] ? ' (correct answer)' : '';
    });
    result.textContent = '';
    var verdict = document.createElement('p');
    verdict.className = data.correct ? 'practice-verdict ok' : 'practice-verdict wrong';
    verdict.textContent = data.correct ? 'Correct.' : 'Not quite.';
    result.appendChild(verdict);
    (data.hints || []).forEach(function (hint) {
      var p = document.createElement('p');
      p.className = 'practice-hint';
      p.textContent = 'Hint: ' + hint;
      result.appendChild(p);
    });
    (data.feedback || []).forEach(function (text) {
      var p = document.createElement('p');
      p.className = 'practice-feedback';
      p.textContent = text;
      result.appendChild(p);
    });
    var right = rightAnswerText(form, data.right_answer);
    if (right) {
      var ra = document.createElement('p');
      ra.className = 'practice-right';
      ra.textContent = 'Right answer: ' + right;
      result.appendChild(ra);
    }
    if (data.solution) {
      var sol = document.createElement('p');
      sol.className = 'practice-solution';
      sol.textContent = 'Solution: ' + data.solution;
      result.appendChild(sol);
    }
  }

  // rightAnswerText words a GIFT question's right answer; choices are
  // marked on the options instead.
  function rightAnswerText(form, right) {
    if (!right) { return ''; }
    if (right.truth !== undefined) { return right.truth ? 'True' : 'False'; }
    if (right.text) { return right.text; }
    if (right.matches) {
      return Array.prototype.map.call(form.querySelectorAll('.practice-match'), function (p, i) {
        return p.querySelector('label').textContent + ': ' + (right.matches[i] || '');
      }).join('; ');
    }
    return '';
  }

  // practiceBody is the check's body: selected for a choice question, or
  // answer in the quiz answer's shape for a GIFT question.
  function practiceBody(qf) {
    var body = { node: Number(qf.dataset.node), question: Number(qf.dataset.question) };
    var kind = qf.dataset.kind;
    var checked = Array.prototype.map.call(qf.querySelectorAll('input:checked'), function (input) { return input.value; });
    if (!kind) {
      body.selected = checked.map(Number);
    } else if (kind === 'multichoice') {
      body.answer = { choices: checked.map(Number) };
    } else if (kind === 'truefalse') {
      body.answer = checked.length ? { truth: checked[0] === 'true' } : {};
    } else if (kind === 'matching') {
      body.answer = { matches: Array.prototype.map.call(qf.querySelectorAll('select'), function (sel) { return sel.value; }) };
    } else {
      body.answer = { text: qf.querySelector('.practice-text').value };
    }
    return body;
  }

  Array.prototype.forEach.call(document.querySelectorAll('form.practice-question'), function (qf) {
    qf.addEventListener('submit', function (e) {
      e.preventDefault();
      var result = qf.querySelector('.practice-result');
      if (!signedIn) {
        result.textContent = 'Sign in to check your answers.';
        return;
      }
      var body = practiceBody(qf);
      whenStarted(function () {
        bff('POST', '/api/topics/' + topicId + '/practice/check', body)
          .then(function (res) { return res.json().then(function (b) { return { ok: res.ok, body: b }; }); })
          .then(function (r) {
            if (!r.ok || !r.body || !r.body.data) {
              result.textContent = (r.body && r.body.message) || 'Your answer could not be checked.';
              return;
            }
            showCheck(qf, r.body.data);
            setStatus(1);
          })
          .catch(function () { result.textContent = 'Your answer could not be checked. Please try again.'; });
      });
    });
  });

  // The quiz player. Questions come from the attempt, without anything
  // that tells the right answers; every change is saved at once (text
  // after a short pause), so a reload or a closed tab loses nothing. The
  // server keeps the time: the countdown only shows it, and the attempt
  // ends itself when it runs out.
  var quiz = document.getElementById('quiz');
  if (quiz && signedIn) {
    var quizTopic = Number(quiz.dataset.topic);
    var qForm = document.getElementById('quiz-form');
    var qStart = document.getElementById('quiz-start');
    var qEnd = document.getElementById('quiz-end');
    var qTimer = document.getElementById('quiz-timer');
    var qMessage = document.getElementById('quiz-message');
    var attempt = null;
    var deadline = 0;
    var ticking = null;
    var pending = {};
    var saving = 0;

    var el = function (tag, attrs, text) {
      var node = document.createElement(tag);
      Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
      if (text !== undefined) { node.textContent = text; }
      return node;
    };
    var say = function (text) { qMessage.textContent = text; };
    var json = function (res) {
      return res.json().then(function (body) {
        if (!res.ok) { throw new Error(body && body.message ? body.message : 'The quiz could not be reached.'); }
        return body;
      });
    };
    var points = function (n) { return (Math.round(n * 100) / 100) + (n === 1 ? ' point' : ' points'); };

    var save = function (qid, answer) {
      saving++;
      quiz.dataset.saving = String(saving);
      return bff('POST', '/api/quiz-attempts/' + attempt.id + '/answer', { question_id: qid, answer: answer })
        .then(json)
        .then(function (body) {
          var mark = document.getElementById('saved-' + qid);
          if (mark) { mark.textContent = 'Saved'; }
          // Under the review setting after_answer the answer comes back
          // reviewed and final: show it so.
          if (body.data && body.data.review) { return load(attempt.id); }
        })
        .catch(function (err) { say(err.message); load(attempt.id); })
        .then(function () { saving--; quiz.dataset.saving = String(saving); });
    };
    var saveSoon = function (qid, answer) {
      clearTimeout(pending[qid]);
      var mark = document.getElementById('saved-' + qid);
      if (mark) { mark.textContent = ''; }
      pending[qid] = setTimeout(function () { delete pending[qid]; save(qid, answer()); }, 500);
    };

    var answerOf = function (q, fs) {
      var type = q.question.type;
      if (type === 'multichoice') {
        var picked = [];
        Array.prototype.forEach.call(fs.querySelectorAll('input'), function (i) { if (i.checked) { picked.push(Number(i.value)); } });
        return { choices: picked };
      }
      if (type === 'truefalse') {
        var t = fs.querySelector('input:checked');
        return t ? { truth: t.value === 'true' } : {};
      }
      if (type === 'matching') {
        return { matches: Array.prototype.map.call(fs.querySelectorAll('select'), function (s) { return s.value; }) };
      }
      var field = fs.querySelector('input, textarea');
      return { text: field ? field.value : '' };
    };

    // rightOf names the right answers of the question types that have a
    // short list of them.
    var rightOf = function (g) {
      if (g.type === 'truefalse') { return g.truth ? 'True' : 'False'; }
      if (g.type !== 'multichoice' && g.type !== 'shortanswer') { return ''; }
      return (g.answers || []).filter(function (x) { return x.weight > 0; }).map(function (x) { return x.text.text; }).join(', ');
    };
    var feedbackOf = function (q) {
      var g = q.review.gift;
      var a = q.answer || {};
      var out = [];
      if (g.type === 'truefalse' && q.answer) {
        var fb = a.truth === g.truth ? g.rightFeedback : g.wrongFeedback;
        if (fb) { out.push(fb.text); }
      }
      if (g.type === 'multichoice') {
        (a.choices || []).forEach(function (i) { var x = (g.answers || [])[i]; if (x && x.feedback) { out.push(x.feedback.text); } });
      }
      if (g.generalFeedback) { out.push(g.generalFeedback.text); }
      return out;
    };

    var renderQuestion = function (q, n, ended) {
      // A reviewed question (after the end, or after its answer under
      // the review setting after_answer) takes no more answers.
      var locked = ended || !!q.review;
      var fs = el('fieldset', { 'class': 'quiz-question', id: 'question-' + q.id, 'data-type': q.question.type });
      fs.appendChild(el('legend', {}, (n + 1) + '. ' + (q.question.title ? q.question.title + ': ' : '') + q.question.prompt.text));
      var a = q.answer || {};
      var type = q.question.type;
      var name = 'q' + q.id;
      var choice = function (kind, value, label, checked) {
        var id = name + '-' + value;
        var wrap = el('div', { 'class': 'quiz-option' });
        var input = el('input', { type: kind, name: name, id: id, value: String(value) });
        input.checked = !!checked;
        input.disabled = locked;
        wrap.appendChild(input);
        wrap.appendChild(el('label', { 'for': id }, label));
        return wrap;
      };
      if (type === 'multichoice') {
        (q.question.options || []).forEach(function (o, i) {
          fs.appendChild(choice(q.question.single ? 'radio' : 'checkbox', i, o.text, (a.choices || []).indexOf(i) >= 0));
        });
      } else if (type === 'truefalse') {
        fs.appendChild(choice('radio', 'true', 'True', a.truth === true));
        fs.appendChild(choice('radio', 'false', 'False', a.truth === false));
      } else if (type === 'matching') {
        (q.question.items || []).forEach(function (item, i) {
          var id = name + '-' + i;
          var wrap = el('div', { 'class': 'quiz-option' });
          wrap.appendChild(el('label', { 'for': id }, item.text));
          var sel = el('select', { id: id });
          sel.appendChild(el('option', { value: '' }, 'Choose…'));
          (q.question.targets || []).forEach(function (target) {
            var opt = el('option', { value: target }, target);
            if ((a.matches || [])[i] === target) { opt.selected = true; }
            sel.appendChild(opt);
          });
          sel.disabled = locked;
          wrap.appendChild(sel);
          fs.appendChild(wrap);
        });
      } else if (type === 'essay') {
        var area = el('textarea', { id: name, rows: '6', 'aria-label': 'Your answer' });
        area.value = a.text || '';
        area.disabled = locked;
        fs.appendChild(area);
      } else if (type === 'shortanswer' || type === 'numerical') {
        var input = el('input', { id: name, type: 'text', 'aria-label': 'Your answer', inputmode: type === 'numerical' ? 'decimal' : 'text' });
        input.value = a.text || '';
        input.disabled = locked;
        fs.appendChild(input);
      }
      if (type !== 'description') {
        fs.appendChild(el('p', { 'class': 'quiz-saved muted', id: 'saved-' + q.id, 'aria-live': 'polite' }, q.answer ? 'Saved' : ''));
      }
      if (q.review && type !== 'description') {
        fs.appendChild(el('p', { 'class': 'quiz-earned' }, q.review.earned === null ? 'Waiting for a grade' :
          'You earned ' + points(q.review.earned) + ' of ' + points(q.score) + '.'));
        var right = rightOf(q.review.gift);
        if (right) { fs.appendChild(el('p', { 'class': 'quiz-right' }, 'Right answer: ' + right)); }
        feedbackOf(q).forEach(function (text) { fs.appendChild(el('p', { 'class': 'quiz-feedback' }, text)); });
      }
      if (!locked && type !== 'description') {
        if (attempt.review === 'after_answer') {
          // Each saved answer is final here: the learner saves it once,
          // on purpose, rather than as they go.
          var check = el('button', { type: 'button', 'class': 'button button-quiet button-small quiz-check', id: 'check-' + q.id }, 'Save and check this answer');
          check.addEventListener('click', function () { check.disabled = true; save(q.id, answerOf(q, fs)); });
          fs.appendChild(check);
        } else {
          var typed = type === 'essay' || type === 'shortanswer' || type === 'numerical';
          fs.addEventListener(typed ? 'input' : 'change', function () {
            var get = function () { return answerOf(q, fs); };
            if (typed) { saveSoon(q.id, get); } else { save(q.id, get()); }
          });
        }
      }
      return fs;
    };

    var tick = function () {
      var left = Math.max(0, Math.round((deadline - Date.now()) / 1000));
      qTimer.textContent = 'Time left: ' + Math.floor(left / 60) + ':' + ('0' + (left % 60)).slice(-2);
      if (left === 0) {
        clearInterval(ticking);
        // The server ended the attempt at its limit; show the result.
        load(attempt.id);
      }
    };

    var render = function (a) {
      attempt = a;
      clearInterval(ticking);
      var ended = a.status === 'ended';
      quiz.dataset.attempt = String(a.id);
      quiz.dataset.state = a.status;
      qForm.textContent = '';
      a.questions.forEach(function (q, n) { qForm.appendChild(renderQuestion(q, n, ended)); });
      qForm.hidden = false;
      qEnd.hidden = ended;
      if (!ended) {
        qStart.hidden = true;
        deadline = Date.now() + a.seconds_left * 1000;
        qTimer.hidden = false;
        tick();
        ticking = setInterval(tick, 1000);
        // The limit is the site's, for every quiz: say it, since a topic's
        // duration is only its author's estimate.
        var minutes = Math.round((Date.parse(a.ends_at) - Date.parse(a.started_at)) / 60000);
        say('Attempt ' + a.number + ' is under way, ' + minutes + (minutes === 1 ? ' minute' : ' minutes') + ' in all. ' + (a.review === 'after_answer' ?
          'Each answer is final once you save it, and you see its review right away.' : 'Your answers are saved as you go.'));
        return;
      }
      qTimer.hidden = true;
      var result = 'Attempt ' + a.number + ' ended: ' + points(a.score) + ' of ' + points(a.max_score) + '.';
      if (a.pending_grading) { result += ' An essay waits for a grade.'; }
      if (a.passed === true) { result += ' You passed.'; }
      if (a.passed === false) { result += ' You did not pass this time.'; }
      say(result);
      quiz.dataset.passed = String(a.passed);
      if (a.passed === true || (a.min_pass_score === null && !a.pending_grading)) { setStatus(1); }
      qStart.textContent = 'Try again';
      qStart.hidden = false;
    };

    var load = function (id) {
      return bff('GET', '/api/quiz-attempts/' + id).then(json).then(function (body) { render(body.data); })
        .catch(function (err) { say(err.message); });
    };

    qStart.addEventListener('click', function () {
      bff('POST', '/api/quiz-attempts', { topic_id: quizTopic }).then(json)
        .then(function (body) { render(body.data); })
        .catch(function (err) { say(err.message); });
    });
    qEnd.addEventListener('click', function () {
      // Answers still waiting for their pause are saved first.
      var waits = Object.keys(pending).map(function (qid) {
        clearTimeout(pending[qid]);
        delete pending[qid];
        return save(Number(qid), answerOf(attempt.questions.filter(function (q) { return q.id === Number(qid); })[0],
          document.getElementById('question-' + qid)));
      });
      Promise.all(waits)
        .then(function () { return bff('POST', '/api/quiz-attempts/' + attempt.id + '/end'); })
        .then(json)
        .then(function (body) { render(body.data); })
        .catch(function (err) { say(err.message); });
    });

    // Resume the attempt under way, or show the last result.
    bff('GET', '/api/quiz-attempts?topic_id=' + quizTopic + '&per_page=1').then(json)
      .then(function (body) {
        var last = body.data && body.data[0];
        if (last) { return load(last.id); }
        qStart.hidden = false;
      })
      .catch(function (err) { say(err.message); qStart.hidden = false; });
  }

  // An interactive topic's app runs in a sandboxed frame with an opaque
  // origin ("null"), so messages are recognised by their source window,
  // never by origin. Only the documented shapes are forwarded; the server
  // decides completion by the topic's rule (README: Interactive apps).
  var app = document.getElementById('app-frame');
  // The page's CSP allows no style attributes: an inline app's height is
  // set from here.
  if (app && app.dataset.height) {
    app.style.height = Number(app.dataset.height) + 'px';
    // The app may tell the height of its content
    // ({type:'lms-interactive:resize', height}), which the topic's own
    // height cannot know (it changes with the frame's width): the frame
    // takes it, within the bounds of a topic's height (240 to 2000 px), so
    // nothing of the app hides below the frame. Only a number from the
    // app's own frame counts.
    window.addEventListener('message', function (e) {
      if (e.source !== app.contentWindow) { return; }
      var m = e.data;
      if (!m || typeof m !== 'object' || m.type !== 'lms-interactive:resize' ||
        typeof m.height !== 'number' || !isFinite(m.height)) { return; }
      app.style.height = Math.min(2000, Math.max(240, Math.ceil(m.height))) + 'px';
    });
  }
  if (app && signedIn) {
    // The app gets the played range once its frame has loaded and the
    // server has answered the open report with the range's steps (only
    // the server knows the version a topic plays). Without that answer
    // the app gets the topic's own start and end and no steps.
    var loaded = false, range = null;
    var init = function () {
      if (!loaded || !range) { return; }
      var first = range[0], last = range[range.length - 1];
      app.contentWindow.postMessage({ type: 'lms-interactive:init', startStep: first ? first.id : app.dataset.start,
        endStep: last ? last.id : app.dataset.end, steps: range }, '*');
    };
    var report = function (body) {
      return bff('POST', '/api/interactive/progress/' + topicId, body)
        .then(function (res) { return res.ok ? res.json() : null; }, function () { return null; })
        .then(function (b) {
          if (b && b.data && b.data.completed) { setStatus(1); }
          if (!range) {
            range = (b && b.data && Array.isArray(b.data.range)) ? b.data.range : [];
            init();
          }
          app.dataset.reported = String(Number(app.dataset.reported || 0) + 1);
        })
        .catch(function () {});
    };
    app.addEventListener('load', function () { loaded = true; init(); });
    report({ event: 'open' });
    window.addEventListener('message', function (e) {
      if (e.source !== app.contentWindow) { return; }
      var m = e.data;
      if (!m || typeof m !== 'object' || typeof m.type !== 'string') { return; }
      if (m.type === 'lms-interactive:step' && typeof m.step === 'string' && m.step.length <= 64) {
        report({ event: 'step', step: m.step });
      } else if (m.type === 'lms-interactive:complete') {
        report({ event: 'complete' });
      } else if (m.type === 'lms-interactive:score' && typeof m.score === 'number' && m.score >= 0 && m.score <= 100) {
        report({ event: 'score', score: Math.round(m.score) });
      }
    });
  }

  // A LiaScript topic's player page runs LiaScript's runtime in a
  // sandboxed frame with an opaque origin, so its messages are recognised
  // by their source window. Section visits and solved quizzes (indexes in
  // the course's structure) are recorded; the server completes the topic
  // by its rule (README: LiaScript courses).
  var lia = document.getElementById('lia-frame');
  if (lia && signedIn) {
    var sections = Number(lia.dataset.sections), quizzes = Number(lia.dataset.quizzes);
    var liaStatus = document.getElementById('lia-progress');
    var isIndex = function (v, n) { return typeof v === 'number' && v === Math.floor(v) && v >= 0 && v < n; };
    var record = function (body) {
      return bff('POST', '/api/liascript/progress/' + topicId, body)
        .then(function (res) { return res.ok ? res.json() : null; })
        .then(function (b) {
          if (!b || !b.data) { return; }
          var d = b.data;
          liaStatus.textContent = d.visited.length + ' of ' + d.sections + ' sections visited' +
            (d.quizzes ? ', ' + d.solved.length + ' of ' + d.quizzes + ' quizzes solved' : '') + '.';
          if (d.completed) { setStatus(1); }
          lia.dataset.reported = String(Number(lia.dataset.reported || 0) + 1);
        })
        .catch(function () {});
    };
    window.addEventListener('message', function (e) {
      if (e.source !== lia.contentWindow) { return; }
      var m = e.data;
      if (!m || typeof m !== 'object' || typeof m.type !== 'string') { return; }
      if (m.type === 'lms-liascript:visit' && isIndex(m.section, sections)) {
        record({ visited: [m.section] });
      } else if (m.type === 'lms-liascript:quiz' && isIndex(m.quiz, quizzes) && m.solved === true) {
        record({ quizzes: [{ quiz: m.quiz, solved: true }] });
      }
    });
  }

  // The H5P embeds, played on the content origin: the frame of an H5P
  // topic, or the H5PFrames of a layout. The session never goes there.
  // The embed page asks (lms-h5p:ready) and the topic frame is answered
  // with a play grant of its content (POST .../h5p/grant through /bff/),
  // a layout's frame with one of the content it names (?content_id=),
  // posted to the content origin only; visitors get null and play
  // anonymously. Only an H5P topic's statements, relayed here, count for
  // its completion.
  var frames = Array.prototype.slice.call(document.querySelectorAll('#h5p-frame, iframe[data-h5p]'));
  if (frames.length === 0) { return; }
  var forwarded = { completed: true, passed: true, failed: true, answered: true, scored: true, mastered: true };
  var tokenSent = false;
  var grants = {};

  function frameOrigin(f) {
    try { return new URL(f.src, window.location.href).origin; } catch (err) { return ''; }
  }

  function grantFor(frame) {
    var content = frame.id === 'h5p-frame' ? '' : frame.getAttribute('data-h5p') || '';
    if (!signedIn || (frame.id !== 'h5p-frame' && !/^[1-9][0-9]*$/.test(content))) { return Promise.resolve(null); }
    if (!grants[content]) {
      var path = '/api/courses/progress/' + topicId + '/h5p/grant' + (content ? '?content_id=' + content : '');
      grants[content] = bff('POST', path)
        .then(function (res) { return res.ok ? res.json() : null; })
        .then(function (body) { return body && body.data && body.data.grant ? body.data.grant : null; })
        .catch(function () { return null; });
    }
    return grants[content];
  }

  function verbOf(statement) {
    var id = statement && statement.verb && statement.verb.id;
    return typeof id === 'string' ? id.slice(id.lastIndexOf('/') + 1) : '';
  }

  function sendStatement(statement) {
    if (!signedIn || !statement || !forwarded[verbOf(statement)]) { return; }
    whenStarted(function () {
      bff('POST', '/api/courses/progress/' + topicId + '/h5p', { statement: statement })
        .then(function (res) { return res.ok ? res.json() : null; })
        .then(function (body) { if (body && body.data && body.data.completed) { setStatus(1); } })
        .catch(function () {});
    });
  }

  window.addEventListener('message', function (e) {
    var frame = null;
    frames.forEach(function (f) { if (f.contentWindow === e.source) { frame = f; } });
    if (!frame || e.origin !== frameOrigin(frame)) { return; }
    var origin = e.origin;
    var msg = e.data;
    if (!msg || typeof msg !== 'object' || typeof msg.type !== 'string') { return; }
    var data = msg.payload && typeof msg.payload === 'object' ? msg.payload : msg;
    switch (msg.type) {
      case 'lms-h5p:ready':
        // Answered every time the page asks: the embed repeats ready
        // until it hears back.
        grantFor(frame).then(function (token) {
          frame.contentWindow.postMessage({ type: 'lms-h5p:token', token: token }, origin);
          tokenSent = true;
        });
        break;
      case 'lms-h5p:loaded':
        frame.dataset.loaded = '1';
        break;
      case 'lms-h5p:resize':
        if (Number(data.height) > 0) { frame.style.height = Math.ceil(Number(data.height)) + 'px'; }
        break;
      case 'lms-h5p:xapi':
        if (frame.id === 'h5p-frame') { sendStatement(data.statement); }
        break;
      case 'lms-h5p:error':
        frame.dataset.error = String(data.message || 'error');
        break;
    }
  });
  frames.forEach(function (f) { f.dataset.bridge = tokenSent ? 'answered' : 'listening'; });
})();
