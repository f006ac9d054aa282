// The H5P editor page: it needs a token (no anonymous editing), loads the
// edit model and the H5P editor client from /h5p/editor/ (installed from
// LMS_H5P_EDITOR_DIR), saves on lms-h5p:save and answers lms-h5p:saved
// with the content's id, or lms-h5p:error.
(function () {
  'use strict';

  var E = window.LmsH5PEmbed;
  var cfg = E.config;
  var editor = null;
  var contentId = cfg.contentId === 'new' ? '' : cfg.contentId;
  var lang = cfg.query.language || 'en';

  function notInstalled() {
    E.fail('The H5P editor is not installed on this server: set LMS_H5P_EDITOR_DIR to a copy of the H5P editor client.', 'load');
  }

  // The editor client makes its own AJAX calls and uploads and cannot
  // send a header: the token rides in _token there, as H5P expects.
  function ajaxPath(base) {
    var t = E.token();
    return t ? base.replace('?', '?_token=' + encodeURIComponent(t) + '&') : base;
  }

  function load() {
    var url = '/h5p/contents/' + encodeURIComponent(cfg.contentId) + '/edit?language=' + encodeURIComponent(lang);
    var m;
    return E.fetchJSON(url).then(function (body) {
      m = body.data;
      var core = { scripts: [cfg.coreUrl + '/frame.bundle.js'], styles: [cfg.coreUrl + '/styles/h5p.css'] };
      window.H5PIntegration = {
        baseUrl: window.location.origin,
        url: '/h5p',
        urlLibraries: '/h5p/libraries',
        siteUrl: window.location.origin,
        postUserStatistics: false,
        saveFreq: false,
        ajax: {},
        l10n: { H5P: cfg.l10n },
        core: core,
        loadedJs: [],
        loadedCss: [],
        editor: {
          filesPath: m.editor.filesPath,
          fileIcon: { path: cfg.editorUrl + '/images/binary-file.png', width: 50, height: 50 },
          ajaxPath: ajaxPath(m.editor.ajaxPath),
          libraryUrl: m.editor.libraryUrl,
          apiVersion: m.editor.apiVersion,
          language: lang,
          defaultLanguage: lang,
          assets: { css: core.styles.concat(cfg.editorStyles || []), js: core.scripts.concat(cfg.editorScripts || []) }
        }
      };
      window.H5P = window.H5P || {};
      window.H5P.preventInit = true;
      return E.loadStyles(core.styles.concat(cfg.editorStyles || []));
    }).then(function () {
      return E.loadScripts([cfg.coreUrl + '/frame.bundle.js'].concat(cfg.editorScripts || []));
    }).then(function () {
      var ns = window.H5PEditor;
      if (!ns || typeof ns.Editor !== 'function') {
        throw new Error('The H5P editor client in LMS_H5P_EDITOR_DIR could not be started.');
      }
      var settings = window.H5PIntegration.editor;
      ns.$ = window.H5P.jQuery;
      ns.basePath = settings.libraryUrl;
      ns.contentId = contentId || undefined;
      ns.ajaxPath = settings.ajaxPath;
      ns.filesPath = settings.filesPath;
      ns.fileIcon = settings.fileIcon;
      ns.apiVersion = settings.apiVersion;
      ns.contentLanguage = lang;
      ns.defaultLanguage = lang;
      ns.assets = settings.assets;
      ns.baseUrl = '';
      var root = document.getElementById('lms-h5p-root');
      var container = document.createElement('div');
      root.appendChild(container);
      E.hideStatus();
      editor = new ns.Editor(m.library || undefined,
        JSON.stringify({ params: m.params, metadata: m.metadata }), container, function () {
          E.post('loaded', { contentId: cfg.contentId, library: m.library });
        });
      E.watchHeight();
    });
  }

  function save() {
    if (!editor) {
      E.fail('The editor is not ready yet.', 'save');
      return;
    }
    editor.getContent(function (content) {
      var params;
      try {
        params = typeof content.params === 'string' ? JSON.parse(content.params) : content.params;
      } catch (e) {
        E.fail('The editor produced parameters that are not JSON.', 'validation');
        return;
      }
      var isNew = contentId === '';
      E.fetchJSON(isNew ? '/h5p/contents' : '/h5p/contents/' + encodeURIComponent(contentId), {
        method: isNew ? 'POST' : 'PATCH',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ library: content.library, params: params })
      }).then(function (body) {
        contentId = String(body.data.contentId || body.data.id || contentId);
        window.H5PEditor.contentId = contentId;
        E.post('saved', { contentId: contentId, metadata: body.data.metadata });
      }).catch(function (err) {
        E.fail(err.message, err.status === 422 ? 'validation' : 'save');
      });
    }, function (message) {
      E.fail(String(message || 'The content is not valid.'), 'validation');
    });
  }

  E.on('save', save);
  E.on('token', function () {
    if (window.H5PEditor && window.H5PIntegration && window.H5PIntegration.editor) {
      window.H5PEditor.ajaxPath = window.H5PIntegration.editor.ajaxPath = ajaxPath(window.H5PIntegration.editor.ajaxPath.replace(/_token=[^&]*&/, ''));
    }
  });

  E.begin(function (token) {
    if (!cfg.editorInstalled) {
      notInstalled();
      return;
    }
    if (!token) {
      E.fail('Log in to edit H5P content.', 'load');
      return;
    }
    load().catch(function (err) {
      E.fail(err && err.message ? err.message : 'The editor could not be loaded.', 'load');
    });
  }, false, function () {
    if (cfg.editorInstalled) {
      E.fail('Log in to edit H5P content: no token came from the parent page.', 'load');
    } else {
      notInstalled();
    }
  });
})();
