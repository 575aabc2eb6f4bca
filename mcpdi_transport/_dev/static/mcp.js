// MCP over Streamable HTTP to this page's own origin, in either protocol era.
// A `Peer` sends requests and hands every server-to-client question to `ask`, whichever way
// the era carries it: a request on the call's SSE stream (2025-11-25) or an
// InputRequiredResult answered by retrying the call (2026-07-28).

export const MODERN = "2026-07-28";
export const LEGACY = "2025-11-25";
const ENDPOINT = "/mcp";
const CLIENT_INFO = { name: "mcpdi-dev-page", version: "1.0.0" };
const CAPABILITIES = { elicitation: { form: {} }, sampling: {}, roots: { listChanged: false } };
const NAME_BEARING = { "tools/call": "name", "prompts/get": "name", "resources/read": "uri" };
const MAX_ROUNDS = 10;

export class RpcError extends Error {
  constructor(error) {
    super(error.message);
    this.code = error.code;
    this.data = error.data;
  }
}

// Header values outside plain printable ASCII travel Base64-encoded (the `=?base64?…?=` sentinel).
export function encodeHeaderValue(value) {
  const plain = /^[\x20-\x7e]*$/.test(value) && value.trim() === value && !/^=\?base64\?.*\?=$/.test(value);
  if (plain) return value;
  const bytes = new TextEncoder().encode(value);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return `=?base64?${btoa(binary)}?=`;
}

// `Mcp-Param-*` headers for the arguments the tool's schema marks with `x-mcp-header`.
export function paramHeaders(inputSchema, args) {
  const headers = {};
  for (const [name, property] of Object.entries(inputSchema?.properties ?? {})) {
    const header = property?.["x-mcp-header"];
    const value = args[name];
    if (typeof header !== "string" || value === undefined || value === null) continue;
    headers[`Mcp-Param-${header}`] = encodeHeaderValue(typeof value === "string" ? value : String(value));
  }
  return headers;
}

// Every JSON-RPC message of a response, in order: one JSON body, or the events of an SSE stream.
async function* messagesOf(response) {
  const type = response.headers.get("content-type") ?? "";
  if (type.startsWith("application/json")) {
    yield await response.json();
    return;
  }
  if (!type.startsWith("text/event-stream")) {
    const text = await response.text();
    if (text) throw new Error(`HTTP ${response.status}: ${text}`);
    return;
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n?/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).replace(/^ /, "")).join("\n");
      if (data) yield JSON.parse(data);
    }
  }
}

export class Peer {
  // hooks.ask(request, round) answers a server request {method, params} with its result,
  // hooks.traffic(direction, message) sees every JSON-RPC message, hooks.round(entry) each round,
  // hooks.progress(params) each progress notification, hooks.credentials() the headers every
  // request carries (the person's bearer token and headers).
  constructor(era, hooks) {
    this.era = era;
    this.hooks = hooks;
    this.nextId = 1;
    this.session = null;
  }

  async post(message, extraHeaders = {}) {
    const headers = {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      ...this.hooks.credentials(),
      ...extraHeaders,
    };
    if (this.era === LEGACY) {
      if (this.session) headers["Mcp-Session-Id"] = this.session;
      if (message.method !== "initialize") headers["MCP-Protocol-Version"] = LEGACY;
    } else if (message.method) {
      headers["MCP-Protocol-Version"] = MODERN;
      headers["Mcp-Method"] = message.method;
      const field = NAME_BEARING[message.method];
      if (field && typeof message.params?.[field] === "string") headers["Mcp-Name"] = encodeHeaderValue(message.params[field]);
    }
    this.hooks.traffic("sent", message);
    return fetch(ENDPOINT, { method: "POST", headers, body: JSON.stringify(message) });
  }

  // One request and its response; server requests on the stream are answered through hooks.ask.
  async exchange(method, params, extraHeaders, round) {
    const id = this.nextId++;
    const response = await this.post({ jsonrpc: "2.0", id, method, params }, extraHeaders);
    if (this.era === LEGACY && method === "initialize") this.session = response.headers.get("mcp-session-id");
    if (response.status === 401 || response.status === 403) {
      const challenge = response.headers.get("www-authenticate") ?? "";
      throw new Error(`HTTP ${response.status}: the server wants a bearer token${response.status === 403 ? " with more scopes" : ""} (enter it under Bearer token) ${challenge}`.trim());
    }
    if (response.status === 404 && this.era === LEGACY) {
      this.session = null;
      throw new SessionLost();
    }
    for await (const message of messagesOf(response)) {
      this.hooks.traffic("received", message);
      if (message.method !== undefined && message.id !== undefined) {
        await this.answerServerRequest(message, round);
      } else if (message.method === "notifications/progress") {
        this.hooks.progress(message.params ?? {});
      } else if (message.id === id) {
        if (message.error) throw new RpcError(message.error);
        return message.result;
      }
    }
    throw new Error(`HTTP ${response.status}: the response ended without an answer to ${method}`);
  }

  async answerServerRequest(message, round) {
    let reply;
    try {
      const result = await this.hooks.ask({ method: message.method, params: message.params ?? {} }, round);
      reply = { jsonrpc: "2.0", id: message.id, result };
    } catch (error) {
      reply = { jsonrpc: "2.0", id: message.id, error: { code: error.code ?? -1, message: String(error.message ?? error) } };
    }
    const response = await this.post(reply);
    if (!response.ok) throw new Error(`the server refused the answer: HTTP ${response.status}`);
  }

  async open() {
    if (this.era !== LEGACY || this.session) return;
    await this.exchange("initialize", { protocolVersion: LEGACY, capabilities: CAPABILITIES, clientInfo: CLIENT_INFO }, {}, 0);
    await this.post({ jsonrpc: "2.0", method: "notifications/initialized" });
  }

  // Ends the 2025-11-25 session, if one is open; the server forgets it at once.
  close() {
    if (this.era !== LEGACY || !this.session) return;
    const headers = { ...this.hooks.credentials(), "Mcp-Session-Id": this.session, "MCP-Protocol-Version": LEGACY };
    this.session = null;
    fetch(ENDPOINT, { method: "DELETE", headers, keepalive: true }).catch(() => {});
  }

  envelope(params) {
    if (this.era === LEGACY) return params;
    const meta = {
      ...(params._meta ?? {}),
      "io.modelcontextprotocol/protocolVersion": MODERN,
      "io.modelcontextprotocol/clientCapabilities": CAPABILITIES,
      "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    };
    return { ...params, _meta: meta };
  }

  // A request, with the rounds of a multi-round call (2026-07-28) or the questions on its stream (2025-11-25).
  async request(method, params = {}, extraHeaders = {}) {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.open();
        return await this.rounds(method, params, extraHeaders);
      } catch (error) {
        if (!(error instanceof SessionLost) || attempt > 0) throw error;
      }
    }
  }

  async rounds(method, params, extraHeaders) {
    let retry = params;
    for (let round = 1; round <= MAX_ROUNDS; round++) {
      this.hooks.round({ round, kind: "sent", method });
      const result = await this.exchange(method, this.envelope(retry), extraHeaders, round);
      if (result?.resultType !== "input_required") {
        this.hooks.round({ round, kind: "complete", method, result });
        return result;
      }
      const requests = result.inputRequests ?? {};
      this.hooks.round({ round, kind: "input_required", method, keys: Object.keys(requests) });
      const responses = {};
      for (const [key, request] of Object.entries(requests)) responses[key] = await this.hooks.ask(request, round);
      retry = { ...params, inputResponses: responses };
      if (result.requestState !== undefined) retry.requestState = result.requestState;
    }
    throw new Error(`the server still asked after ${MAX_ROUNDS} rounds`);
  }
}

class SessionLost extends Error {
  constructor() {
    super("the session ended (the server reloaded)");
  }
}
