// Follows a running task: new timeline entries are added as they come,
// the state, duration and cost are kept current, and the page reloads
// once the task ended (to show its result and diff).
(function () {
  "use strict";
  var url = document.body.getAttribute("data-events");
  if (!url || !window.EventSource) { return; }
  var timeline = document.getElementById("timeline");
  var es = new EventSource(url);
  es.addEventListener("item", function (e) {
    timeline.insertAdjacentHTML("beforeend", e.data);
  });
  es.addEventListener("task", function (e) {
    var t = JSON.parse(e.data);
    var state = document.getElementById("state");
    state.textContent = t.state;
    state.className = "badge " + t.state;
    document.getElementById("duration").textContent = t.duration;
    document.getElementById("cost").textContent = t.cost;
  });
  es.addEventListener("end", function () {
    es.close();
    var live = document.getElementById("live");
    if (live) { live.textContent = "ended"; }
    window.location.reload();
  });
})();
