"use strict";
// The case table of kubectl evalrun report: it reads the JSON in #report-data and renders one page of rows at a
// time (at most data.maxPageSize cases in the DOM), filtered by verdict, evaluator and text, sorted failing first
// or by a column. A run with trials (data.trials) shows each case once with a mark per trial, a flaky filter, and
// every trial's result in the case's detail. Every text from the run is set through textContent: none is parsed
// as markup.
(function () {
  var started = performance.now();
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var cases = data.cases;
  var rank = { Fail: 0, Error: 1, Missing: 2, Skipped: 3, Pass: 4 };
  var trials = data.trials || 0;
  var marks = { Pass: "\u2713", Fail: "\u2717", Error: "!", Missing: "?", Skipped: "\u2013" };
  // open is keyed by case ids (run data): no prototype, so no id can name one of its properties.
  var state = { verdict: "", evaluator: "", text: "", flaky: false, sort: "default", dir: 1, page: 0, size: data.pageSize, open: Object.create(null) };
  var view = [];
  var hay = null;
  var $ = function (id) { return document.getElementById(id); };

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  function fmt(n) { return Number(n).toLocaleString("en-US"); }
  function option(select, value, label) { var o = el("option", null, label); o.value = value; select.appendChild(o); }

  // The controls: verdicts with their counts, evaluators, page sizes.
  var counts = {};
  var newly = { NewlyFailing: 0, NewlyPassing: 0 };
  cases.forEach(function (c) { counts[c.o] = (counts[c.o] || 0) + 1; if (c.b) { newly[c.b]++; } });
  var vsel = $("f-verdict");
  option(vsel, "not-passing", "Not passing (" + fmt((counts.Fail || 0) + (counts.Error || 0) + (counts.Missing || 0)) + ")");
  ["Fail", "Error", "Missing", "Skipped", "Pass"].forEach(function (o) {
    // Error selects the missing cases too, as status.summary.errored counts them.
    var n = (counts[o] || 0) + (o === "Error" ? counts.Missing || 0 : 0);
    option(vsel, o, (o === "Error" ? "Error, Missing" : o) + " (" + fmt(n) + ")");
  });
  if (data.baseline) {
    option(vsel, "NewlyFailing", "Newly failing (" + fmt(newly.NewlyFailing) + ")");
    option(vsel, "NewlyPassing", "Newly passing (" + fmt(newly.NewlyPassing) + ")");
    var th = el("th", "sortable", "Δ vs " + data.baseline);
    th.setAttribute("data-sort", "delta");
    document.querySelector("#case-table thead tr").insertBefore(th, document.querySelector("#case-table thead th:nth-child(5)"));
  }
  var flaky = 0;
  if (trials) {
    cases.forEach(function (c) { if (c.f) { flaky++; } });
    var tth = el("th", "sortable", "Trials");
    tth.setAttribute("data-sort", "trials");
    document.querySelector("#case-table thead tr").insertBefore(tth, document.querySelector('#case-table thead th[data-sort="score"]'));
    var fl = el("label");
    var box = el("input");
    box.type = "checkbox";
    box.id = "f-flaky";
    fl.appendChild(box);
    fl.appendChild(document.createTextNode(" Flaky only (" + fmt(flaky) + ")"));
    $("shown").parentNode.insertBefore(fl, $("shown"));
    box.addEventListener("change", function () { state.flaky = box.checked; refilter(); });
  }
  var esel = $("f-evaluator");
  (data.evaluators || []).forEach(function (n) { option(esel, n, n); });
  var ssel = $("f-size");
  [25, 50, 100, 200].filter(function (n) { return n <= data.maxPageSize; }).forEach(function (n) { option(ssel, String(n), String(n)); });
  ssel.value = String(state.size);

  function matches(c) {
    var v = state.verdict;
    if (v === "not-passing") { if (c.o !== "Fail" && c.o !== "Error" && c.o !== "Missing") { return false; } }
    else if (v === "NewlyFailing" || v === "NewlyPassing") { if (c.b !== v) { return false; } }
    else if (v === "Error") { if (c.o !== "Error" && c.o !== "Missing") { return false; } }
    else if (v && c.o !== v) { return false; }
    if (state.flaky && !c.f) { return false; }
    if (state.evaluator) {
      var found = false;
      var judged = function (e) { if (e.n === state.evaluator || e.t === state.evaluator) { found = true; } };
      (c.e || []).forEach(judged);
      (c.tr || []).forEach(function (t) { (t.e || []).forEach(judged); });
      if (!found) { return false; }
    }
    return true;
  }
  function haystack(i) {
    if (hay === null) { hay = new Array(cases.length); }
    if (hay[i] === undefined) {
      var c = cases[i];
      var parts = [c.id, c.m || "", c.a ? c.a.t : "", c.err ? c.err.t : "", c.c || ""];
      (c.tr || []).forEach(function (t) { parts.push(t.m || "", t.a ? t.a.t : "", t.err ? t.err.t : ""); });
      hay[i] = parts.join("\n").toLowerCase();
    }
    return hay[i];
  }
  function numeric(s) { return s === undefined || s === "" ? -Infinity : parseFloat(s); }
  function compare(a, b) {
    var ca = cases[a], cb = cases[b], r = 0;
    switch (state.sort) {
      case "id": r = ca.id < cb.id ? -1 : ca.id > cb.id ? 1 : 0; break;
      case "verdict": r = rank[ca.o] - rank[cb.o]; break;
      case "score": r = numeric(ca.s) - numeric(cb.s); break;
      case "delta": r = numeric(ca.d) - numeric(cb.d); break;
      case "trials": r = (ca.tp || 0) - (cb.tp || 0); break;
    }
    return (r || a - b) * state.dir;
  }
  function refilter() {
    var q = state.text.toLowerCase();
    view = [];
    for (var i = 0; i < cases.length; i++) {
      if (matches(cases[i]) && (!q || haystack(i).indexOf(q) >= 0)) { view.push(i); }
    }
    if (state.sort !== "default" || state.dir !== 1) { view.sort(compare); }
    state.page = 0;
    render();
  }

  function textBlock(title, t, empty) {
    var box = el("div", "text");
    box.appendChild(el("h3", null, title));
    if (!t) { box.appendChild(el("p", "muted", empty)); return box; }
    box.appendChild(el("pre", null, t.t));
    if (t.n) { box.appendChild(el("div", "cut", "cut: the first " + fmt(new Blob([t.t]).size) + " of " + fmt(t.n) + " bytes are shown")); }
    return box;
  }
  function notesList(cls, title, list) {
    var wrap = el("div", cls);
    wrap.appendChild(el("span", "muted", title + ":"));
    var ul = el("ul");
    list.forEach(function (n) { ul.appendChild(el("li", null, n)); });
    wrap.appendChild(ul);
    return wrap;
  }
  function evaluatorBlock(e) {
    var box = el("div", "evaluator");
    var head = el("div");
    head.appendChild(el("strong", "ev-name", e.n));
    head.appendChild(el("span", "muted", " (" + e.t + ") "));
    head.appendChild(el("span", "v v-" + e.v, e.v));
    if (e.s) { head.appendChild(el("span", "ev-score", " score " + e.s)); }
    box.appendChild(head);
    if (e.h && e.h.length) { box.appendChild(notesList("hits", "Hits", e.h)); }
    if (e.x && e.x.length) { box.appendChild(notesList("misses", "Misses", e.x)); }
    if (e.r) {
      box.appendChild(el("pre", "reasoning", e.r.t));
      if (e.r.n) { box.appendChild(el("div", "cut", "cut: the reasoning was " + fmt(e.r.n) + " bytes")); }
    }
    (e.mem || []).forEach(function (m) { box.appendChild(evaluatorBlock(m)); });
    return box;
  }
  // evaluatorCounts says how each evaluator judged a case's trials: "name=passed/judged" (Skipped not judged).
  function evaluatorCounts(c) {
    var by = new Map();
    c.tr.forEach(function (t) {
      (t.e || []).forEach(function (e) {
        if (!by.has(e.n)) { by.set(e.n, { p: 0, j: 0 }); }
        var n = by.get(e.n);
        if (e.v === "Pass") { n.p++; }
        if (e.v !== "Skipped") { n.j++; }
      });
    });
    var out = [];
    by.forEach(function (n, name) { out.push(name + "=" + n.p + "/" + n.j); });
    return out.join(", ");
  }
  function trialCounts(c) {
    var n = {};
    c.tr.forEach(function (t) { n[t.o] = (n[t.o] || 0) + 1; });
    return ["Pass", "Fail", "Error", "Missing", "Skipped"].filter(function (o) { return n[o]; }).map(function (o) {
      return fmt(n[o]) + " " + { Pass: "passed", Fail: "failed", Error: "errored", Missing: "missing", Skipped: "skipped" }[o];
    }).join(", ");
  }
  function trialBlock(t, open) {
    var box = el("details", "trial");
    box.setAttribute("data-trial", String(t.t));
    box.open = open;
    var sum = el("summary");
    sum.appendChild(el("strong", null, "Trial " + t.t + ": "));
    sum.appendChild(el("span", "v v-" + t.o, t.o));
    if (t.s) { sum.appendChild(el("span", "ev-score", " score " + t.s)); }
    if (t.m) { sum.appendChild(el("span", "muted", " \u2014 " + t.m)); }
    box.appendChild(sum);
    if (t.x) {
      box.appendChild(el("p", "muted", "no stored result: this trial's pod stored nothing (it failed, or the run ended before it)"));
      return box;
    }
    var facts = [];
    if (t.c) { facts.push("carried from " + t.c); }
    if (t.ms !== undefined) { facts.push(fmt(Math.round(t.ms)) + " ms"); }
    if (t.tok) { facts.push(fmt(t.tok) + " runner tokens"); }
    if (facts.length) { box.appendChild(el("p", "facts", facts.join(" \u00b7 "))); }
    if (t.err) { box.appendChild(textBlock("Error", t.err, "")); }
    if (t.r) { box.appendChild(el("p", null, "Skipped: " + t.r)); }
    box.appendChild(textBlock("Runner's answer", t.a, t.o === "Missing" ? "the runner produced no record" : "empty"));
    var evs = el("div", "evaluators");
    if (!t.e || !t.e.length) { evs.appendChild(el("p", "muted", "no evaluator judged this trial")); }
    (t.e || []).forEach(function (e) { evs.appendChild(evaluatorBlock(e)); });
    box.appendChild(evs);
    return box;
  }
  function trialDetail(c, td) {
    var facts = [c.o + " over " + trials + " trials: " + trialCounts(c) + (c.s ? "; mean score " + c.s : "")];
    if (c.f) { facts.push("flaky: its trials disagree"); }
    facts.push("a case passes when " + (parseFloat(data.trialPassRate) >= 1 ? "every trial passes" : "at least " + data.trialPassRate + " of its trials pass"));
    if (c.bo) { facts.push("baseline " + data.baseline + ": " + c.bo + (c.bs ? ", score " + c.bs : "") + (c.d ? ", delta " + c.d : "")); }
    td.appendChild(el("p", "facts", facts.join(" \u00b7 ")));
    var texts = el("div", "texts");
    texts.appendChild(textBlock("Input", c.in, "not in the report (the eval file was not readable)"));
    texts.appendChild(textBlock("Expected answer", c.ex, "none in the eval file"));
    td.appendChild(texts);
    var list = el("div", "trials");
    list.appendChild(el("h3", null, "Trials"));
    // The trial that stands for the case opens: the first that did not pass when the case did not, else the first.
    var first = -1;
    c.tr.forEach(function (t, i) { if (first < 0 && (c.o === "Pass" || t.o !== "Pass")) { first = i; } });
    c.tr.forEach(function (t, i) { list.appendChild(trialBlock(t, i === first)); });
    td.appendChild(list);
  }
  function detail(c, cols) {
    var tr = el("tr", "detail");
    tr.setAttribute("data-detail", c.id);
    var td = el("td");
    td.colSpan = cols;
    tr.appendChild(td);
    if (c.tr) { trialDetail(c, td); return tr; }
    var facts = [c.o + (c.s ? ", score " + c.s : "")];
    if (c.c) { facts.push("carried from " + c.c); }
    if (c.bo) { facts.push("baseline " + data.baseline + ": " + c.bo + (c.bs ? ", score " + c.bs : "") + (c.d ? ", delta " + c.d : "")); }
    if (c.ms !== undefined) { facts.push(fmt(Math.round(c.ms)) + " ms"); }
    if (c.tok) { facts.push(fmt(c.tok) + " runner tokens"); }
    td.appendChild(el("p", "facts", facts.join(" · ")));
    if (c.err) { td.appendChild(textBlock("Error", c.err, "")); }
    if (c.r) { td.appendChild(el("p", null, "Skipped: " + c.r)); }
    var texts = el("div", "texts");
    texts.appendChild(textBlock("Input", c.in, "not in the report (the eval file was not readable)"));
    texts.appendChild(textBlock("Runner's answer", c.a, c.o === "Missing" ? "the runner produced no record" : "empty"));
    texts.appendChild(textBlock("Expected answer", c.ex, "none in the eval file"));
    td.appendChild(texts);
    var evs = el("div", "evaluators");
    evs.appendChild(el("h3", null, "Evaluators"));
    if (!c.e || !c.e.length) { evs.appendChild(el("p", "muted", "none judged this case")); }
    (c.e || []).forEach(function (e) { evs.appendChild(evaluatorBlock(e)); });
    td.appendChild(evs);
    return tr;
  }
  function row(i, pos) {
    var c = cases[i];
    var tr = el("tr", "case" + (state.open[c.id] ? " open" : ""));
    tr.setAttribute("data-id", c.id);
    tr.appendChild(el("td", "muted", pos + 1));
    var idc = el("td", "mono", c.id);
    if (c.b) { idc.appendChild(el("span", "badge " + c.b, c.b === "NewlyFailing" ? "newly failing" : "newly passing")); }
    if (c.c) { idc.appendChild(el("span", "badge carried", "carried")); }
    if (c.f) { idc.appendChild(el("span", "badge flaky", "flaky")); }
    tr.appendChild(idc);
    tr.appendChild(el("td", "v v-" + c.o, c.o));
    if (trials) {
      var tc = el("td", "trial-marks");
      var mk = el("span", "marks");
      (c.tr || []).forEach(function (t) {
        var m = el("span", "mk mk-" + t.o, marks[t.o] || "?");
        m.title = "trial " + t.t + ": " + t.o + (t.s ? ", score " + t.s : "");
        m.setAttribute("data-o", t.o);
        mk.appendChild(m);
      });
      tc.appendChild(mk);
      tc.appendChild(el("span", "muted tally", " " + (c.tp || 0) + "/" + trials));
      tr.appendChild(tc);
    }
    tr.appendChild(el("td", null, c.s || "-"));
    if (data.baseline) { tr.appendChild(el("td", null, c.d || "-")); }
    tr.appendChild(el("td", null, (c.tr ? evaluatorCounts(c) : (c.e || []).map(function (e) { return e.n + "=" + e.v; }).join(", ")) || "-"));
    tr.appendChild(el("td", null, c.m || "-"));
    return tr;
  }
  function render() {
    var body = $("case-rows");
    var pages = Math.max(1, Math.ceil(view.length / state.size));
    state.page = Math.min(state.page, pages - 1);
    var lo = state.page * state.size, hi = Math.min(view.length, lo + state.size);
    var frag = document.createDocumentFragment();
    var cols = document.querySelectorAll("#case-table thead th").length;
    for (var p = lo; p < hi; p++) {
      var c = cases[view[p]];
      frag.appendChild(row(view[p], p));
      if (state.open[c.id]) { frag.appendChild(detail(c, cols)); }
    }
    body.replaceChildren(frag);
    $("shown").textContent = view.length ? "Showing " + fmt(lo + 1) + "–" + fmt(hi) + " of " + fmt(view.length) + " matching cases (" + fmt(cases.length) + " stored)" : "No case of " + fmt(cases.length) + " matches";
    $("p-page").textContent = "page " + fmt(state.page + 1) + " of " + fmt(pages);
    $("p-first").disabled = $("p-prev").disabled = state.page === 0;
    $("p-next").disabled = $("p-last").disabled = state.page >= pages - 1;
    document.querySelectorAll("#case-table th.sortable").forEach(function (th) {
      th.classList.remove("asc", "desc");
      if (th.getAttribute("data-sort") === state.sort && state.sort !== "default") { th.classList.add(state.dir > 0 ? "asc" : "desc"); }
    });
  }

  $("case-rows").addEventListener("click", function (ev) {
    var tr = ev.target.closest("tr.case");
    if (!tr) { return; }
    var id = tr.getAttribute("data-id");
    if (state.open[id]) { delete state.open[id]; } else { state.open[id] = true; }
    render();
  });
  document.querySelector("#case-table thead").addEventListener("click", function (ev) {
    var th = ev.target.closest("th.sortable");
    if (!th) { return; }
    var key = th.getAttribute("data-sort");
    state.dir = state.sort === key ? -state.dir : 1;
    state.sort = key;
    refilter();
  });
  vsel.addEventListener("change", function () { state.verdict = vsel.value; refilter(); });
  esel.addEventListener("change", function () { state.evaluator = esel.value; refilter(); });
  ssel.addEventListener("change", function () { state.size = parseInt(ssel.value, 10); render(); });
  var timer = 0;
  $("f-text").addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { state.text = $("f-text").value.trim(); refilter(); }, 150);
  });
  function go(page) { state.page = page; render(); }
  $("p-first").addEventListener("click", function () { go(0); });
  $("p-prev").addEventListener("click", function () { go(Math.max(0, state.page - 1)); });
  $("p-next").addEventListener("click", function () { go(state.page + 1); });
  $("p-last").addEventListener("click", function () { go(Math.ceil(view.length / state.size) - 1); });
  refilter();
  document.body.setAttribute("data-script-ms", String(Math.round(performance.now() - started)));
  document.body.setAttribute("data-ready", "true");
})();
