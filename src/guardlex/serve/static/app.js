// guardlex serve: the chat page. Plain JavaScript, no build step.
// POST /api/ask streams server-sent events; they are parsed here (EventSource cannot POST).
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const log = $("log"), form = $("ask"), question = $("question");
  const state = { ui: null, locale: null, conversation: null, controller: null };

  function t(key) { return (state.ui && state.ui.strings[key]) || key; }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  async function loadUi(locale) {
    const q = locale ? "?locale=" + encodeURIComponent(locale) : "";
    const r = await fetch("/api/ui" + q);
    const ui = await r.json();
    state.ui = ui; state.locale = ui.locale;
    document.documentElement.lang = ui.locale;
    document.documentElement.dir = ui.direction;
    document.title = t("title");
    $("title").textContent = t("title");
    $("intro").textContent = t("intro");
    $("language-label").textContent = t("language");
    $("operator-label").textContent = t("operator");
    $("send").textContent = t("ask");
    $("stop").textContent = t("stop");
    question.placeholder = t("placeholder");
    $("operator-toggle").hidden = !ui.operator;
    const sel = $("locale");
    sel.textContent = "";
    for (const l of ui.locales) {
      const o = el("option", "", l.name);
      o.value = l.code; o.selected = l.code === ui.locale;
      sel.appendChild(o);
    }
  }

  function parseEvents(buffer, onEvent) {
    // returns the unparsed rest
    let idx;
    while ((idx = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, idx); buffer = buffer.slice(idx + 2);
      let name = "message", data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data += line.slice(5).trim();
      }
      if (data) onEvent(name, JSON.parse(data));
    }
    return buffer;
  }

  function operatorText(op) {
    const lines = [];
    const add = (k, v) => { if (v !== undefined && v !== null && v !== "") lines.push(t(k) + ": " + v); };
    add("route", op.route); add("rule", op.rule_id); add("category", op.category);
    if (op.about) lines.push("about: " + op.about);
    if (op.evidence && !(Array.isArray(op.evidence) && !op.evidence.length)) add("evidence", typeof op.evidence === "string" ? op.evidence : JSON.stringify(op.evidence));
    if (op.trace) add("trace", op.trace.join(" "));
    add("cost", op.cost_tokens);
    return lines.join("\n");
  }

  async function ask(text) {
    const turn = el("div", "turn");
    const q = el("div", "question"); q.dir = "auto";
    q.appendChild(el("span", "who", t("you")));
    q.appendChild(document.createTextNode(text));
    const a = el("div", "answer"); a.dataset.state = "streaming";
    a.appendChild(el("span", "who", t("assistant")));
    const body = el("div", "body");
    const waiting = el("span", "waiting", t("waiting"));
    body.appendChild(waiting);
    const sources = el("ol", "sources");
    const op = el("div", "operator");
    a.appendChild(body); a.appendChild(sources);
    turn.appendChild(q); turn.appendChild(a); turn.appendChild(op);
    log.appendChild(turn);
    turn.scrollIntoView({ block: "end" });
    const listed = new Map();
    const operator = {};
    const notice = (cls, msg) => { waiting.remove(); body.appendChild(el("span", "notice " + cls, msg)); };

    function cite(span, src) {
      const sup = el("span", "cite");
      const link = el("a", "", "[" + src.n + "]");
      link.href = src.url || "#src-" + src.n;
      link.title = src.title || "";
      if (src.url) { link.target = "_blank"; link.rel = "noopener noreferrer"; }
      sup.appendChild(link); span.appendChild(sup);
      if (!listed.has(src.n)) {
        const li = el("li"); li.id = "src-" + src.n; li.value = src.n;
        const ref = src.url ? el("a", "", src.title) : el("span", "", src.title);
        if (src.url) { ref.href = src.url; ref.target = "_blank"; ref.rel = "noopener noreferrer"; }
        li.appendChild(ref); sources.appendChild(li); listed.set(src.n, li);
      }
    }

    function onEvent(name, d) {
      if (name === "route") {
        a.dir = d.direction || "auto"; a.lang = d.locale || "";
        state.conversation = d.conversation;
        Object.assign(operator, d);
      } else if (name === "sentence") {
        waiting.remove();
        const span = el("span", "sentence new", d.text);
        for (const s of d.sources || []) cite(span, s);
        body.appendChild(span);
        setTimeout(() => span.classList.remove("new"), 700);
      } else if (name === "stop") { notice("stop", d.message); a.dataset.reason = d.reason || ""; }
      else if (name === "truncated") notice("truncated", d.message);
      else if (name === "refused") notice("refused", d.message);
      else if (name === "message") { notice("message", d.message); a.dataset.code = d.code || ""; }
      else if (name === "error") notice("error", d.message || t("failed"));
      else if (name === "done") {
        Object.assign(operator, d);
        a.dataset.code = d.code; a.dataset.state = "done";
        a.dir = d.direction || a.dir;
        state.conversation = d.conversation;
      }
      op.textContent = operatorText(operator);
    }

    const controller = new AbortController();
    state.controller = controller;
    $("stop").hidden = false;
    try {
      const r = await fetch("/api/ask", {
        method: "POST", signal: controller.signal,
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ question: text, locale: state.locale, conversation: state.conversation }),
      });
      if (!r.ok) {
        let msg = t("failed");
        try { const e = await r.json(); msg = (e.error && e.error.message) || msg; a.dataset.code = e.error && e.error.code; } catch (e) { /* not JSON */ }
        notice(r.status === 429 ? "message" : "error", msg);
        a.dataset.state = "done";
        return;
      }
      const reader = r.body.getReader();
      const dec = new TextDecoder();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf = parseEvents(buf + dec.decode(value, { stream: true }), onEvent);
      }
    } catch (e) {
      if (e.name !== "AbortError") notice("error", t("failed"));
      a.dataset.state = "done";
    } finally {
      $("stop").hidden = true;
      state.controller = null;
    }
  }

  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const text = question.value.trim();
    if (!text || state.controller) return;
    question.value = "";
    ask(text);
  });
  question.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); form.requestSubmit(); }
  });
  $("stop").addEventListener("click", () => { if (state.controller) state.controller.abort(); });
  $("operator").addEventListener("change", (ev) => {
    document.body.classList.toggle("show-operator", ev.target.checked);
  });
  $("locale").addEventListener("change", (ev) => {
    const url = new URL(location.href); url.searchParams.set("locale", ev.target.value);
    history.replaceState(null, "", url); state.conversation = null; loadUi(ev.target.value);
  });
  const params = new URLSearchParams(location.search);
  if (params.get("operator") === "1") { $("operator").checked = true; document.body.classList.add("show-operator"); }
  loadUi(params.get("locale") || "").then(() => { document.body.dataset.ready = "1"; });
})();
