// cmi5 topics. The start button's form launches the AU into the frame
// (or a window of its own); this script shows the frame when it does, and
// on the page an AU returns to when it exits, takes the whole window (not
// just the AU's frame) back to the topic.
(function () {
  'use strict';

  var back = document.getElementById('cmi5-return');
  if (back) {
    var to = back.dataset.topic;
    if (window.parent !== window.self) {
      // The frame is sandboxed (it may not navigate the topic page): the
      // page is told, on this origin only, and goes back itself.
      window.parent.postMessage({ type: 'lms-cmi5:return', topic: to }, window.location.origin);
    }
    window.location.replace(to);
    return;
  }

  var launch = document.getElementById('cmi5-launch');
  var frame = document.getElementById('cmi5-frame');
  if (!launch || !frame) { return; }

  // The return page, in the frame and on this origin, asks to leave the
  // activity: the whole window goes back to the topic.
  window.addEventListener('message', function (e) {
    if (e.source !== frame.contentWindow || e.origin !== window.location.origin) { return; }
    var data = e.data || {};
    if (data.type === 'lms-cmi5:return' && typeof data.topic === 'string' && data.topic.charAt(0) === '/' && data.topic.charAt(1) !== '/') {
      window.location.href = data.topic;
    }
  });

  // While the AU plays, the topic's status is asked for now and then: the
  // AU completes the topic through the LRS, not through this page.
  var topic = document.getElementById('topic');
  var watching = null;
  function watch() {
    if (watching || !topic || topic.dataset.status === '1') { return; }
    watching = setInterval(function () {
      fetch('/bff/api/courses/progress/' + topic.dataset.course, { credentials: 'same-origin', headers: { 'Accept': 'application/json' } })
        .then(function (res) { return res.ok ? res.json() : null; })
        .then(function (body) {
          var list = (body && body.data && body.data.topics) || [];
          var done = list.some(function (x) { return String(x.topic_id) === topic.dataset.topic && x.status === 1; });
          if (!done) { return; }
          clearInterval(watching);
          topic.dataset.status = '1';
          var badge = document.getElementById('topic-status');
          if (badge) { badge.textContent = 'Complete'; badge.className = 'topic-status status-1'; }
          Array.prototype.forEach.call(document.querySelectorAll('[data-topic-id="' + topic.dataset.topic + '"]'), function (el) {
            el.classList.remove('status-0', 'status-2');
            el.classList.add('status-1');
          });
        })
        .catch(function () {});
    }, 3000);
  }
  // Pressed again, the button starts a new session: the one in the
  // frame ends as abandoned unless the AU has terminated it.
  launch.addEventListener('submit', function () {
    frame.hidden = false;
    frame.dataset.launched = String(Number(frame.dataset.launched || 0) + 1);
    var button = document.getElementById('cmi5-start');
    if (button) { button.textContent = 'Start again'; }
    watch();
  });
})();
