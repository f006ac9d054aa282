// The parent side of the H5P embed pages: the message protocol with the
// parent window (ready, token, style, and the page's own messages), the
// token it hands over, and helpers shared by the player and the editor.
(function () {
  'use strict';

  var cfg = JSON.parse(document.getElementById('lms-h5p-config').textContent);
  var selfOrigin = window.location.origin;
  var allowed = (cfg.allowedOrigins || []).slice();
  if (allowed.indexOf(selfOrigin) < 0) {
    allowed.push(selfOrigin);
  }
  var framed = window.parent !== window;

  var peer = null; // the parent's origin, fixed by its first accepted message
  var token = null;
  var tokenReceived = false;
  var started = false;
  var onStart = null;
  var handlers = {};

  function originAllowed(origin) {
    return cfg.anyOrigin || allowed.indexOf(origin) >= 0;
  }

  // Where messages go before the parent has spoken: every allowed origin
  // (the browser delivers only to the one the parent has), never "*".
  function targets() {
    if (peer) {
      return [peer];
    }
    var list = allowed.slice();
    var ancestors = window.location.ancestorOrigins;
    if (cfg.anyOrigin && ancestors && ancestors.length && ancestors[0] !== 'null' &&
        list.indexOf(ancestors[0]) < 0) {
      list.push(ancestors[0]);
    }
    return list;
  }

  function post(name, payload) {
    if (!framed) {
      return;
    }
    var msg = Object.assign({ type: 'lms-h5p:' + name }, payload || {});
    targets().forEach(function (origin) {
      try {
        window.parent.postMessage(msg, origin);
      } catch (e) {
        // A malformed origin in the configuration must not stop the others.
      }
    });
  }

  var statusEl = document.getElementById('lms-h5p-status');

  function status(text, isError) {
    statusEl.textContent = text;
    statusEl.hidden = false;
    statusEl.classList.toggle('is-error', !!isError);
  }

  function fail(message, code) {
    status(message, true);
    post('error', code ? { message: message, code: code } : { message: message });
  }

  function start() {
    if (started || !onStart) {
      return;
    }
    started = true;
    onStart(token);
  }

  function applyStyle(d) {
    if (typeof d.css === 'string' && d.css) {
      var el = document.createElement('style');
      el.textContent = d.css;
      document.head.appendChild(el);
    }
    (Array.isArray(d.urls) ? d.urls : []).forEach(function (raw) {
      var u;
      try {
        u = new URL(String(raw), window.location.href);
      } catch (e) {
        return;
      }
      if ((u.protocol !== 'https:' && u.protocol !== 'http:') ||
          (u.origin !== selfOrigin && !originAllowed(u.origin))) {
        return;
      }
      var link = document.createElement('link');
      link.rel = 'stylesheet';
      link.href = u.href;
      document.head.appendChild(link);
    });
  }

  window.addEventListener('message', function (e) {
    if (!framed || e.source !== window.parent || !originAllowed(e.origin)) {
      return;
    }
    if (peer && e.origin !== peer) {
      return;
    }
    var d = e.data;
    if (!d || typeof d !== 'object' || typeof d.type !== 'string' || d.type.indexOf('lms-h5p:') !== 0) {
      return;
    }
    peer = e.origin;
    var name = d.type.slice('lms-h5p:'.length);
    if (name === 'token') {
      token = typeof d.token === 'string' && d.token !== '' ? d.token : null;
      tokenReceived = true;
      start();
    } else if (name === 'style') {
      applyStyle(d);
    }
    if (handlers[name]) {
      handlers[name](d);
    }
  });

  // lms-h5p:ready until the parent answers.
  var readyCount = 0;
  function ready() {
    if (peer || readyCount >= cfg.readyMax) {
      return;
    }
    readyCount++;
    post('ready', { mode: cfg.mode, contentId: cfg.contentId });
    setTimeout(ready, cfg.readyInterval);
  }

  function sameOrigin(url) {
    try {
      return new URL(url, window.location.href).origin === selfOrigin;
    } catch (e) {
      return false;
    }
  }

  // fetchJSON calls the H5P service with the token in the Authorization
  // header; it resolves to the envelope and rejects with its message.
  function fetchJSON(url, options) {
    var o = Object.assign({ credentials: 'same-origin', referrerPolicy: 'no-referrer' }, options || {});
    o.headers = Object.assign({ Accept: 'application/json' }, o.headers || {});
    if (token && sameOrigin(url)) {
      o.headers.Authorization = 'Bearer ' + token;
    }
    return fetch(url, o).then(function (res) {
      return res.json().catch(function () {
        return { success: false, message: 'The server answered ' + res.status + '.' };
      }).then(function (body) {
        if (!res.ok || !body.success) {
          var err = new Error(body.message || ('The server answered ' + res.status + '.'));
          err.status = res.status;
          err.body = body;
          throw err;
        }
        return body;
      });
    });
  }

  // withoutToken removes _token from a URL the service built: the page
  // sends the token in a header instead, so it never sits in a URL.
  function withoutToken(url) {
    var u = new URL(url, window.location.href);
    u.searchParams.delete('_token');
    return u.pathname + u.search;
  }

  function loadScripts(urls) {
    return urls.reduce(function (chain, url) {
      return chain.then(function () {
        return new Promise(function (resolve, reject) {
          var s = document.createElement('script');
          s.src = url;
          s.async = false;
          s.onload = function () { resolve(); };
          s.onerror = function () { reject(new Error('Could not load ' + url + '.')); };
          document.head.appendChild(s);
        });
      });
    }, Promise.resolve());
  }

  function loadStyles(urls) {
    return Promise.all(urls.map(function (url) {
      return new Promise(function (resolve) {
        var link = document.createElement('link');
        link.rel = 'stylesheet';
        link.href = url;
        // A missing style sheet must not keep the content from playing.
        link.onload = link.onerror = function () { resolve(); };
        document.head.appendChild(link);
      });
    }));
  }

  // watchHeight posts lms-h5p:resize whenever the content's height
  // changes. The root is measured, not the body: H5P's style sheet makes
  // the body as tall as the frame.
  function watchHeight() {
    var root = document.getElementById('lms-h5p-root');
    var last = -1;
    function report() {
      var h = Math.ceil(root.getBoundingClientRect().height);
      if (h !== last) {
        last = h;
        post('resize', { height: h });
      }
    }
    if (window.ResizeObserver) {
      new ResizeObserver(report).observe(root);
    }
    window.addEventListener('load', report);
    report();
  }

  window.LmsH5PEmbed = {
    config: cfg,
    post: post,
    fail: fail,
    status: status,
    hideStatus: function () { statusEl.hidden = true; },
    token: function () { return token; },
    on: function (name, fn) { handlers[name] = fn; },
    // begin runs fn(token) once: on the first lms-h5p:token, or after the
    // token wait with a null token when anonymous is true.
    begin: function (fn, anonymous, onTimeout) {
      onStart = fn;
      if (tokenReceived) {
        start();
        return;
      }
      setTimeout(function () {
        if (started) {
          return;
        }
        if (anonymous) {
          start();
        } else if (onTimeout) {
          onTimeout();
        }
      }, cfg.tokenWait);
    },
    fetchJSON: fetchJSON,
    sameOrigin: sameOrigin,
    withoutToken: withoutToken,
    loadScripts: loadScripts,
    loadStyles: loadStyles,
    watchHeight: watchHeight
  };

  ready();
})();
