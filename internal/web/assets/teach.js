// The authoring pages' script: the Markdown editor, drag and drop of
// lessons and topics, and upload progress. Every page works without it:
// the editor is a text area, the arrows are forms, uploads are plain posts.
(function () {
  'use strict';

  function csrfToken() {
    var input = document.querySelector('input[name="csrf_token"]');
    return input ? input.value : '';
  }

  // The Markdown editor (tiny-markdown-editor), over the text area it
  // keeps in step; the text area stays the form's field.
  var md = document.getElementById('markdown');
  if (md && md.classList.contains('md-source') && window.TinyMDE) {
    var editor = new window.TinyMDE.Editor({ textarea: md });
    new window.TinyMDE.CommandBar({ element: 'markdown-toolbar', editor: editor });
    var area = md.parentNode.querySelector('.TinyMDE');
    var label = document.querySelector('label[for="markdown"]');
    if (area) {
      area.setAttribute('role', 'textbox');
      area.setAttribute('aria-multiline', 'true');
      if (label) {
        label.id = label.id || 'markdown-label';
        area.setAttribute('aria-labelledby', label.id);
        label.addEventListener('click', function () { area.focus(); });
      }
      area.setAttribute('aria-describedby', md.getAttribute('aria-describedby') || '');
    }
  }

  // Drag and drop among siblings; the drop posts the new position to the
  // same route as the arrow buttons, then reloads the program.
  var dragged = null;
  document.querySelectorAll('[data-sortable] > li').forEach(function (li) {
    var handle = li.querySelector(':scope > .teach-row > .drag-handle');
    if (!handle) { return; }
    li.draggable = true;
    li.addEventListener('dragstart', function (e) {
      e.stopPropagation();
      dragged = li;
      li.classList.add('dragging');
      e.dataTransfer.effectAllowed = 'move';
      e.dataTransfer.setData('text/plain', li.dataset.id);
    });
    li.addEventListener('dragover', function (e) {
      if (!dragged || dragged === li || dragged.parentNode !== li.parentNode) { return; }
      e.preventDefault();
      e.stopPropagation();
      var box = li.getBoundingClientRect();
      var after = e.clientY > box.top + box.height / 2;
      li.parentNode.insertBefore(dragged, after ? li.nextSibling : li);
    });
    li.addEventListener('dragend', function (e) {
      e.stopPropagation();
      if (dragged !== li) { return; }
      li.classList.remove('dragging');
      dragged = null;
      var position = Array.prototype.indexOf.call(li.parentNode.children, li) + 1;
      var body = new URLSearchParams();
      body.set('csrf_token', csrfToken());
      body.set('to', String(position));
      fetch(li.dataset.move, { method: 'POST', body: body, credentials: 'same-origin',
        headers: { 'X-Requested-With': 'fetch' } }).then(function () { location.reload(); });
    });
  });

  // Uploads: the form is sent by XHR to show its progress; the answer (the
  // topic's page, or the form with the API's messages) replaces the page.
  var form = document.querySelector('form.teach-topic-form[data-upload]:not([data-upload=""])');
  if (form) {
    form.addEventListener('submit', function (e) {
      var file = form.querySelector('#upload');
      if (!file || !file.files || !file.files.length || !window.FormData) { return; }
      e.preventDefault();
      var bar = form.querySelector('.upload-progress');
      var status = document.getElementById('upload-status');
      var button = form.querySelector('button[type="submit"]');
      bar.hidden = false;
      button.disabled = true;
      var xhr = new XMLHttpRequest();
      xhr.open('POST', form.action);
      xhr.upload.addEventListener('progress', function (p) {
        if (p.lengthComputable) {
          bar.value = Math.round(p.loaded * 100 / p.total);
          status.textContent = bar.value + '%';
        }
      });
      xhr.addEventListener('load', function () {
        if (xhr.status < 300 && xhr.responseURL && xhr.responseURL !== form.action) {
          location.assign(xhr.responseURL);
          return;
        }
        document.open();
        document.write(xhr.responseText);
        document.close();
      });
      xhr.addEventListener('error', function () { button.disabled = false; bar.hidden = true; });
      xhr.send(new FormData(form));
    });
  }

  // A video being transcoded: its state is read again every 5 s and only
  // the notice is replaced (a reload would drop what the author is
  // typing in the form below); the polling stops once it is done.
  var watched = document.querySelector('[data-watch-processing]');
  if (watched && window.fetch && window.DOMParser) {
    var notice = document.getElementById('processing');
    var poll = function () {
      fetch(location.href, { credentials: 'same-origin' }).then(function (r) { return r.text(); }).then(function (html) {
        var next = new DOMParser().parseFromString(html, 'text/html').getElementById('processing');
        if (!next) { return; }
        if (next.textContent !== notice.textContent) { notice.innerHTML = next.innerHTML; }
        if (next.querySelector('[data-watch-processing]')) { setTimeout(poll, 5000); }
      }, function () { setTimeout(poll, 5000); });
    };
    setTimeout(poll, 5000);
  }

  // The H5P editor, framed from the content origin: it is answered with
  // the author's edit grant (never the session), and the form it sits in
  // asks it to save the content first (lms-h5p:save), then goes with the
  // content's id once it answers lms-h5p:saved. Its errors are shown
  // under it and the form stays.
  var editor = document.getElementById('h5p-editor');
  if (editor) {
    var editorForm = editor.closest('form');
    var editorOrigin = new URL(editor.src, location.href).origin;
    var contentField = document.getElementById('h5p-content-id');
    var editorStatus = document.getElementById('h5p-editor-status');
    var saving = false;
    var saved = false;
    window.addEventListener('message', function (e) {
      var m = e.data;
      if (e.source !== editor.contentWindow || e.origin !== editorOrigin || !m || typeof m.type !== 'string') { return; }
      switch (m.type) {
        case 'lms-h5p:ready':
          editor.contentWindow.postMessage({ type: 'lms-h5p:token', token: editor.dataset.grant }, editorOrigin);
          break;
        case 'lms-h5p:loaded':
          editor.dataset.loaded = '1';
          break;
        case 'lms-h5p:resize':
          if (Number(m.height) > 0) { editor.style.height = Math.ceil(Number(m.height)) + 'px'; }
          break;
        case 'lms-h5p:saved':
          if (!saving || !/^[1-9][0-9]*$/.test(String(m.contentId))) { return; }
          contentField.value = String(m.contentId);
          saved = true;
          editorForm.submit();
          break;
        case 'lms-h5p:error':
          saving = false;
          editorStatus.className = 'field-error';
          editorStatus.textContent = String(m.message || 'error');
          break;
      }
    });
    // The grant lasts two hours: a fresh one (POST /teach/h5p-grant) is
    // handed over well before, so a long sitting still saves.
    var renew = Number(editor.dataset.renew);
    if (renew > 0) { setInterval(function () {
      var body = new URLSearchParams();
      body.set('csrf_token', csrfToken());
      body.set('content', contentField.value || 'new');
      fetch('/teach/h5p-grant', { method: 'POST', body: body, credentials: 'same-origin',
        headers: { 'X-Requested-With': 'fetch' } })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (b) {
          if (b && b.data && typeof b.data.grant === 'string') {
            editor.dataset.grant = b.data.grant;
            editor.contentWindow.postMessage({ type: 'lms-h5p:token', token: b.data.grant }, editorOrigin);
          }
        }, function () {});
    }, renew * 1000); }
    editorForm.addEventListener('submit', function (e) {
      if (saved) { return; }
      e.preventDefault();
      if (saving) { return; }
      saving = true;
      editorStatus.className = 'muted';
      editorStatus.textContent = editor.dataset.saving;
      editor.contentWindow.postMessage({ type: 'lms-h5p:save' }, editorOrigin);
    });
  }

  // The layout palette: Insert appends the component's example node to
  // the document's JSON array. Without script the examples are there to
  // copy.
  var doc = document.getElementById('document');
  var paletteStatus = document.getElementById('layout-palette-status');
  document.querySelectorAll('[data-layout-insert]').forEach(function (button) {
    button.hidden = false;
    button.addEventListener('click', function () {
      var nodes;
      try {
        nodes = doc.value.trim() === '' ? [] : JSON.parse(doc.value);
      } catch (e) {
        nodes = null;
      }
      if (!Array.isArray(nodes)) {
        paletteStatus.hidden = false;
        doc.focus();
        return;
      }
      paletteStatus.hidden = true;
      nodes.push(JSON.parse(button.getAttribute('data-layout-insert')));
      doc.value = JSON.stringify(nodes, null, 2);
      doc.focus();
      doc.setSelectionRange(doc.value.length, doc.value.length);
    });
  });
})();
