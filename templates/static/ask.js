// The ask page without reloads: forms of class "ask-form" start a background job
// (POST /ask/jobs), the page polls its progress (GET /ask/jobs/<id>) and shows the stages, the
// answers as the model writes them, and finally the result the server rendered. Without
// JavaScript the same forms post to /ask and the server answers with a whole page.
(function () {
  "use strict";

  var POLL_MS = 250;
  var LABELS = {
    expand: "Expanding the question into a search query",
    retrieve: "Searching the literature index",
    extract: "Extracting snippets",
    rerank: "Reranking snippets",
    answer: "Writing the answers"
  };
  var problemBox = document.getElementById("ask-problem");
  var progress = document.getElementById("ask-progress");
  var stageList = document.getElementById("ask-stages");
  var partialBox = document.getElementById("ask-partial");
  var resultBox = document.getElementById("ask-result");
  if (!problemBox || !progress || !stageList || !partialBox || !resultBox || !window.fetch) {
    return;
  }

  function setBusy(busy) {
    var buttons = document.querySelectorAll("form.ask-form button");
    for (var i = 0; i < buttons.length; i++) {
      buttons[i].disabled = busy;
    }
    document.body.setAttribute("aria-busy", busy ? "true" : "false");
  }

  function clear(node) {
    while (node.firstChild) {
      node.removeChild(node.firstChild);
    }
  }

  function showProblem(problem) {
    clear(problemBox);
    var box = document.createElement("div");
    box.className = "problem";
    var title = document.createElement("p");
    var strong = document.createElement("strong");
    strong.textContent = (problem && problem.title) || "The question could not be answered";
    title.appendChild(strong);
    var detail = document.createElement("pre");
    detail.textContent = (problem && problem.detail) || "Please try again.";
    box.appendChild(title);
    box.appendChild(detail);
    problemBox.appendChild(box);
  }

  function showStages(stages) {
    clear(stageList);
    stages.forEach(function (stage) {
      var item = document.createElement("li");
      item.setAttribute("data-stage", stage.stage);
      item.setAttribute("data-state", stage.state);
      var text = LABELS[stage.stage] || stage.stage;
      if (stage.state === "done") {
        text += " \u2014 " + Math.round(stage.millis || 0) + " ms";
        if (stage.detail) {
          text += ": " + stage.detail;
        }
      }
      item.textContent = text;
      stageList.appendChild(item);
    });
  }

  function showPartial(partial) {
    clear(partialBox);
    ["short", "cited"].forEach(function (part) {
      if (partial && partial[part]) {
        var text = document.createElement("p");
        text.setAttribute("data-part", part);
        text.textContent = partial[part];
        partialBox.appendChild(text);
      }
    });
  }

  function poll(url) {
    fetch(url, { headers: { Accept: "application/json" } })
      .then(function (response) {
        return response.json().then(function (data) {
          return { ok: response.ok, data: data };
        });
      })
      .then(function (reply) {
        var data = reply.data;
        if (!reply.ok) {
          showProblem(data);
          setBusy(false);
          return;
        }
        showStages(data.stages || []);
        showPartial(data.partial);
        if (data.state === "done") {
          // server-rendered with autoescaping: the same markup as the page without JavaScript
          resultBox.innerHTML = data.html;
          clear(partialBox);
          progress.setAttribute("data-done", "true");
          setBusy(false);
          var first = resultBox.querySelector("h2");
          if (first) {
            first.setAttribute("tabindex", "-1");
            first.focus();
          }
        } else if (data.state === "failed") {
          // the problem says what went wrong; half-finished stages would only confuse
          progress.hidden = true;
          showProblem(data.problem);
          setBusy(false);
        } else {
          window.setTimeout(function () { poll(url); }, POLL_MS);
        }
      })
      .catch(function () {
        showProblem({ title: "Lost contact with the server", detail: "Reload the page and try again." });
        setBusy(false);
      });
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.classList.contains("ask-form")) {
      return;
    }
    event.preventDefault();
    clear(problemBox);
    progress.hidden = false;
    progress.removeAttribute("data-done");
    showStages([]);
    setBusy(true);
    var body = new URLSearchParams(new FormData(form));
    fetch("/ask/jobs", {
      method: "POST",
      body: body,
      headers: { Accept: "application/json" }
    })
      .then(function (response) {
        return response.json().then(function (data) {
          return { status: response.status, data: data };
        });
      })
      .then(function (reply) {
        if (reply.status !== 202) {
          progress.hidden = true;
          showProblem(reply.data);
          setBusy(false);
          return;
        }
        poll(reply.data.progress);
      })
      .catch(function () {
        // the background API is unreachable: fall back to the plain form post
        form.submit();
      });
  });
})();
