// The H5P player page: once the parent has handed over a token (or after
// the token wait, anonymously), it loads the play model, the H5P core
// player (h5p-standalone's frame bundle) and the content's libraries, and
// reports loaded, resize and every xAPI statement to the parent.
(function () {
  'use strict';

  var E = window.LmsH5PEmbed;
  var cfg = E.config;

  if (!cfg.contentId) {
    E.fail('This content does not exist.', 'load');
    return;
  }
  if (!cfg.coreInstalled) {
    E.fail('The H5P player is not installed on this server.', 'load');
    return;
  }

  function integration(m) {
    var hide = cfg.query.hideActions === '1';
    var contents = {};
    contents['cid-' + m.contentId] = {
      library: m.library,
      jsonContent: JSON.stringify(m.params),
      fullScreen: hide ? '0' : '1',
      exportUrl: '/h5p/contents/' + encodeURIComponent(m.contentId) + '/download',
      embedCode: '',
      resizeCode: '',
      url: window.location.origin + '/h5p/contents/' + encodeURIComponent(m.contentId),
      title: m.title,
      displayOptions: { frame: !hide, export: !hide, embed: false, copyright: !hide, icon: false, copy: false },
      metadata: m.metadata,
      contentUserData: m.contentUserData,
      scripts: m.scripts,
      styles: m.styles
    };
    return {
      baseUrl: window.location.origin,
      url: '/h5p',
      urlLibraries: '/h5p/libraries',
      siteUrl: window.location.origin,
      postUserStatistics: m.saveFreq !== false,
      saveFreq: m.saveFreq,
      ajax: {
        contentUserData: E.withoutToken(m.ajax.contentUserData),
        setFinished: E.withoutToken(m.ajax.setFinished)
      },
      ajaxPath: '/h5p/ajax?action=',
      l10n: { H5P: cfg.l10n },
      hubIsEnabled: false,
      reportingIsEnabled: false,
      crossorigin: null,
      libraryConfig: null,
      pluginCacheBuster: '',
      user: { name: m.user.name, mail: m.user.mail },
      core: { scripts: [cfg.coreUrl + '/frame.bundle.js'], styles: [cfg.coreUrl + '/styles/h5p.css'] },
      loadedJs: [],
      loadedCss: [],
      contents: contents
    };
  }

  function load() {
    var q = new URLSearchParams();
    ['contextId', 'language', 'readOnlyState'].forEach(function (k) {
      if (cfg.query[k]) {
        q.set(k, cfg.query[k]);
      }
    });
    var url = '/h5p/contents/' + encodeURIComponent(cfg.contentId) + '/play' + (q.toString() ? '?' + q : '');
    var m;
    return E.fetchJSON(url).then(function (body) {
      m = body.data;
      window.H5PIntegration = integration(m);
      var root = document.getElementById('lms-h5p-root');
      var el = document.createElement('div');
      el.className = 'h5p-content';
      el.setAttribute('data-content-id', m.contentId);
      root.appendChild(el);
      // The core would start on its own when the document is ready; the
      // page starts it once every library is loaded.
      window.H5P = window.H5P || {};
      window.H5P.preventInit = true;
      return E.loadStyles([cfg.coreUrl + '/styles/h5p.css'].concat(m.styles));
    }).then(function () {
      return E.loadScripts([cfg.coreUrl + '/frame.bundle.js']);
    }).then(function () {
      var H5P = window.H5P;
      // H5P's own AJAX calls (state, results) carry the token in a header.
      H5P.jQuery.ajaxPrefilter(function (options, original, xhr) {
        var t = E.token();
        if (t && E.sameOrigin(options.url)) {
          xhr.setRequestHeader('Authorization', 'Bearer ' + t);
        }
      });
      // H5P's resizer protocol posts to any origin; lms-h5p:resize replaces it.
      if (H5P.communicator) {
        H5P.communicator.send = function () {};
      }
      return E.loadScripts(m.scripts);
    }).then(function () {
      var H5P = window.H5P;
      H5P.externalDispatcher.on('xAPI', function (event) {
        E.post('xapi', { statement: event.data.statement, contentId: m.contentId });
      });
      E.hideStatus();
      H5P.init(document.getElementById('lms-h5p-root'));
      E.post('loaded', { contentId: m.contentId, title: m.title, library: m.library });
      E.watchHeight();
    });
  }

  E.begin(function () {
    load().catch(function (err) {
      E.fail(err && err.message ? err.message : 'The content could not be loaded.', 'load');
    });
  }, true);
})();
