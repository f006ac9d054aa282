// cmi5 topics. The start button's form launches the AU into the frame
// (or a window of its own); this script shows the frame when it does, and
// on the page an AU returns to when it exits, takes the whole window (not
// just the AU's frame) back to the topic.
(function () {
  'use strict';

  var back = document.getElementById('cmi5-return');
  if (back) {
    var to = back.dataset.topic;
    if (window.top !== window.self) {
      try {
        window.top.location.href = to;
        return;
      } catch (e) { /* another origin framed us: stay in the frame */ }
    }
    window.location.replace(to);
    return;
  }

  var launch = document.getElementById('cmi5-launch');
  var frame = document.getElementById('cmi5-frame');
  if (!launch || !frame) { return; }
  // Pressed again, the button starts a new session: the one in the
  // frame ends as abandoned unless the AU has terminated it.
  launch.addEventListener('submit', function () {
    frame.hidden = false;
    frame.dataset.launched = String(Number(frame.dataset.launched || 0) + 1);
    var button = document.getElementById('cmi5-start');
    if (button) { button.textContent = 'Start again'; }
  });
})();
