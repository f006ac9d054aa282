// The SCORM player page: it gives the SCO in the frame its runtime
// (window.API for 1.2, window.API_1484_11 for 2004, from scorm-again)
// loaded with the stored model before the SCO starts, commits to the
// tracking routes with the tracking token in a header, retries a commit
// lost on the way, and navigates between the SCOs of the package.
(function () {
  "use strict";
  var rt = JSON.parse(document.getElementById("runtime").textContent);
  var notice = document.getElementById("notice");
  var frame = document.getElementById("sco");
  var pending = null; // the newest commit not yet stored
  var retryDelay = 1000;
  var inFlight = 0;

  function say(text) { notice.textContent = text || ""; }

  function headers() {
    var h = { "Content-Type": "application/json" };
    h[rt.token_header] = rt.token;
    return h;
  }

  // A commit that could not be delivered is retried with the same
  // sequence number until it is stored or a newer commit replaces it:
  // the server ignores any commit not newer than what it holds.
  function retryLater(body) {
    if (!pending || pending.seq < body.seq) pending = body;
    say("Saving your progress is delayed; retrying…");
    setTimeout(retry, retryDelay);
    retryDelay = Math.min(retryDelay * 2, 30000);
  }

  function retry() {
    if (!pending) return;
    var body = pending;
    send(body, true, function (ok, status) {
      if (ok) {
        if (pending === body) pending = null;
        retryDelay = 1000;
        say("");
      } else if (status === 0 || status >= 500 || status === 429) {
        retryLater(body);
      }
    });
  }

  function send(body, async, done) {
    inFlight++;
    var finish = function (ok, status) { inFlight--; done(ok, status); };
    if (async) {
      fetch(rt.track_url + "/commit", { method: "POST", headers: headers(), body: JSON.stringify(body), keepalive: true,
        credentials: "omit" }).then(function (r) { finish(r.ok, r.status); }, function () { finish(false, 0); });
      return;
    }
    var xhr = new XMLHttpRequest();
    try {
      xhr.open("POST", rt.track_url + "/commit", false);
      var h = headers();
      for (var k in h) xhr.setRequestHeader(k, h[k]);
      xhr.send(JSON.stringify(body));
      finish(xhr.status >= 200 && xhr.status < 300, xhr.status);
    } catch (e) {
      finish(false, 0);
    }
  }

  // httpService is scorm-again's hook for commits: the SCO's LMSCommit /
  // Commit waits for the store (synchronous), and the final commit of
  // LMSFinish / Terminate goes out with keepalive, as the page may be
  // leaving.
  var httpService = {
    processHttpRequest: function (url, params, immediate, apiLog, processListeners, metadata) {
      var body = { seq: metadata && metadata.sequence, terminate: !!immediate, cmi: params };
      var result = { result: "true", errorCode: 0 };
      send(body, !!immediate, function (ok, status) {
        if (ok) {
          if (pending && pending.seq <= body.seq) pending = null;
          processListeners("CommitSuccess");
          return;
        }
        if (status === 0 || status >= 500 || status === 429) {
          retryLater(body);
          processListeners("CommitSuccess");
          return;
        }
        say(status === 401 ? "This session has expired; reopen the activity to go on." : "Your progress could not be saved.");
        result = { result: "false", errorCode: 101 };
        processListeners("CommitError", null, 101);
      });
      return result;
    },
    updateSettings: function () {}
  };

  var settings = {
    lmsCommitUrl: rt.track_url + "/commit",
    dataCommitFormat: "flattened",
    autocommit: true,
    autocommitSeconds: 10,
    httpService: httpService,
    logLevel: 4,
    scoItemIds: rt.sco_item_ids
  };
  var api;
  if (rt.version === "2004") {
    api = new window.Scorm2004API(settings);
    window.API_1484_11 = api;
  } else {
    api = new window.Scorm12API(settings);
    window.API = api;
  }
  api.loadFromFlattenedJSON(rt.cmi, "");

  var navigating = false;
  function navigate(action, target) {
    if (navigating) return;
    navigating = true;
    // Unloading the SCO lets it finish (its unload handler calls
    // LMSFinish / Terminate), then the next SCO is launched. exit comes
    // after Terminate: the SCO stays on screen unless a rule of the
    // package delivers another.
    if (action !== "exit") frame.src = "about:blank";
    var tries = 0;
    (function wait() {
      if ((inFlight > 0 || pending) && tries++ < 50) { setTimeout(wait, 100); return; }
      fetch(rt.track_url + "/navigate", { method: "POST", headers: headers(), credentials: "omit",
        body: JSON.stringify({ action: action, target: target || "" }) })
        .then(function (r) { return r.json().then(function (j) { return { ok: r.ok, body: j }; }); })
        .then(function (res) {
          if (!res.ok) {
            navigating = false;
            say(res.body.message);
            if (action !== "exit") frame.src = rt.content;
            return;
          }
          if (res.body.data.ended) { navigating = false; say("You may close this activity."); return; }
          var form = document.getElementById("go");
          form.action = res.body.data.player_url;
          form.elements.token.value = res.body.data.token;
          form.submit();
        }, function () { navigating = false; say("The next activity could not be opened; try again."); });
    })();
  }

  // SCORM 2004 navigation requests the SCO makes before Terminate. They
  // are kept as the SCO sets them: scorm-again resets adl.nav.request to
  // _none_ within Terminate, before this page could read it.
  if (rt.version === "2004") {
    var navRequest = "_none_";
    api.on("SetValue.adl.nav.request", function (element, value) { navRequest = String(value); });
    api.on("Terminate", function () {
      var req = navRequest;
      navRequest = "_none_";
      setTimeout(function () {
        var m = /^\{target=([^}]+)\}(choice|jump)$/.exec(req || "");
        if (m) navigate("choice", m[1]);
        else if (req === "continue" || req === "previous") navigate(req);
        // The end of the attempt may meet exit and post-condition rules
        // (retry, continue...): the server decides what comes next.
        else if (req === "_none_" || req === "exit") navigate("exit");
        else if (req === "exitAll" || req === "suspendAll") say("You may close this activity.");
      }, 0);
    });
  }

  document.getElementById("title").textContent = rt.title + (rt.contents && rt.contents.length > 1 ? " – " + rt.sco : "");
  var list = document.getElementById("toc-list");
  if (list) {
    rt.contents.forEach(function (e) {
      var li = document.createElement("li");
      li.style.paddingLeft = e.depth + "rem";
      if (e.sco_id) {
        var b = document.createElement("button");
        b.type = "button";
        b.textContent = e.title;
        b.disabled = !e.choosable || e.sco_id === rt.sco_id;
        if (e.sco_id === rt.sco_id) li.className = "current";
        b.addEventListener("click", function () { navigate("choice", e.identifier); });
        li.appendChild(b);
      } else {
        li.appendChild(document.createTextNode(e.title));
      }
      var st = document.createElement("span");
      st.className = "status";
      st.textContent = " " + e.status;
      li.appendChild(st);
      list.appendChild(li);
    });
    var prev = document.getElementById("previous"), next = document.getElementById("continue");
    prev.disabled = !rt.previous;
    next.disabled = !rt.continue;
    prev.addEventListener("click", function () { navigate("previous"); });
    next.addEventListener("click", function () { navigate("continue"); });
    document.getElementById("toc-toggle").addEventListener("click", function () {
      var toc = document.getElementById("toc");
      toc.hidden = !toc.hidden;
    });
  }
  window.addEventListener("online", retry);
  frame.src = rt.content;
})();
