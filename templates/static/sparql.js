// The query page's small editor: Ctrl/Cmd+Enter runs the query, Tab indents, and example
// links fill the editor instead of reloading the page. Without JavaScript the plain form works.
(function () {
  "use strict";
  var form = document.getElementById("query-form");
  var area = document.getElementById("query");
  if (!form || !area) { return; }
  area.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      form.requestSubmit();
    } else if (event.key === "Tab" && !event.shiftKey) {
      event.preventDefault();
      var start = area.selectionStart;
      area.setRangeText("  ", start, area.selectionEnd, "end");
    }
  });
  document.querySelectorAll("a[data-query]").forEach(function (link) {
    link.addEventListener("click", function (event) {
      event.preventDefault();
      area.value = link.getAttribute("data-query");
      area.focus();
    });
  });
}());
