// The LMS side of a LiaScript player page, run before LiaScript's
// runtime in the page's sandbox, whose origin is opaque (README:
// LiaScript courses).
//
// - Storage: localStorage and sessionStorage throw in an opaque origin;
//   LiaScript keeps its settings there, so they are kept in memory.
// - Workers: a worker's script must be same-origin, which no URL is to an
//   opaque origin, so a worker starts from a blob that imports it.
// - The course: LiaScript plays the URL in the page's query; the page
//   names its own course.md there.
// - Reports: the section shown (#n in the URL, from 1) and each quiz the
//   learner solves (LiaScript marks it solved) are posted to the parent
//   page as {type: 'lms-liascript:visit', section: i} and
//   {type: 'lms-liascript:quiz', quiz: i, solved: true}, indexes from 0 in
//   document order. The parent checks the sender and the shapes and
//   records them; the server decides completion.
// - Scrolling stays inside the frame (see reveal).
(function () {
  'use strict';
  var script = document.currentScript;
  var counts = (script.getAttribute('data-quizzes') || '').split(',')
    .filter(function (s) { return s !== ''; })
    .map(function (s) { return Number(s) || 0; });

  function memoryStorage() {
    var items = {};
    var has = function (k) { return Object.prototype.hasOwnProperty.call(items, k); };
    return {
      getItem: function (k) { return has(String(k)) ? items[String(k)] : null; },
      setItem: function (k, v) { items[String(k)] = String(v); },
      removeItem: function (k) { delete items[String(k)]; },
      clear: function () { items = {}; },
      key: function (i) { var keys = Object.keys(items); return i < keys.length ? keys[i] : null; },
      get length() { return Object.keys(items).length; }
    };
  }
  ['localStorage', 'sessionStorage'].forEach(function (name) {
    try {
      if (window[name]) { return; }
    } catch (e) { /* an opaque origin: replaced below */ }
    Object.defineProperty(window, name, { value: memoryStorage(), configurable: true });
  });

  var NativeWorker = window.Worker;
  if (NativeWorker) {
    window.Worker = function (url, options) {
      var src = new URL(String(url), document.baseURI).href;
      var boot = new Blob(['importScripts(' + JSON.stringify(src) + ');'], { type: 'text/javascript' });
      return new NativeWorker(URL.createObjectURL(boot), options);
    };
  }

  if (!window.location.search) {
    var course = new URL('course.md', window.location.href).href;
    history.replaceState(null, '', window.location.pathname + '?' + course + window.location.hash);
  }

  if (window.parent === window) { return; }
  function post(message) { window.parent.postMessage(message, '*'); }

  // Scrolling: as a course loads, LiaScript focuses its content and
  // scrolls the table of contents to the section shown (focus() and
  // scrollIntoView()), which scroll every box that holds the element, up
  // to the page around this frame: that page would jump past its title.
  // Here both scroll only the boxes of this document.
  function reveal(el) {
    for (var box = el.parentElement; box; box = box.parentElement) {
      var root = box === document.documentElement;
      if (!root && box.scrollHeight <= box.clientHeight) { continue; }
      var r = el.getBoundingClientRect();
      var top = root ? 0 : box.getBoundingClientRect().top;
      var bottom = root ? window.innerHeight : box.getBoundingClientRect().bottom;
      if (r.top >= top && r.bottom <= bottom) { continue; }
      if (root) { window.scrollBy(0, r.top - top); } else { box.scrollTop += r.top - top; }
    }
  }
  Element.prototype.scrollIntoView = function () { reveal(this); };
  var nativeFocus = HTMLElement.prototype.focus;
  HTMLElement.prototype.focus = function (options) {
    nativeFocus.call(this, Object.assign({}, options, { preventScroll: true }));
    if (!(options && options.preventScroll)) { reveal(this); }
  };

  // The first quiz of each section, counted through the course.
  var offsets = [];
  counts.reduce(function (sum, n, i) { offsets[i] = sum; return sum + n; }, 0);

  function shown() {
    var m = /^#(\d+)/.exec(window.location.hash);
    return m ? Number(m[1]) - 1 : 0;
  }
  // LiaScript has rendered a section once its heading is in the page.
  function rendered() {
    return !!document.querySelector('main h1, main h2, main h3, main h4, main h5, main h6');
  }

  var visited = -1;
  var solved = {};
  function look() {
    if (!rendered()) { return; }
    var section = shown();
    if (section < 0 || section >= counts.length) { return; }
    if (section !== visited) {
      visited = section;
      post({ type: 'lms-liascript:visit', section: section });
    }
    var quizzes = document.querySelectorAll('main .lia-quiz');
    for (var i = 0; i < quizzes.length && i < counts[section]; i++) {
      var index = offsets[section] + i;
      if (!solved[index] && quizzes[i].classList.contains('solved')) {
        solved[index] = true;
        post({ type: 'lms-liascript:quiz', quiz: index, solved: true });
      }
    }
  }
  // Sections change by the URL's fragment, quizzes by their classes; both
  // are looked at on every change of the page and of the fragment.
  window.addEventListener('hashchange', look);
  window.addEventListener('popstate', look);
  function observe() {
    new MutationObserver(look).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['class'] });
    look();
  }
  if (document.body) { observe(); } else { document.addEventListener('DOMContentLoaded', observe); }
})();
