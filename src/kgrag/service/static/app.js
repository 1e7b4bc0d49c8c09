// kgrag web page: plain JS, no build step. Talks to the API of the same server (see kgrag/service/app.py).
"use strict";

const $ = (sel, root = document) => root.querySelector(sel);
// askedWith: the question the topic chips were last used for; editing it into another question clears them, so a
// chip picked for one question never silently steers the next
const state = { topics: [], methods: [], graphs: [], askedWith: null };
window.kgragGraphs = state.graphs; // the drawn graphs, one per result panel (the browser test reads them)

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  for (const child of children) node.append(child);
  return node;
}

async function getJSON(url, options) {
  const resp = await fetch(url, options);
  let body = null;
  try { body = await resp.json(); } catch (_) { /* not JSON */ }
  if (!resp.ok) throw new Error((body && body.error) || `HTTP ${resp.status}`);
  return body;
}

// ------------------------------------------------------------------ start-up: KG, LLM, methods
async function init() {
  try {
    const [health, kg, methods] = await Promise.all([getJSON("/health"), getJSON("/kg"), getJSON("/methods")]);
    const s = kg.stats;
    $("#kg-info").textContent = `${kg.name}: ${s.entities.toLocaleString()} entities · ${s.relations} relations · ` +
      `${s.triples.toLocaleString()} triples`;
    $("#kg-info").title = kg.schema.relations.map(r => `${r.name}: ${r.triples}`).join("\n");
    $("#question").placeholder = examplePrompt(s);
    $("#llm-info").textContent = `LLM ${health.llm.spec}${health.llm.loaded ? "" : " (loads on first question)"}`;
    state.methods = methods.methods;
    for (const select of [$("#method-a"), $("#method-b")]) {
      for (const m of methods.methods) {
        const option = el("option", { value: m.name, text: m.name + (m.needs_llm ? "" : " (no LLM)") });
        option.title = m.doc;
        select.append(option);
      }
    }
    $("#method-a").value = methods.default;
    const other = methods.methods.find(m => m.name !== methods.default && m.name !== "noop");
    $("#method-b").value = other ? other.name : methods.default;
  } catch (err) {
    showFormError(`cannot reach the service: ${err.message}`);
  }
}

// the question box's hint comes from this KG: its most frequent relation's example triple ("Kismet: directed by?")
function examplePrompt(stats) {
  const [relation, example] = Object.entries(stats.relation_examples || {})[0] || [];
  if (!relation) return "Ask about the KG";
  const words = relation.split(/[./]/).pop().replaceAll("_", " ");
  return `Ask about the KG, e.g. ${example.split(" → ")[0]}: ${words}?`;
}

function showFormError(message) {
  const box = $("#form-error");
  box.textContent = message || "";
  box.hidden = !message;
}

// ------------------------------------------------------------------ autocomplete
function debounce(fn, ms) {
  let timer = null;
  return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
}

function attachSuggestions(input, list, fetchSuggestions, onChoose) {
  let items = [];
  let active = -1;
  let seq = 0;
  const close = () => { list.hidden = true; items = []; active = -1; };
  const render = () => {
    list.replaceChildren(...items.map((item, i) => {
      const li = el("li", { role: "option", class: i === active ? "active" : "" },
        el("span", { text: item.name }), el("span", { class: "meta", text: `${item.match} · ${item.degree} links` }));
      li.addEventListener("mousedown", ev => { ev.preventDefault(); onChoose(item); close(); });
      return li;
    }));
    list.hidden = items.length === 0;
  };
  const update = debounce(async () => {
    const mine = ++seq;
    let found = [];
    try { found = await fetchSuggestions(input.value); } catch (_) { found = []; }
    if (mine !== seq) return; // a newer keystroke already asked
    items = found; active = -1; render();
  }, 120);
  input.addEventListener("input", update);
  input.addEventListener("blur", () => setTimeout(close, 100));
  input.addEventListener("keydown", ev => {
    if (list.hidden || !items.length) return;
    if (ev.key === "ArrowDown") { active = (active + 1) % items.length; render(); ev.preventDefault(); }
    else if (ev.key === "ArrowUp") { active = (active - 1 + items.length) % items.length; render(); ev.preventDefault(); }
    else if (ev.key === "Enter" && active >= 0) { onChoose(items[active]); close(); ev.preventDefault(); }
    else if (ev.key === "Escape") { close(); ev.preventDefault(); }
  });
}

let questionTailStart = 0;
attachSuggestions($("#question"), $("#question-suggestions"), async text => {
  const input = $("#question");
  if (input.selectionStart !== text.length || text.trim().length < 2) return [];
  const body = await getJSON(`/entities?tail=1&k=8&q=${encodeURIComponent(text)}`);
  questionTailStart = body.start;
  return body.entities;
}, item => {
  const input = $("#question");
  input.value = input.value.slice(0, questionTailStart) + item.name;
  addTopic(item.name);
  input.focus();
});

attachSuggestions($("#topic-input"), $("#topic-suggestions"), async text => {
  if (!text.trim()) return [];
  return (await getJSON(`/entities?k=8&q=${encodeURIComponent(text)}`)).entities;
}, item => { addTopic(item.name); $("#topic-input").value = ""; });

function addTopic(name) {
  if (!state.topics.includes(name)) state.topics.push(name);
  renderTopics();
}

function renderTopics() {
  $("#topic-chips").replaceChildren(...state.topics.map(name => {
    const remove = el("button", { type: "button", title: "remove", text: "×" });
    remove.addEventListener("click", () => { state.topics = state.topics.filter(t => t !== name); renderTopics(); });
    return el("span", { class: "chip" }, name, remove);
  }));
}

$("#compare").addEventListener("change", ev => { $("#method-b").disabled = !ev.target.checked; });
$("#question").addEventListener("input", () => {
  if (state.askedWith !== null && $("#question").value.trim() !== state.askedWith && state.topics.length) {
    state.topics = [];
    state.askedWith = null;
    renderTopics();
  }
});

// ------------------------------------------------------------------ panels
function newPanel(method) {
  const panel = $("#panel-template").content.firstElementChild.cloneNode(true);
  $(".panel-method", panel).textContent = method;
  for (const button of panel.querySelectorAll(".tabs button")) {
    button.addEventListener("click", () => {
      for (const b of panel.querySelectorAll(".tabs button")) b.classList.toggle("active", b === button);
      for (const tab of ["graph", "paths", "trace"]) $(`.${tab}-tab`, panel).hidden = tab !== button.dataset.tab;
      if (button.dataset.tab === "graph" && panel.cy) { panel.cy.resize(); panel.cy.fit(undefined, 30); }
    });
  }
  return panel;
}

function setStatus(panel, text, busy) {
  const status = $(".panel-status", panel);
  status.replaceChildren();
  if (busy) status.append(el("span", { class: "spinner" }), " ");
  status.append(text);
}

function showPanelError(panel, message) {
  const box = $(".panel-error", panel);
  box.textContent = message;
  box.hidden = false;
}

function shortJSON(value) {
  const text = JSON.stringify(value);
  return text.length > 400 ? text.slice(0, 400) + "…" : text;
}

function addTraceRow(panel, step) {
  const rows = $(".trace tbody", panel);
  rows.append(el("tr", {},
    el("td", { text: String(rows.children.length + 1) }), el("td", { text: step.name }),
    el("td", { text: step.seconds.toFixed(3) }), el("td", { text: String(step.llm_calls) }),
    el("td", { class: "outputs", text: shortJSON(step.outputs) })));
}

function renderUsage(panel, usage) {
  const calls = (usage.calls || []).map(c => `${c.prompt} (${c.prompt_tokens}+${c.completion_tokens} tok, ` +
    `${c.seconds.toFixed(2)} s${c.cached ? ", cached" : ""})`);
  $(".usage", panel).textContent = `${usage.llm_calls} LLM call(s) · ${usage.prompt_tokens}+${usage.completion_tokens} ` +
    `tokens · ${usage.seconds.toFixed(2)} s total` + (calls.length ? ` · ${calls.join("; ")}` : "");
}

// support: {answer: [triple ids]} of a method's answer (absent for retrieval); an answer missing from it has no
// support in the evidence and is shown greyed, after the supported ones (the server already orders them so).
// setAside: names the model gave from its own knowledge beside supported answers: greyed and struck through, last;
// doubtful: names it listed far less sure than its first answer (setting answer_spread): greyed, after the answers
function renderAnswers(panel, answers, note, support, confidence, setAside, doubtful) {
  const box = $(".answers", panel);
  box.replaceChildren();
  if (note) box.append(el("span", { class: "muted", text: note }));
  else if (!answers.length) box.append(el("span", { class: "muted", text: "(no answer)" }));
  for (const a of answers) {
    const supported = !support || Object.prototype.hasOwnProperty.call(support, a);
    const sure = confidence && confidence[a] != null ? confidence[a].toFixed(2) : "";
    const chip = el("span", { class: supported ? "answer" : "answer unsupported" }, a);
    if (sure) chip.append(el("span", { class: "confidence", text: sure }));
    chip.title = (supported ? "supported by the evidence (highlighted in the graph)" : "no support in the evidence") +
      (sure ? `; confidence ${sure}` : "");
    box.append(chip);
  }
  for (const a of doubtful || []) {
    const chip = el("span", { class: "answer unsupported doubtful" }, a);
    chip.title = "less sure: its confidence is far below the first answer's, so it is not counted as an answer";
    box.append(chip);
  }
  for (const a of setAside || []) {
    const chip = el("span", { class: "answer unsupported set-aside" }, a);
    chip.title = "set aside: the model named it without support while the evidence supported the answers before it";
    box.append(chip);
  }
}

function renderEvidence(panel, evidence) {
  const list = $(".evidence-list", panel);
  list.replaceChildren(...evidence.map(ev => el("li", {}, ev.text,
    el("span", { class: "score", text: ev.score == null ? "" : ev.score.toFixed(3) }),
    el("span", { class: "source", text: ev.source || "" }))));
  if (!evidence.length) list.append(el("li", { class: "muted", text: "no evidence" }));
}

// ------------------------------------------------------------------ evidence graph (cytoscape.js)
function graphElements(evidence, seen) {
  const out = [];
  const node = name => {
    const id = "n:" + name;
    if (!seen.has(id)) { seen.add(id); out.push({ group: "nodes", data: { id, label: name } }); }
    return id;
  };
  for (const ev of evidence) {
    const ents = ev.entities || [];
    const rels = ev.relations || [];
    if (rels.length && ents.length === rels.length + 1) {
      for (let i = 0; i < rels.length; i++) {
        let [a, b, rel] = [ents[i], ents[i + 1], rels[i]];
        if (rel.endsWith("_inv")) { [a, b, rel] = [b, a, rel.slice(0, -4)]; }
        const [src, dst] = [node(a), node(b)];
        const id = `e:${src}|${rel}|${dst}`;
        const triple = (ev.triples || [])[i];
        if (!seen.has(id)) { seen.add(id); out.push({ group: "edges", data: { id, source: src, target: dst, label: rel.replaceAll("_", " "), triple } }); }
      }
    } else {
      for (const name of ents) node(name);
    }
  }
  return out;
}

function drawGraph(panel, evidence, answers, topics, support) {
  // the triples of every answer's support chain (methods.support), drawn bold so the user sees why it holds
  const supportTriples = new Set(Object.values(support || {}).flat());
  const container = $(".graph", panel);
  const seen = new Set();
  const cy = cytoscape({
    container,
    elements: graphElements(evidence, seen),
    wheelSensitivity: 0.3,
    style: [
      { selector: "node", style: { label: "data(label)", "font-size": 10, "background-color": "#94a3b8", width: 14, height: 14,
        "text-valign": "bottom", "text-margin-y": 3, "text-wrap": "ellipsis", "text-max-width": 120 } },
      { selector: "node.answer", style: { "background-color": "#059669", width: 20, height: 20, "font-weight": "bold" } },
      { selector: "node.topic", style: { "background-color": "#d97706", width: 20, height: 20, "font-weight": "bold" } },
      { selector: "edge", style: { label: "data(label)", "font-size": 8, color: "#64748b", width: 1.2, "line-color": "#cbd5e1",
        "target-arrow-shape": "triangle", "target-arrow-color": "#cbd5e1", "curve-style": "bezier", "text-rotation": "autorotate" } },
      { selector: "edge.support", style: { width: 3, "line-color": "#059669", "target-arrow-color": "#059669", color: "#065f46" } },
    ],
  });
  const mark = () => {
    const answerSet = new Set(answers.map(a => a.toLowerCase()));
    const topicSet = new Set(topics.map(t => t.toLowerCase()));
    cy.nodes().forEach(n => {
      const label = n.data("label").toLowerCase();
      n.toggleClass("answer", answerSet.has(label));
      n.toggleClass("topic", topicSet.has(label));
    });
    cy.edges().forEach(e => e.toggleClass("support", supportTriples.has(e.data("triple"))));
  };
  const layout = () => cy.layout({ name: cy.nodes().length > 300 ? "concentric" : "cose", animate: false, padding: 20 }).run();
  mark();
  layout();
  const empty = $(".graph-empty", panel);
  if (empty) empty.hidden = cy.nodes().length > 0;
  cy.on("tap", "node", async ev => {
    const name = ev.target.data("label");
    try {
      const body = await getJSON(`/neighbors?limit=25&entity=${encodeURIComponent(name)}`);
      cy.add(graphElements(body.evidence, seen));
      mark();
      layout();
    } catch (err) { showPanelError(panel, err.message); }
  });
  panel.cy = cy;
  state.graphs[Number(panel.dataset.index)] = cy; // in panel order, whichever finishes first
  return cy;
}

function topicsFromTrace(trace, fallback) {
  for (const step of trace) {
    const ents = step.outputs && (step.outputs.entities || step.outputs.topics);
    if (step.name.includes("link") && Array.isArray(ents)) return ents.map(String).concat(fallback);
  }
  return fallback;
}

// ------------------------------------------------------------------ asking
async function streamAsk(panel, request) {
  const resp = await fetch("/ask/stream", {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(request),
  });
  if (!resp.ok) {
    let message = `HTTP ${resp.status}`;
    try { message = (await resp.json()).error || message; } catch (_) { /* keep the status */ }
    throw new Error(message);
  }
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const trace = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let event = "message";
      let data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) event = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      const payload = data ? JSON.parse(data) : {};
      if (event === "start") setStatus(panel, "running…", true);
      else if (event === "step") {
        trace.push(payload);
        addTraceRow(panel, payload);
        setStatus(panel, `${payload.name} done (${payload.seconds.toFixed(2)} s)…`, true);
      } else if (event === "answer") return payload;
      else if (event === "error") throw new Error(payload.error);
    }
  }
  throw new Error("the server closed the stream without an answer");
}

async function runPanel(panel, request, retrieveOnly) {
  setStatus(panel, retrieveOnly ? "retrieving…" : "starting…", true);
  try {
    if (retrieveOnly) {
      const body = await getJSON("/retrieve", {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(request),
      });
      body.trace.forEach(step => addTraceRow(panel, step));
      renderAnswers(panel, [], "retrieval only: no LLM call");
      renderEvidence(panel, body.evidence);
      drawGraph(panel, body.evidence, [], topicsFromTrace(body.trace, request.topic_entities));
      $(".usage", panel).textContent = `${body.evidence.length} evidence item(s) · ${body.seconds.toFixed(2)} s`;
      setStatus(panel, `${body.seconds.toFixed(2)} s`, false);
      return;
    }
    const answer = await streamAsk(panel, request);
    renderAnswers(panel, answer.answers, answer.abstained ? `(no answer: ${answer.abstained})` : "", answer.support,
      answer.confidence, answer.set_aside, answer.doubtful);
    if (answer.error) showPanelError(panel, answer.error);
    renderEvidence(panel, answer.evidence);
    drawGraph(panel, answer.evidence, answer.answers, topicsFromTrace(answer.trace, request.topic_entities), answer.support);
    renderUsage(panel, answer.usage);
    setStatus(panel, `${answer.usage.seconds.toFixed(2)} s · ${answer.usage.llm_calls} LLM call(s)` +
      (answer.grounded ? " · grounded" : ""), false);
  } catch (err) {
    setStatus(panel, "failed", false);
    showPanelError(panel, err.message);
  }
}

async function run(retrieveOnly) {
  showFormError("");
  const question = $("#question").value.trim();
  if (!question) { showFormError("type a question first"); return; }
  const methods = [$("#method-a").value];
  if ($("#compare").checked) methods.push($("#method-b").value);
  const results = $("#results");
  results.className = "results " + (methods.length > 1 ? "double" : "single");
  results.replaceChildren();
  for (const cy of state.graphs.splice(0)) if (cy) cy.destroy();
  const buttons = [$("#ask-button"), $("#retrieve-button")];
  buttons.forEach(b => { b.disabled = true; });
  try {
    await Promise.all(methods.map((method, index) => {
      const panel = newPanel(method);
      panel.dataset.index = String(index);
      results.append(panel);
      state.askedWith = question;
      return runPanel(panel, { question, method, topic_entities: [...state.topics] }, retrieveOnly);
    }));
  } finally {
    buttons.forEach(b => { b.disabled = false; });
  }
}

$("#ask-form").addEventListener("submit", ev => { ev.preventDefault(); run(false); });
$("#retrieve-button").addEventListener("click", () => run(true));
init();
