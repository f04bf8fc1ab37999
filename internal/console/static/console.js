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
      sizeBars();
      document.body.dataset.updated = String(Date.now());
    });
  }

  var charts = document.getElementById("charts");
  if (charts) {
    var colours = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#ca8a04", "#db2777"];
    // The server's history (complete points, oldest first), the point in
    // progress, and the span shown.
    var series = JSON.parse(charts.dataset.history || "{}");
    var points = series.points || [], tail = series.tail || null, span = series.span_ms || 900000;
    var canvases = charts.querySelectorAll("canvas");
    function all() { return tail ? points.concat([tail]) : points; }
    function redraw() {
      canvases.forEach(draw);
      legend();
      document.body.dataset.samples = String(all().length);
    }
    var ms = stream("metrics", charts.dataset.q);
    ms.addEventListener("history", function (ev) {
      var s = JSON.parse(ev.data);
      points = s.points || []; tail = s.tail || null; span = s.span_ms || span;
      redraw();
    });
    ms.addEventListener("tail", function (ev) {
      tail = JSON.parse(ev.data);
      redraw();
    });
    window.addEventListener("resize", redraw);

    function busiest() {
      var total = {};
      all().forEach(function (s) {
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

    function two(n) { return (n < 10 ? "0" : "") + n; }
    function hhmm(t) { var d = new Date(t); return two(d.getHours()) + ":" + two(d.getMinutes()); }
    function label(v) { return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2); }

    // steps are the time axis's tick intervals, the first giving at most
    // ten ticks chosen.
    var steps = [1000, 2000, 5000, 10000, 30000, 60000, 120000, 180000, 300000];

    // draw plots one field across the canvas, as wide as its card: a value
    // axis on the left, a time axis below. The time axis spans the history
    // (at most the server's span; at least 5 s, so a young gateway's
    // few points use the width too).
    function draw(canvas) {
      var field = canvas.dataset.field;
      var ratio = window.devicePixelRatio || 1;
      var w = canvas.clientWidth, h = canvas.clientHeight || 200;
      canvas.width = Math.round(w * ratio); canvas.height = Math.round(h * ratio);
      var ctx = canvas.getContext("2d");
      ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
      ctx.clearRect(0, 0, w, h);
      var left = 48, right = 12, top = 8, bottom = 24;
      var pw = w - left - right, ph = h - top - bottom;
      var pts = all();
      var end = pts.length ? pts[pts.length - 1].t : Date.now();
      var start = pts.length ? Math.max(end - span, Math.min(pts[0].from || pts[0].t, end - 5000)) : end - 60000;
      var names = busiest();
      var max = 0;
      pts.forEach(function (s) { s.backends.forEach(function (b) { if (names.indexOf(b.backend) >= 0) max = Math.max(max, b[field]); }); });
      canvas.dataset.points = String(pts.length);
      canvas.dataset.max = String(max);
      if (max <= 0) max = 1;
      var x = function (t) { return left + (t - start) / (end - start) * pw; };
      var y = function (v) { return top + ph - v / max * ph; };
      ctx.font = "11px sans-serif";
      ctx.lineWidth = 1;
      // Value axis: 0, half, max, with grid lines.
      [0, max / 2, max].forEach(function (v) {
        ctx.strokeStyle = v === 0 ? "#8c959f" : "#eaeef2";
        ctx.beginPath(); ctx.moveTo(left, y(v)); ctx.lineTo(w - right, y(v)); ctx.stroke();
        ctx.fillStyle = "#555"; ctx.textAlign = "right"; ctx.textBaseline = "middle";
        ctx.fillText(label(v), left - 6, y(v));
      });
      // Time axis: ticks at round times, labelled.
      var step = steps.find(function (s) { return (end - start) / s <= 10; }) || steps[steps.length - 1];
      ctx.textAlign = "center"; ctx.textBaseline = "top";
      for (var t = Math.ceil(start / step) * step; t <= end; t += step) {
        ctx.strokeStyle = "#8c959f";
        ctx.beginPath(); ctx.moveTo(x(t), top + ph); ctx.lineTo(x(t), top + ph + 4); ctx.stroke();
        ctx.fillStyle = "#555";
        ctx.fillText(step < 60000 ? hhmm(t) + ":" + two(new Date(t).getSeconds()) : hhmm(t), x(t), top + ph + 6);
      }
      // Each point is an interval's average: a step over its interval.
      names.forEach(function (name, i) {
        ctx.strokeStyle = colours[i]; ctx.lineWidth = 2;
        ctx.beginPath();
        var first = true;
        pts.forEach(function (s) {
          var b = s.backends.find(function (p) { return p.backend === name; });
          var py = y(b ? b[field] : 0);
          var x0 = x(Math.max(s.from || s.t, start)), x1 = x(s.t);
          if (s.t < start) return;
          if (first) { ctx.moveTo(x0, py); first = false; } else { ctx.lineTo(x0, py); }
          ctx.lineTo(x1, py);
        });
        ctx.stroke();
      });
    }
    redraw();
  }

  // Bars of a run's call timeline (widths from data attributes: no inline style).
  function sizeBars() {
    var bars = document.querySelectorAll(".bar");
    var longest = 1;
    bars.forEach(function (b) { longest = Math.max(longest, Number(b.dataset.ms) || 0); });
    bars.forEach(function (b) { b.style.width = Math.max(2, 200 * (Number(b.dataset.ms) || 0) / longest) + "px"; });
  }
  sizeBars();
})();
