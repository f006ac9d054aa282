// The demo's cmi5 AU. Every statement carries an id of its own, a UTC
// timestamp and LMS.LaunchData's context template (the session id, the AU
// in grouping, the mastery score); the cmi5 defined ones add the cmi5
// category, and moveon where they judge the AU. It reads the learner
// preferences before initialized, as cmi5 section 11.0 asks.
(function () {
  'use strict';
  var params = new URLSearchParams(location.search);
  var endpoint = params.get('endpoint') || '';
  if (endpoint && endpoint.charAt(endpoint.length - 1) !== '/') { endpoint += '/'; }
  var actor = JSON.parse(params.get('actor') || 'null');
  var registration = params.get('registration');
  var activityId = params.get('activityId');
  var started = Date.now();
  var auth = '';
  var launchData = {};
  var statusEl = document.getElementById('status');
  var busy = 0;

  function say(text) { statusEl.textContent = text; }
  function track(p) {
    busy++;
    document.body.dataset.busy = String(busy);
    return p.then(function (v) { busy--; document.body.dataset.busy = String(busy); return v; },
      function (e) { busy--; document.body.dataset.busy = String(busy); throw e; });
  }
  function lrs(method, path, body) {
    var headers = { 'X-Experience-API-Version': '1.0.3', 'Authorization': auth };
    if (body !== undefined) { headers['Content-Type'] = 'application/json'; }
    return fetch(endpoint + path, { method: method, headers: headers, keepalive: true,
      body: body === undefined ? undefined : JSON.stringify(body) }).then(function (res) {
      if (!res.ok) { throw new Error(method + ' ' + path.split('?')[0] + ': ' + res.status); }
      return res.status === 204 ? null : res.json();
    });
  }
  // A version 4 UUID from getRandomValues, which (unlike randomUUID)
  // pages served over plain http have too.
  function uuid() {
    var b = crypto.getRandomValues(new Uint8Array(16));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    var h = Array.prototype.map.call(b, function (x) { return (x + 0x100).toString(16).slice(1); }).join('');
    return h.slice(0, 8) + '-' + h.slice(8, 12) + '-' + h.slice(12, 16) + '-' + h.slice(16, 20) + '-' + h.slice(20);
  }
  function duration() { return 'PT' + ((Date.now() - started) / 1000).toFixed(2) + 'S'; }
  function copy(v) { return JSON.parse(JSON.stringify(v)); }

  function statement(verb, display, result, moveOn) {
    var context = copy(launchData.contextTemplate || {});
    context.registration = registration;
    context.contextActivities = context.contextActivities || {};
    var category = [{ id: 'https://w3id.org/xapi/cmi5/context/categories/cmi5' }];
    if (moveOn) { category.push({ id: 'https://w3id.org/xapi/cmi5/context/categories/moveon' }); }
    context.contextActivities.category = category;
    var st = { id: uuid(), actor: actor, verb: { id: verb, display: { 'en-US': display } },
      object: { objectType: 'Activity', id: activityId }, context: context, timestamp: new Date().toISOString() };
    if (result) { st.result = result; }
    return st;
  }
  // Statements go one after the other, so terminated never overtakes
  // the judgement.
  var queue = Promise.resolve();
  function send(st) {
    var p = queue.then(function () { return track(lrs('POST', 'statements', st)); });
    queue = p.catch(function () {});
    return p;
  }

  var judged = false;
  var normal = false;
  function answer(right) {
    if (judged) { return; }
    judged = true;
    document.getElementById('result').textContent = right
      ? 'Right: spacing your sessions helps you remember longer.'
      : 'Not quite: short sessions spread over days help you remember longer. Try again next time.';
    document.getElementById('question').hidden = true;
    if (!normal) { return; }
    var scaled = right ? 1 : 0;
    var mastery = typeof launchData.masteryScore === 'number' ? launchData.masteryScore : 0.5;
    var judgement = scaled >= mastery
      ? statement('http://adlnet.gov/expapi/verbs/passed', 'passed', { success: true, duration: duration(), score: { scaled: scaled } }, true)
      : statement('http://adlnet.gov/expapi/verbs/failed', 'failed', { success: false, duration: duration(), score: { scaled: scaled } }, true);
    send(statement('http://adlnet.gov/expapi/verbs/completed', 'completed', { completion: true, duration: duration() }, true))
      .then(function () { return send(judgement); })
      .then(function () { say(right ? 'Your result is saved: passed.' : 'Your result is saved.'); })
      .catch(function (e) { say('Your result could not be saved (' + e.message + ').'); });
  }

  var finished = false;
  function finish() {
    if (finished) { return; }
    finished = true;
    document.getElementById('finish').disabled = true;
    send(statement('http://adlnet.gov/expapi/verbs/terminated', 'terminated', { duration: duration() }, false))
      .catch(function () {})
      .then(function () {
        if (launchData.returnURL) { location.href = launchData.returnURL; } else { say('You can close this window.'); }
      });
  }

  if (!endpoint || !params.get('fetch')) { say('Open this activity from your course.'); return; }
  track(fetch(params.get('fetch'), { method: 'POST' }).then(function (res) { return res.json(); }))
    .then(function (body) {
      if (!body['auth-token']) { throw new Error(body['error-text'] || 'no auth token'); }
      auth = 'Basic ' + body['auth-token'];
      return track(lrs('GET', 'activities/state?' + new URLSearchParams({ stateId: 'LMS.LaunchData', activityId: activityId,
        agent: JSON.stringify(actor), registration: registration })));
    })
    .then(function (data) {
      launchData = data || {};
      normal = launchData.launchMode === 'Normal';
      // The preferences may be missing (404): the AU then keeps its own.
      return track(fetch(endpoint + 'agents/profile?' + new URLSearchParams({ profileId: 'cmi5LearnerPreferences',
        agent: JSON.stringify(actor) }), { headers: { 'X-Experience-API-Version': '1.0.3', 'Authorization': auth } }))
        .then(function (res) {
          if (!res.ok && res.status !== 404) { throw new Error('GET agents/profile: ' + res.status); }
        });
    })
    .then(function () {
      return send(statement('http://adlnet.gov/expapi/verbs/initialized', 'initialized', null, false));
    })
    .then(function () {
      say(normal ? 'Answer the question, then press Finish.' : 'Browsing: your answer is not recorded.');
      document.getElementById('question').hidden = false;
      document.getElementById('finish').hidden = false;
      document.body.dataset.ready = '1';
    })
    .catch(function (e) { say('This activity cannot start: ' + e.message); });

  document.getElementById('a-spaced').addEventListener('click', function () { answer(true); });
  document.getElementById('a-cram').addEventListener('click', function () { answer(false); });
  document.getElementById('finish').addEventListener('click', finish);
})();
