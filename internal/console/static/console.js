// isogate console: live parts of pages over server-sent events, and the
// metrics charts. No inline script anywhere (the CSP forbids it); the HTML
// a "live" event carries was rendered and escaped by the server.
"use strict";

(function () {
  function stream(page, q) {
    return new EventSource("/console/events?page=" + encodeURIComponent(page) + "&q=" + encodeURIComponent(q || ""));
  }

  var live = document.getElementById("live");
  if (live) {
    var es = stream(live.dataset.page, live.dataset.q);
    es.addEventListener("live", function (ev) {
      live.innerHTML = ev.data;
      document.body.dataset.updated = String(Date.now());
    });
  }

  var charts = document.getElementById("charts");
  if (charts) {
    var colours = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#ca8a04", "#db2777"];
    var history = []; // samples, oldest first
    var canvases = charts.querySelectorAll("canvas");
    var ms = stream("metrics", charts.dataset.q);
    ms.addEventListener("sample", function (ev) {
      history.push(JSON.parse(ev.data));
      if (history.length > 300) history.shift();
      canvases.forEach(draw);
      legend();
      document.body.dataset.samples = String(history.length);
    });

    function busiest() {
      var total = {};
      history.forEach(function (s) {
        s.backends.forEach(function (b) { total[b.backend] = (total[b.backend] || 0) + b.calls_per_s + b.errors_per_s; });
      });
      return Object.keys(total).sort(function (a, b) { return total[b] - total[a] || (a < b ? -1 : 1); }).slice(0, colours.length);
    }

    function legend() {
      var ul = document.getElementById("legend");
      ul.textContent = "";
      busiest().forEach(function (name, i) {
        var li = document.createElement("li");
        var sw = document.createElement("span");
        sw.className = "swatch swatch-" + i;
        li.appendChild(sw);
        li.appendChild(document.createTextNode(name));
        ul.appendChild(li);
      });
    }

    function draw(canvas) {
      var field = canvas.dataset.field;
      var ctx = canvas.getContext("2d");
      var w = canvas.width, h = canvas.height, pad = 30;
      ctx.clearRect(0, 0, w, h);
      var names = busiest();
      var max = 0;
      history.forEach(function (s) { s.backends.forEach(function (b) { if (names.indexOf(b.backend) >= 0) max = Math.max(max, b[field]); }); });
      if (max <= 0) max = 1;
      ctx.strokeStyle = "#ccc";
      ctx.beginPath(); ctx.moveTo(pad, 5); ctx.lineTo(pad, h - pad); ctx.lineTo(w - 5, h - pad); ctx.stroke();
      ctx.fillStyle = "#555";
      ctx.font = "11px sans-serif";
      ctx.fillText(max.toFixed(max < 10 ? 1 : 0), 2, 12);
      ctx.fillText("0", 2, h - pad);
      var slots = Math.max(history.length, 60);
      var step = (w - pad - 5) / (slots - 1);
      names.forEach(function (name, i) {
        ctx.strokeStyle = colours[i];
        ctx.beginPath();
        var first = true;
        history.forEach(function (s, j) {
          var b = s.backends.find(function (x) { return x.backend === name; });
          var v = b ? b[field] : 0;
          var x = pad + (j + slots - history.length) * step;
          var y = h - pad - (v / max) * (h - pad - 5);
          if (first) { ctx.moveTo(x, y); first = false; } else { ctx.lineTo(x, y); }
        });
        ctx.stroke();
      });
    }
  }

  // Bars of a run's call timeline (widths from data attributes: no inline style).
  var bars = document.querySelectorAll(".bar");
  var longest = 1;
  bars.forEach(function (b) { longest = Math.max(longest, Number(b.dataset.ms) || 0); });
  bars.forEach(function (b) { b.style.width = Math.max(2, 200 * (Number(b.dataset.ms) || 0) / longest) + "px"; });
})();
