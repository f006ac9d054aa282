// The reference frontend's only script. Pages work without it; on a topic
// page it records time (pings), completes the topic the way its kind
// completes, and talks to the H5P embed. It reaches the API only through
// /bff/ on this origin: the session token stays in an httpOnly cookie the
// script never sees.
(function () {
  'use strict';

  var topic = document.getElementById('topic');
  if (!topic) { return; }

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
    if (data.solution) {
      var sol = document.createElement('p');
      sol.className = 'practice-solution';
      sol.textContent = 'Solution: ' + data.solution;
      result.appendChild(sol);
    }
  }

  Array.prototype.forEach.call(document.querySelectorAll('form.practice-question'), function (qf) {
    qf.addEventListener('submit', function (e) {
      e.preventDefault();
      var result = qf.querySelector('.practice-result');
      if (!signedIn) {
        result.textContent = 'Sign in to check your answers.';
        return;
      }
      var selected = [];
      Array.prototype.forEach.call(qf.querySelectorAll('input:checked'), function (input) {
        selected.push(Number(input.value));
      });
      var body = { node: Number(qf.dataset.node), question: Number(qf.dataset.question), selected: selected };
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

  // The H5P embeds, served on this origin through the /h5p/ proxy: the
  // frame of an H5P topic, or the H5PFrames of a layout. The token is
  // never in this page: the parent answers lms-h5p:token with null and
  // the proxy adds the session's Authorization header to the embed's own
  // calls, so the player runs as the signed-in learner. Only an H5P
  // topic's statements count for its completion.
  var frames = Array.prototype.slice.call(document.querySelectorAll('#h5p-frame, iframe[data-h5p]'));
  if (frames.length === 0) { return; }
  var origin = window.location.origin;
  var forwarded = { completed: true, passed: true, failed: true, answered: true, scored: true, mastered: true };
  var tokenSent = false;

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
    if (!frame || e.origin !== origin) { return; }
    var msg = e.data;
    if (!msg || typeof msg !== 'object' || typeof msg.type !== 'string') { return; }
    var data = msg.payload && typeof msg.payload === 'object' ? msg.payload : msg;
    switch (msg.type) {
      case 'lms-h5p:ready':
        // Answered every time the page asks: the embed repeats ready
        // until it hears back.
        frame.contentWindow.postMessage({ type: 'lms-h5p:token', token: null }, origin);
        tokenSent = true;
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
