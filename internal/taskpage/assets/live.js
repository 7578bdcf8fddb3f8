// Follows a running task: new timeline entries are added as they come (a
// command's end replaces its start), the state, duration and cost are
// kept current, the badge says whether the stream is connected, and the
// page reloads once the task ended (to show its result and diff).
(function () {
  "use strict";
  var url = document.body.getAttribute("data-events");
  if (!url || !window.EventSource) { return; }
  var timeline = document.getElementById("timeline");
  var live = document.getElementById("live");
  function badge(text, cls) {
    if (!live) { return; }
    live.hidden = false;
    live.textContent = text;
    live.className = "live " + cls;
  }
  badge("connecting…", "off");
  var es = new EventSource(url);
  es.onopen = function () { badge("live", "on"); };
  es.onerror = function () {
    if (es.readyState === EventSource.CLOSED) {
      badge("disconnected: reload the page", "off");
    } else {
      badge("reconnecting…", "off");
    }
  };
  es.addEventListener("item", function (e) {
    badge("live", "on");
    var box = document.createElement("ol");
    box.innerHTML = e.data;
    var li = box.firstElementChild;
    if (!li) { return; }
    var tool = li.getAttribute("data-tool");
    if (tool !== null) {
      var old = timeline.querySelectorAll("li[data-tool]");
      for (var i = 0; i < old.length; i++) {
        if (old[i].getAttribute("data-tool") === tool) {
          timeline.replaceChild(li, old[i]);
          return;
        }
      }
    }
    timeline.appendChild(li);
  });
  es.addEventListener("task", function (e) {
    badge("live", "on");
    var t = JSON.parse(e.data);
    var state = document.getElementById("state");
    state.textContent = t.state;
    state.className = "badge " + t.state;
    document.getElementById("duration").textContent = t.duration;
    document.getElementById("cost").textContent = t.cost;
  });
  es.addEventListener("end", function () {
    es.close();
    badge("ended", "off");
    window.location.reload();
  });
})();
