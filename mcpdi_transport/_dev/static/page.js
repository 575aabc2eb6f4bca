// The page: lists what the server offers, calls it in the chosen era, answers its questions.

import { drawGraph } from "/static/graph.js";
import { element, renderFields } from "/static/form.js";
import { Peer, RpcError, paramHeaders } from "/static/mcp.js";

const $ = (id) => document.getElementById(id);
const STATUS_EVERY_MS = 1500;
const TOKEN_KEY = "mcpdi-dev-token";  // kept for this tab only, so a reload keeps it
let progressTokens = 0;

let peer = null;
let version = null;
let selected = null;
let traffic = null;  // the messages of the call in progress or the last one; listing is not recorded

function era() {
  return document.querySelector('input[name="era"]:checked').value;
}

function say(text, bad = false) {
  $("status").textContent = text;
  $("status").classList.toggle("bad", bad);
}

function json(value) {
  return element("pre", { class: "json", text: JSON.stringify(value, null, 2) });
}

function roots() {
  return $("roots").value.split("\n").map((line) => line.trim()).filter(Boolean).map((uri) => ({ uri }));
}

function showRoots() {
  $("roots-preview").replaceChildren(...roots().map((root) => element("li", { text: root.uri })));
}

// The headers every request carries: the bearer token and the person's own headers.
function credentials() {
  const headers = {};
  for (const line of $("headers").value.split("\n")) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  const token = $("token").value.trim();
  if (token) headers.Authorization = `Bearer ${token}`;
  return headers;
}

function logRound(text) {
  $("rounds-section").hidden = false;
  $("rounds").append(element("li", { text }));
}

function newPeer() {
  peer = new Peer(era(), {
    traffic: (direction, message) => {
      if (traffic === null) return;
      traffic.push({ direction, message });
      $("raw-log").textContent = traffic.map((t) => `${t.direction === "sent" ? "→" : "←"} ${JSON.stringify(t.message)}`).join("\n");
    },
    round: (entry) => {
      if (entry.kind === "input_required") logRound(`Round ${entry.round}: ${entry.method} needs input (${entry.keys.join(", ")})`);
      else if (entry.kind === "complete") logRound(`Round ${entry.round}: ${entry.method} complete`);
    },
    ask: answer,
    credentials,
    progress: (params) => {
      const total = params.total === undefined || params.total === null ? "" : `/${params.total}`;
      logRound(`Progress ${params.progress}${total}${params.message ? ": " + params.message : ""}`);
    },
  });
}

// A server question, answered by the person through the asking panel (or, for roots, by the list).
function answer(request, round) {
  const where = peer.era === "2026-07-28" ? `Round ${round}` : "During the call";
  if (request.method === "ping") return Promise.resolve({});
  if (request.method === "roots/list") {
    const list = roots();
    logRound(`${where}: roots/list answered with ${list.length} root(s)`);
    return Promise.resolve({ roots: list });
  }
  if (request.method === "elicitation/create") return askElicitation(request.params, where);
  if (request.method === "sampling/createMessage") return askSampling(request.params, where);
  logRound(`${where}: ${request.method} is not supported by this page`);
  return Promise.reject(Object.assign(new Error(`Method not found: ${request.method}`), { code: -32601 }));
}

function openAsking(title, ...children) {
  $("asking-title").textContent = title;
  $("asking-body").replaceChildren(...children);
  $("asking").hidden = false;
}

function closeAsking() {
  $("asking").hidden = true;
  $("asking-body").replaceChildren();
}

function askElicitation(params, where) {
  logRound(`${where}: elicitation/create asks "${params.message}"`);
  return new Promise((resolve) => {
    const fields = element("div", { id: "elicitation-fields" });
    const form = element("form", { id: "elicitation-form", novalidate: true });
    const problem = element("p", { class: "error", role: "alert" });
    const read = renderFields(fields, params.requestedSchema ?? {}, "elicit");
    const accept = element("button", { type: "submit", text: "Accept" });
    const decline = element("button", { type: "button", class: "secondary", text: "Decline" });
    const cancel = element("button", { type: "button", class: "secondary", text: "Cancel" });
    form.append(fields, problem, element("div", { class: "actions" }, accept, decline, cancel));
    const finish = (result) => {
      logRound(`${where}: answered ${result.action}${result.content ? " " + JSON.stringify(result.content) : ""}`);
      closeAsking();
      resolve(result);
    };
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      try {
        finish({ action: "accept", content: read() });
      } catch (error) {
        problem.textContent = error.message;
      }
    });
    decline.addEventListener("click", () => finish({ action: "decline" }));
    cancel.addEventListener("click", () => finish({ action: "cancel" }));
    openAsking("The server asks the person", element("p", { class: "message", text: params.message }), form);
    (form.querySelector("input, select, textarea") ?? accept).focus();
  });
}

function askSampling(params, where) {
  logRound(`${where}: sampling/createMessage asks for a completion`);
  return new Promise((resolve, reject) => {
    const messages = (params.messages ?? []).map((m) => element("li", { text: `${m.role}: ${m.content?.type === "text" ? m.content.text : JSON.stringify(m.content)}` }));
    const form = element("form", { id: "sampling-form", novalidate: true });
    const reply = element("textarea", { id: "sampling-reply", rows: 3 });
    const model = element("input", { type: "text", id: "sampling-model" });
    model.value = "typed-by-hand";
    const send = element("button", { type: "submit", text: "Send reply" });
    const refuse = element("button", { type: "button", class: "secondary", text: "Refuse" });
    form.append(
      element("div", { class: "field" }, element("label", { for: "sampling-reply", text: "Reply as the model" }), reply),
      element("div", { class: "field" }, element("label", { for: "sampling-model", text: "Model name" }), model),
      element("div", { class: "actions" }, send, refuse),
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      logRound(`${where}: replied "${reply.value}"`);
      closeAsking();
      resolve({ role: "assistant", content: { type: "text", text: reply.value }, model: model.value, stopReason: "endTurn" });
    });
    refuse.addEventListener("click", () => {
      logRound(`${where}: refused the sampling request`);
      closeAsking();
      reject(Object.assign(new Error("The person refused the sampling request"), { code: -1 }));
    });
    const system = params.systemPrompt ? [element("p", { class: "help", text: `System prompt: ${params.systemPrompt}` })] : [];
    openAsking("The server asks for a completion", ...system, element("ul", {}, ...messages), form);
    reply.focus();
  });
}

function showOutcome(...children) {
  $("outcome-body").replaceChildren(...children);
  $("outcome").hidden = false;
}

function showError(error) {
  const text = error instanceof RpcError ? `Error ${error.code}: ${error.message}` : `Error: ${error.message ?? error}`;
  const parts = [element("p", { class: "error", text })];
  if (error instanceof RpcError && error.data !== undefined) parts.push(json(error.data));
  showOutcome(...parts);
}

function showToolResult(result) {
  const parts = [];
  if (result.isError) parts.push(element("p", { class: "error", text: "The tool reported an error:" }));
  for (const block of result.content ?? []) {
    parts.push(block.type === "text" ? element("pre", { class: `content${result.isError ? " error" : ""}`, text: block.text }) : json(block));
  }
  if (result.structuredContent !== undefined) parts.push(element("h3", { text: "structuredContent" }), json(result.structuredContent));
  showOutcome(...parts);
}

async function run(action, render) {
  traffic = [];
  $("raw-log").textContent = "";
  $("rounds").replaceChildren();
  $("rounds-section").hidden = true;
  $("outcome").hidden = true;
  $("call-button").disabled = true;
  try {
    render(await action());
  } catch (error) {
    showError(error);
  } finally {
    closeAsking();
    $("call-button").disabled = false;
  }
}

function select(kind, item, button) {
  for (const other of document.querySelectorAll(".items button")) other.removeAttribute("aria-current");
  button.setAttribute("aria-current", "true");
  selected = { kind, item };
  $("call").hidden = false;
  $("outcome").hidden = true;
  const key = { resource: item.uri, template: item.uriTemplate }[kind] ?? item.name;
  $("call-title").textContent = key;
  $("call-description").textContent = item.description ?? "";
  let schema = { properties: {} };
  if (kind === "tool") schema = item.inputSchema;
  if (kind === "prompt") {
    for (const argument of item.arguments ?? []) schema.properties[argument.name] = { type: "string", title: argument.name, description: argument.description };
    schema.required = (item.arguments ?? []).filter((a) => a.required).map((a) => a.name);
  }
  if (kind === "template") {
    for (const name of templateVariables(item.uriTemplate)) schema.properties[name] = { type: "string", title: name };
    schema.required = Object.keys(schema.properties);
  }
  selected.read = renderFields($("call-fields"), schema, "arg");
  const verb = { tool: "Call", prompt: "Get", resource: "Read", template: "Read" }[kind];
  $("call-button").textContent = `${verb} ${key}`;
  $("graph-section").hidden = kind !== "tool";
  if (kind === "tool") loadGraph(item.name);
  // Straight on to the first field (or the button), so a keyboard user can type at once.
  ($("call-fields").querySelector("input, select, textarea") ?? $("call-button")).focus();
}

async function loadGraph(name) {
  const response = await fetch(`/dev/graph/${encodeURIComponent(name)}`);
  const body = await response.json();
  if (!response.ok) {
    $("graph").replaceChildren(element("p", { class: "help", text: body.error }));
    return;
  }
  drawGraph($("graph"), body);
}

function submit(event) {
  event.preventDefault();
  let values;
  try {
    values = selected.read();
  } catch (error) {
    showError(error);
    return;
  }
  const { kind, item } = selected;
  const meta = { progressToken: `dev-${++progressTokens}` };
  if (kind === "tool") run(() => peer.request("tools/call", { name: item.name, arguments: values, _meta: meta }, paramHeaders(item.inputSchema, values)), showToolResult);
  if (kind === "prompt") run(() => peer.request("prompts/get", { name: item.name, arguments: values }), (result) => showOutcome(json(result.messages ?? result)));
  if (kind === "resource") run(() => peer.request("resources/read", { uri: item.uri }), (result) => showOutcome(json(result.contents ?? result)));
  if (kind === "template") run(() => peer.request("resources/read", { uri: expandTemplate(item.uriTemplate, values) }), (result) => showOutcome(json(result.contents ?? result)));
}

// The variables of an RFC 6570 template (`{name}`, `{+path}`, `{?a,b}`), in order.
function templateVariables(template) {
  const names = [];
  for (const [, expression] of template.matchAll(/\{([^}]*)\}/g)) {
    for (const name of expression.replace(/^[+#./;?&]/, "").split(",")) if (name && !names.includes(name)) names.push(name);
  }
  return names;
}

function expandTemplate(template, values) {
  return template.replace(/\{([^}]*)\}/g, (_, expression) => {
    const operator = /^[+#./;?&]/.test(expression) ? expression[0] : "";
    const names = expression.slice(operator.length).split(",");
    const encode = operator === "+" || operator === "#" ? encodeURI : encodeURIComponent;
    if (operator === "?" || operator === "&") {
      const pairs = names.filter((n) => values[n]).map((n) => `${n}=${encodeURIComponent(values[n])}`);
      return pairs.length ? operator + pairs.join("&") : "";
    }
    return names.map((n) => encode(values[n] ?? "")).join(",");
  });
}

async function list(method, key, container, kind) {
  container.replaceChildren();
  let items = [];
  try {
    items = (await peer.request(method, {}))[key] ?? [];
  } catch (error) {
    container.append(element("li", { class: "help", text: error instanceof RpcError && error.code === -32601 ? "none" : `cannot list: ${error.message}` }));
    return;
  }
  if (!items.length) container.append(element("li", { class: "help", text: "none" }));
  for (const item of items) {
    const key = { resource: item.uri, template: item.uriTemplate }[kind] ?? item.name;
    const button = element("button", { type: "button", "data-name": key }, key);
    const about = [(kind === "resource" || kind === "template") && item.name !== key ? item.name : "", item.description?.split("\n")[0]].filter(Boolean).join(": ");
    if (about) button.append(element("span", { class: "sub", text: about }));
    button.addEventListener("click", () => select(kind, item, button));
    container.append(element("li", {}, button));
  }
}

async function refresh() {
  delete document.body.dataset.ready;
  traffic = null;
  $("raw-log").textContent = "";
  peer?.close();
  newPeer();
  selected = null;
  $("call").hidden = true;
  $("graph-section").hidden = true;
  try {
    await list("tools/list", "tools", $("tools"), "tool");
    await list("prompts/list", "prompts", $("prompts"), "prompt");
    await list("resources/list", "resources", $("resources"), "resource");
    await list("resources/templates/list", "resourceTemplates", $("templates"), "template");
    document.body.dataset.ready = peer.era;
  } catch (error) {
    say(`Cannot reach the server: ${error.message}`, true);
  }
}

async function watchStatus() {
  try {
    const status = await (await fetch("/dev/status")).json();
    $("server-name").textContent = `${status.server} — mcpdi dev`;
    document.title = `${status.server} — mcpdi dev`;
    if (status.reloadError) say(`Reload failed, still serving version ${status.version}: ${status.reloadError}`, true);
    else say(`Serving ${status.file} (version ${status.version})`);
    if (version === null && !$("roots").value) {
      $("roots").value = status.root;
      showRoots();
    }
    if (version !== null && status.version !== version) {
      version = status.version;
      peer.session = null;  // it ended with the previous version of the server
      await refresh();
      say(`Reloaded ${status.file} (version ${status.version})`);
    }
    version = status.version;
  } catch (error) {
    say(`The dev server does not answer: ${error.message}`, true);
  }
  setTimeout(watchStatus, STATUS_EVERY_MS);
}

$("call-form").addEventListener("submit", submit);
$("token").value = sessionStorage.getItem(TOKEN_KEY) ?? "";
for (const id of ["token", "headers"]) {
  $(id).addEventListener("change", () => {
    sessionStorage.setItem(TOKEN_KEY, $("token").value);
    refresh();
  });
}
window.addEventListener("pagehide", () => peer?.close());
$("roots").addEventListener("input", showRoots);
for (const radio of document.querySelectorAll('input[name="era"]')) radio.addEventListener("change", refresh);
await watchStatus();
await refresh();
