// The designer's catalog (issue #17): find, understand, connect, try and pin tools. Plain
// JavaScript, no build step, no request outside this server. Its data comes from the protocol
// endpoints themselves (N-ACT listing, signatures, versions, invocation) and from /ui/api for
// what no protocol says alone (counts, diffs, per-protocol listings, exports).
"use strict";

const state = { selected: new Map(), cursor: null, query: { q: "", tag: "" }, nact: null };
const view = () => document.getElementById("view");

function credential() {
  return sessionStorage.getItem("toolhost-credential") || "";
}

function authorization() {
  const secret = credential();
  if (!secret) return {};
  return { authorization: secret.startsWith("Bearer ") ? secret : `Bearer ${secret}` };
}

async function api(path, options = {}) {
  const headers = Object.assign({ accept: "application/json" }, options.headers || {}, authorization());
  const response = await fetch(path, Object.assign({}, options, { headers }));
  let body = null;
  try {
    body = await response.json();
  } catch (_) {
    body = null;
  }
  return { status: response.status, ok: response.ok, body };
}

function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === "on") for (const [event, handler] of Object.entries(value)) node.addEventListener(event, handler);
    else if (value !== undefined && value !== null && value !== false) node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function copyButton(text, label) {
  return el("button", { type: "button", class: "secondary", "aria-label": label || "Copy", on: { click: () => navigator.clipboard && navigator.clipboard.writeText(text()) } }, "Copy");
}

function problem(result) {
  const body = result.body || {};
  return body.detail || body.message || `HTTP ${result.status}`;
}

function authProblem(result) {
  if (result.status === 401 || result.status === 403) {
    return el("p", { class: "error", role: "alert" }, `${problem(result)} — enter an API key or bearer token under Credentials.`);
  }
  return el("p", { class: "error", role: "alert" }, problem(result));
}

// ---- Find ----------------------------------------------------------------------------------

async function listView() {
  const summary = await api("api/summary");
  const main = view();
  main.replaceChildren();
  if (!summary.ok) return main.append(authProblem(summary));
  const s = summary.body;
  state.nact = s.paths.nact;
  const search = el("input", { id: "search", type: "search", value: state.query.q, placeholder: "what you want to do, or a name (ranked by relevance)" });
  const toolkit = el("select", { id: "toolkit" }, el("option", { value: "" }, "All toolkits"), s.toolkits.map((t) => el("option", { value: t.name, selected: state.query.tag === t.name }, `${t.name} (${t.tools})`)));
  const tag = el("select", { id: "tag" }, el("option", { value: "" }, "All tags"), s.tags.map((t) => el("option", { value: t, selected: state.query.tag === t }, t)));
  const form = el("form", { class: "filters", role: "search", on: { submit: (e) => { e.preventDefault(); state.query = { q: search.value.trim(), tag: tag.value || toolkit.value }; state.cursor = null; renderRows(true); } } },
    el("div", {}, el("label", { for: "search" }, "Search tools"), search),
    el("div", {}, el("label", { for: "toolkit" }, "Toolkit"), toolkit),
    el("div", {}, el("label", { for: "tag" }, "Tag"), tag),
    el("div", {}, el("button", { type: "submit" }, "Search")));
  toolkit.addEventListener("change", () => { tag.value = ""; form.requestSubmit(); });
  tag.addEventListener("change", () => { toolkit.value = ""; form.requestSubmit(); });
  main.append(
    el("h2", {}, "Tools"),
    el("p", { class: "count", id: "count" }, `${s.tools} tools in ${s.toolkits.length} toolkits`),
    designPanel(s.design),
    offNact(s.off_nact || []),
    form,
    el("table", { class: "tools" }, el("caption", { class: "count" }, "Select tools to export or pin them"),
      el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Select"), el("th", { scope: "col" }, "Tool"), el("th", { scope: "col" }, "Version"), el("th", { scope: "col", class: "desc" }, "Description"))),
      el("tbody", { id: "rows" })),
    el("p", {}, el("button", { type: "button", id: "more", class: "secondary", hidden: true, on: { click: () => renderRows(false) } }, "Show more")),
    exportPanel());
  await renderRows(true);
}

// Design mode (`serve --dev`, issue #41.3): which tools have changes no version lock holds yet.
function designPanel(design) {
  if (!design) return el("span", {});
  const names = design.unpublished || [];
  if (!names.length) return el("p", { class: "panel", id: "design" }, "Design mode: every tool is published (versions.lock holds them).");
  return el("details", { class: "panel", id: "design", open: true },
    el("summary", {}, `Design mode: ${names.length} ${names.length === 1 ? "tool has" : "tools have"} unpublished changes`),
    el("ul", {}, names.map((n) => el("li", {}, el("code", {}, n)))),
    el("p", {}, "Publish with ", el("code", {}, "toolhost check --lock CATALOG"), "; a version changed since it was locked needs a new version number first."));
}

// Tools whose current version N-ACT cannot show (issue #38.2): named, with why, since the list
// below is N-ACT's.
function offNact(tools) {
  if (!tools.length) return el("span", {});
  return el("details", { class: "panel", id: "off-nact" },
    el("summary", {}, `${tools.length} more ${tools.length === 1 ? "tool is" : "tools are"} served over MCP, OTC and WoA only, not N-ACT`),
    el("ul", {}, tools.map((t) => el("li", {}, el("code", {}, t.name), `: not on N-ACT because ${t.reason}.`))));
}

async function renderRows(fresh) {
  const params = new URLSearchParams({ pageLimit: "50" });
  if (state.query.q) params.set("q", state.query.q);
  if (state.query.tag) params.set("tag", state.query.tag);
  if (!fresh && state.cursor) params.set("pageCursor", state.cursor);
  const page = await api(`${state.nact}/tools?${params}`);
  const rows = document.getElementById("rows");
  if (!rows) return;
  if (fresh) rows.replaceChildren();
  if (!page.ok) return rows.append(el("tr", {}, el("td", { colspan: 4 }, authProblem(page))));
  for (const tool of page.body.items) {
    const id = `select-${tool.name}`;
    const box = el("input", { type: "checkbox", id, "aria-label": `Select ${tool.name}`, checked: state.selected.has(tool.name), on: { change: (e) => { if (e.target.checked) state.selected.set(tool.name, tool.semver || String(tool.version)); else state.selected.delete(tool.name); updateSelection(); } } });
    rows.append(el("tr", {},
      el("td", {}, box),
      el("td", {}, el("a", { href: `#/tool/${encodeURIComponent(tool.name)}` }, tool.name), " ", (tool.tags || []).slice(0, 1).map((t) => el("span", { class: "tag" }, t))),
      el("td", {}, tool.semver || tool.version),
      el("td", { class: "desc" }, tool.description)));
  }
  if (fresh && page.body.items.length === 0) rows.append(el("tr", {}, el("td", { colspan: 4 }, "No tool matches.")));
  state.cursor = page.body.paging && page.body.paging.next;
  document.getElementById("more").hidden = !state.cursor;
}

// ---- Export and pin ------------------------------------------------------------------------

function exportPanel() {
  const output = el("pre", { id: "export-output", tabindex: "0", "aria-label": "Exported JSON" });
  const formats = [["openai", "OpenAI"], ["anthropic", "Anthropic"], ["mcp-json", "MCP JSON"], ["lock", "Lockfile"]];
  return el("section", { class: "panel", "aria-labelledby": "export-title" },
    el("h3", { id: "export-title" }, "Export the selection"),
    el("p", { id: "selection" }, "No tool selected."),
    el("div", { class: "row" }, formats.map(([format, label]) => el("button", { type: "button", id: `export-${format}`, on: { click: () => exportSelection(format, output) } }, label)), copyButton(() => output.textContent, "Copy the export")),
    output);
}

function updateSelection() {
  const node = document.getElementById("selection");
  if (!node) return;
  const list = [...state.selected].map(([name, version]) => `${name}@${version}`);
  node.textContent = list.length ? `Selected: ${list.join(", ")}` : "No tool selected.";
}

async function exportSelection(format, output) {
  const tools = [...state.selected].map(([name, version]) => `${name}@${version}`).join(",");
  if (!tools) { output.textContent = "Select tools first."; return; }
  const result = await api(`api/export?${new URLSearchParams({ format, tools })}`);
  output.textContent = result.ok ? JSON.stringify(result.body, null, 2) : problem(result);
}

// ---- Understand, connect, try --------------------------------------------------------------

async function toolView(name) {
  const main = view();
  main.replaceChildren(el("p", {}, "Loading…"));
  if (!state.nact) {
    const summary = await api("api/summary");
    if (!summary.ok) return main.replaceChildren(authProblem(summary));
    state.nact = summary.body.paths.nact;
  }
  const [about, versions] = await Promise.all([api(`api/tools/${encodeURIComponent(name)}`), api(`${state.nact}/tools/${encodeURIComponent(name)}/versions?pageLimit=100`)]);
  main.replaceChildren();
  if (!about.ok) return main.append(authProblem(about));
  const tool = about.body;
  const history = versions.ok ? versions.body.items : [];
  const current = history[0];
  main.append(
    el("p", {}, el("a", { href: "#/" }, "← All tools")),
    el("h2", {}, tool.title ? `${tool.title} (${tool.name})` : tool.name),
    el("p", {}, current ? current.description : ""),
    el("p", {}, "Toolkit ", el("span", { class: "tag" }, tool.toolkit), " tags ", (tool.tags || []).map((t) => el("span", { class: "tag" }, t))),
    annotations(tool),
    signatureSection(current),
    versionsSection(name, history),
    connectSection(tool),
    trySection(name, history));
  main.focus();
}

function annotations(tool) {
  const a = tool.annotations || {};
  const parts = Object.entries(a).filter(([, v]) => v !== null).map(([k, v]) => `${k.replace("_", " ")}: ${v ? "yes" : "no"}`);
  const r = tool.requirements || {};
  const needs = [].concat((r.secrets || []).map((s) => `secret ${s}`), (r.authorization || []).map((p) => `token of ${p}`), r.user_id ? ["the user's id"] : []);
  return el("section", {}, el("h3", {}, "Behaviour and requirements"),
    el("p", {}, parts.length ? parts.join(" · ") : "No behaviour hints."),
    el("p", {}, needs.length ? `A call needs: ${needs.join(", ")}.` : "A call needs nothing beside its input."));
}

function constraints(p) {
  const out = [];
  if (p.format) out.push(`format ${p.format}`);
  if (p.min !== undefined) out.push(`min ${p.min}`);
  if (p.max !== undefined) out.push(`max ${p.max}`);
  if (p["max-length"] !== undefined) out.push(`at most ${p["max-length"]} characters`);
  if (p.pattern) out.push(`matches ${p.pattern}`);
  if (p["allowed-values"]) out.push(`one of ${p["allowed-values"].map((v) => v.name).join(", ")}`);
  return out.join("; ");
}

function signatureSection(signature) {
  if (!signature) return el("p", {}, "No signature.");
  const inputs = signature.input_parameters || [];
  const outputs = signature.output_parameters || [];
  return el("section", {}, el("h3", {}, `Signature (version ${signature.semver || signature.version})`),
    el("table", {}, el("caption", {}, "Inputs"), el("thead", {}, el("tr", {}, ["Name", "Type", "Required", "Constraints", "Description"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, inputs.length ? inputs.map((p) => el("tr", {}, el("td", {}, p.name), el("td", {}, p.type), el("td", {}, p.required ? "yes" : "no"), el("td", {}, constraints(p)), el("td", {}, p.description))) : el("tr", {}, el("td", { colspan: 5 }, "None")))),
    el("table", {}, el("caption", {}, "Outputs"), el("thead", {}, el("tr", {}, ["Name", "Type", "Always", "Description"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, outputs.length ? outputs.map((o) => el("tr", {}, el("td", {}, o.name), el("td", {}, o.type), el("td", {}, o.required ? "yes" : "no"), el("td", {}, o.description))) : el("tr", {}, el("td", { colspan: 4 }, "Returns nothing")))));
}

function versionsSection(name, history) {
  const options = (selected) => history.map((v) => el("option", { value: v.version, selected: v.version === selected }, `${v.semver || v.version} (#${v.version})`));
  const from = el("select", { id: "diff-from" }, options(history.length > 1 ? history[history.length - 1].version : undefined));
  const to = el("select", { id: "diff-to" }, options(history.length ? history[0].version : undefined));
  const out = el("div", { id: "diff", "aria-live": "polite" });
  const compare = async () => {
    const result = await api(`api/tools/${encodeURIComponent(name)}/diff?${new URLSearchParams({ from: from.value, to: to.value })}`);
    if (!result.ok) return out.replaceChildren(el("p", { class: "error" }, problem(result)));
    const d = result.body;
    const items = [].concat(d.breaking.map((t) => el("li", { class: "breaking" }, `breaking: ${t}`)), d.changes.map((t) => el("li", {}, t)));
    out.replaceChildren(el("p", {}, `${d.from} → ${d.to}: ${d.breaking.length ? "would break callers of the older version" : "compatible"}`), el("ul", { class: "diff" }, items.length ? items : el("li", {}, "No difference in the signature.")));
  };
  const pin = el("select", { id: "pin-version" }, options(history.length ? history[0].version : undefined));
  const pinned = el("span", { id: "pinned", "aria-live": "polite" });
  const choose = () => {
    const chosen = history.find((v) => String(v.version) === pin.value);
    if (!chosen) return;
    state.selected.set(name, chosen.semver || String(chosen.version));
    pinned.textContent = `${name}@${chosen.semver || chosen.version} is in the selection to export or pin.`;
  };
  return el("section", {}, el("h3", {}, "Versions"),
    el("ul", {}, history.map((v) => el("li", {}, `${v.semver || v.version} (#${v.version})`))),
    el("div", { class: "row" }, el("div", {}, el("label", { for: "pin-version" }, "Version to select"), pin), el("button", { type: "button", id: "pin", on: { click: choose } }, "Add to the selection"), pinned),
    el("div", { class: "row" }, el("div", {}, el("label", { for: "diff-from" }, "From"), from), el("div", {}, el("label", { for: "diff-to" }, "To"), to), el("button", { type: "button", id: "compare", on: { click: compare } }, "Compare")),
    out);
}

function connectSection(tool) {
  const rows = tool.connect.map((c) => {
    const json = JSON.stringify(c.listing, null, 2);
    return el("details", { class: "panel" }, el("summary", {}, c.protocol),
      el("dl", {}, Object.entries(c.reach).map(([k, v]) => [el("dt", {}, k), el("dd", {}, el("code", {}, v), " ", copyButton(() => v, `Copy ${c.protocol} ${k}`))])),
      el("p", {}, `What ${c.protocol} lists for this tool:`), el("pre", { tabindex: "0" }, json), copyButton(() => json, `Copy the ${c.protocol} JSON`));
  });
  return el("section", {}, el("h3", {}, "Connect"), rows);
}

function control(p) {
  const id = `input-${p.name}`;
  const described = `${id}-help`;
  let input;
  if (p.type === "enum") input = el("select", { id, name: p.name, "aria-describedby": described }, el("option", { value: "" }, p.required ? "Choose…" : "(none)"), (p["allowed-values"] || []).map((v) => el("option", { value: v.name }, `${v.name} — ${v.description}`)));
  else if (p.type === "boolean") input = el("select", { id, name: p.name, "aria-describedby": described }, el("option", { value: "" }, "(none)"), el("option", { value: "true" }, "true"), el("option", { value: "false" }, "false"));
  else if (p.type === "int" || p.type === "number") input = el("input", { id, name: p.name, type: "text", inputmode: "decimal", "aria-describedby": described });
  else input = el("input", { id, name: p.name, type: "text", "aria-describedby": described });
  return el("div", {}, el("label", { for: id }, `${p.name}${p.required ? " (required)" : ""}`), input,
    el("div", { id: described, class: "count" }, [p.type, constraints(p)].filter(Boolean).join(" · ")),
    el("div", { id: `${id}-error`, class: "field-error", role: "alert" }));
}

function trySection(name, history) {
  const current = history[0];
  if (!current) return null;
  const inputs = current.input_parameters || [];
  const out = el("div", { id: "try-result", "aria-live": "polite" });
  const form = el("form", { id: "try", on: { submit: async (e) => {
    e.preventDefault();
    for (const p of inputs) document.getElementById(`input-${p.name}-error`).textContent = "";
    const pairs = [];
    for (const p of inputs) {
      const raw = form.elements[p.name].value;
      if (raw === "") continue;
      let value = raw;
      if (p.type === "int" || p.type === "number") value = Number.isNaN(Number(raw)) ? raw : Number(raw);
      if (p.type === "boolean") value = raw === "true";
      pairs.push({ name: p.name, value });
    }
    const started = performance.now();
    const result = await api(`${state.nact}/tools/${encodeURIComponent(name)}/versions/${current.version}:invoke`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ input_parameters: pairs }) });
    const took = `${Math.round(performance.now() - started)} ms`;
    if (result.ok) {
      out.replaceChildren(el("p", { class: "ok" }, `Result in ${took}:`), el("pre", { id: "try-output", tabindex: "0" }, JSON.stringify(result.body.output_parameters, null, 2)));
      return;
    }
    const body = result.body || {};
    for (const [field, message] of Object.entries(body.errors || {})) {
      const slot = document.getElementById(`input-${field}-error`);
      if (slot) slot.textContent = message;
    }
    out.replaceChildren(el("p", { class: "error", role: "alert" }, `HTTP ${result.status} in ${took}: ${problem(result)}`),
      body.prompt ? el("p", {}, "What the model is told: ", el("q", {}, body.prompt)) : null);
  } } }, inputs.map(control), el("p", {}, el("button", { type: "submit", id: "try-submit" }, `Call ${name}`)));
  return el("section", {}, el("h3", {}, `Try it (version ${current.semver || current.version}, over N-ACT)`), form, out);
}

// ---- Agents (issue #33): the designer's selections and procedures ----------------------------

// Inline Markdown: `code` spans, and calls such as look_up() marked (linked when the agent
// selects that tool). Text only: nothing from the file becomes HTML.
function inline(text, tools) {
  const out = [];
  for (const [i, part] of text.split("`").entries()) {
    if (i % 2 === 1) { out.push(el("code", {}, part)); continue; }
    let last = 0;
    for (const m of part.matchAll(/([A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)?)\(\)/g)) {
      out.push(part.slice(last, m.index));
      const name = m[1].split(".").pop();
      const call = el("code", { class: "call" }, `${m[1]}()`);
      out.push(tools.has(name) ? el("a", { href: `#/tool/${encodeURIComponent(name)}` }, call) : call);
      last = m.index + m[0].length;
    }
    out.push(part.slice(last));
  }
  return out;
}

// The procedure's Markdown as DOM nodes: headings, bulleted lists, paragraphs.
function procedure(text, tools) {
  const root = el("div", { class: "procedure", id: "procedure" });
  let list = null;
  let paragraph = null;
  for (const raw of text.split("\n")) {
    const line = raw.trimEnd();
    const heading = line.match(/^(#{1,6})\s+(.*)$/);
    const item = line.match(/^\s*[-*]\s+(.*)$/);
    if (!line.trim()) { list = null; paragraph = null; continue; }
    if (heading) {
      list = null; paragraph = null;
      root.append(el(`h${Math.min(heading[1].length + 2, 6)}`, {}, inline(heading[2], tools)));
    } else if (item) {
      paragraph = null;
      if (!list) { list = el("ul"); root.append(list); }
      list.append(el("li", {}, inline(item[1], tools)));
    } else if (list && /^\s/.test(line)) {
      list.lastChild.append(" ", ...inline(line.trim(), tools));
    } else {
      list = null;
      if (!paragraph) { paragraph = el("p"); root.append(paragraph); } else paragraph.append(" ");
      paragraph.append(...inline(line.trim(), tools));
    }
  }
  return root;
}

async function agentsView() {
  const main = view();
  main.replaceChildren(el("p", {}, "Loading…"));
  const result = await api("/agents");
  main.replaceChildren();
  if (!result.ok) return main.append(authProblem(result));
  const agents = result.body.agents;
  main.append(el("h2", {}, "Agents"),
    el("p", { class: "count", id: "agent-count" }, `${agents.length} agents`),
    el("table", { class: "agents" }, el("caption", { class: "count" }, "Each agent's tools, at the versions its procedure was written against"),
      el("thead", {}, el("tr", {}, ["Agent", "Tools", "Description"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", { id: "agent-rows" }, agents.length ? agents.map((a) => el("tr", {},
        el("td", {}, el("a", { href: `#/agent/${encodeURIComponent(a.name)}` }, a.name)),
        el("td", {}, a.tools.map((t) => el("span", { class: "tag" }, `${t.name}@${t.version}${t.pinned ? " (pinned)" : ""}`))),
        el("td", {}, a.description))) : el("tr", {}, el("td", { colspan: 3 }, "No agent is served to you. Add agents/*.md beside the catalog, or build one below.")))),
    newAgentPanel());
  main.focus();
}

async function agentView(name) {
  const main = view();
  main.replaceChildren(el("p", {}, "Loading…"));
  const result = await api(`/agents/${encodeURIComponent(name)}`);
  main.replaceChildren();
  if (!result.ok) return main.append(el("p", {}, el("a", { href: "#/agents" }, "← All agents")), authProblem(result));
  const a = result.body;
  const selected = new Set(a.tools.map((t) => t.name));
  const findings = a.findings.length
    ? el("ul", { id: "findings" }, a.findings.map((f) => el("li", { class: "warning" }, `${f.severity}: ${f.field}: ${f.message}`)))
    : el("p", { id: "findings" }, "The check found nothing to change.");
  main.append(
    el("p", {}, el("a", { href: "#/agents" }, "← All agents")),
    el("h2", {}, a.name),
    el("p", {}, a.description),
    el("section", {}, el("h3", {}, "Tools"),
      el("table", { id: "agent-tools" }, el("thead", {}, el("tr", {}, ["Tool", "Version", "How the procedure uses it"].map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, a.tools.map((t) => el("tr", {},
          el("td", {}, el("a", { href: `#/tool/${encodeURIComponent(t.name)}` }, t.name)),
          el("td", {}, t.pinned ? `${t.version} (pinned)` : `${t.version} (latest)`),
          el("td", {}, t.uses.length ? el("ul", {}, t.uses.map((u) => el("li", {}, inline(u, selected)))) : el("span", { class: "error" }, "never called"))))))),
    el("section", {}, el("h3", {}, "Check"), findings),
    el("section", {}, el("h3", {}, "Procedure"), procedure(a.procedure, selected)),
    el("section", {}, el("h3", {}, "Connect"), el("dl", { id: "agent-endpoints" }, Object.entries(a.endpoints).flatMap(([k, v]) => [el("dt", {}, k === "nact" ? "N-ACT" : k.toUpperCase()), el("dd", {}, el("code", {}, v), " ", copyButton(() => v, `Copy the ${k} endpoint`))]))),
    a.handoffs.length ? el("section", {}, el("h3", {}, "Hands over to"), el("ul", {}, a.handoffs.map((h) => el("li", {}, el("a", { href: `#/agent/${encodeURIComponent(h.name)}` }, h.name), ` — ${h.description}`)))) : null);
  main.focus();
}

function newAgentPanel() {
  const name = el("input", { id: "agent-name", type: "text", placeholder: "refills", autocomplete: "off" });
  const description = el("input", { id: "agent-description", type: "text", placeholder: "What the agent is for" });
  const out = el("pre", { id: "agent-file", tabindex: "0", "aria-label": "The agent file" });
  const link = el("a", { id: "agent-download", hidden: true }, "Download the agent file");
  const selection = [...state.selected].map(([n, v]) => `${n}@${v}`);
  const build = async (e) => {
    e.preventDefault();
    const tools = [...state.selected].map(([n, v]) => `${n}@${v}`).join(",");
    if (!tools) { out.textContent = "Select tools on the Tools page first."; return; }
    const params = new URLSearchParams({ name: name.value.trim(), description: description.value.trim(), tools });
    const response = await fetch(`api/agent-file?${params}`, { headers: authorization() });
    if (!response.ok) {
      let body = {};
      try { body = await response.json(); } catch (_) { body = {}; }
      out.textContent = body.detail || `HTTP ${response.status}`;
      link.hidden = true;
      return;
    }
    const text = await response.text();
    out.textContent = text;
    if (link.href) URL.revokeObjectURL(link.href);
    link.href = URL.createObjectURL(new Blob([text], { type: "text/markdown" }));
    link.download = `${name.value.trim()}.md`;
    link.hidden = false;
    link.click();
  };
  return el("section", { class: "panel", "aria-labelledby": "new-agent-title" },
    el("h3", { id: "new-agent-title" }, "New agent from the selection"),
    el("p", { id: "agent-selection" }, selection.length ? `Tools: ${selection.join(", ")}` : "Select tools (and versions) on the Tools page first."),
    el("form", { id: "new-agent", on: { submit: build } },
      el("div", {}, el("label", { for: "agent-name" }, "Name"), name),
      el("div", {}, el("label", { for: "agent-description" }, "Description"), description),
      el("p", {}, el("button", { type: "submit", id: "agent-build" }, "Download the agent file"))),
    el("p", {}, "Put the file in the catalog's agents/ folder, write the procedure, and run toolhost check."),
    link, out);
}

// ---- Routing -------------------------------------------------------------------------------

function route() {
  const hash = location.hash || "#/";
  const tool = hash.match(/^#\/tool\/(.+)$/);
  const agent = hash.match(/^#\/agent\/(.+)$/);
  const shown = tool ? toolView(decodeURIComponent(tool[1]))
    : agent ? agentView(decodeURIComponent(agent[1]))
    : hash === "#/agents" ? agentsView()
    : listView();
  shown.catch((e) => view().replaceChildren(el("p", { class: "error" }, String(e))));
}

document.addEventListener("DOMContentLoaded", () => {
  const input = document.getElementById("credential");
  document.getElementById("credentials-form").addEventListener("submit", (e) => { e.preventDefault(); sessionStorage.setItem("toolhost-credential", input.value.trim()); input.value = ""; route(); });
  document.getElementById("forget").addEventListener("click", () => { sessionStorage.removeItem("toolhost-credential"); route(); });
  window.addEventListener("hashchange", route);
  route();
});
