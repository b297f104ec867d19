// Talking to the medlit service: JSON, problem+json errors, API keys, and SSE over fetch.
//
// EventSource cannot send an Authorization header (and cannot POST), so server-sent events are
// read from a fetch() body by a small parser that follows the WHATWG event-stream format.

const KEY_STORAGE = "medlit.apiKey";

/** An error the service answered (RFC 9457 problem details) or a network failure. */
export class ApiError extends Error {
  constructor(status, title, detail, type) {
    super(detail || title || `HTTP ${status}`);
    this.status = status;
    this.title = title || "";
    this.detail = detail || "";
    this.type = type || "about:blank";
  }
}

let authPrompt = null;

/** Register the function that asks the user for an API key (returns a Promise of the key). */
export function onAuthNeeded(fn) {
  authPrompt = fn;
}

export function apiKey() {
  return sessionStorage.getItem(KEY_STORAGE) || "";
}

export function setApiKey(key) {
  if (key) sessionStorage.setItem(KEY_STORAGE, key);
  else sessionStorage.removeItem(KEY_STORAGE);
  window.dispatchEvent(new Event("medlit:key"));
}

function headers(extra) {
  const out = { ...(extra || {}) };
  const key = apiKey();
  if (key) out.Authorization = `Bearer ${key}`;
  return out;
}

async function problemFrom(response) {
  let body = null;
  const text = await response.text().catch(() => "");
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  if (body && typeof body === "object") {
    const detail = typeof body.detail === "string" ? body.detail : "";
    return new ApiError(response.status, body.title || response.statusText, detail, body.type);
  }
  return new ApiError(response.status, response.statusText, text.slice(0, 300));
}

/**
 * fetch() with the API key; asks for a key once on 401 and retries. Throws ApiError for a
 * non-2xx answer or a network failure; returns the Response otherwise.
 */
export async function request(path, { method = "GET", body, accept, signal, extraHeaders } = {}) {
  for (let attempt = 0; ; attempt++) {
    const init = { method, signal, headers: headers(extraHeaders) };
    if (accept) init.headers.Accept = accept;
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(path, init);
    } catch (err) {
      if (err && err.name === "AbortError") throw err;
      throw new ApiError(0, "The medlit service cannot be reached", "Check that `medlit serve` is running and try again.");
    }
    if (response.status === 401 && attempt === 0 && authPrompt) {
      const key = await authPrompt(apiKey() ? "That API key was not accepted." : "");
      if (key) {
        setApiKey(key);
        continue;
      }
    }
    if (!response.ok) throw await problemFrom(response);
    return response;
  }
}

/** GET/POST and parse JSON. */
export async function json(path, options = {}) {
  const response = await request(path, { accept: "application/json", ...options });
  return response.json();
}

/**
 * Read a server-sent event stream from a Response; calls onEvent({event, data, id}) per event.
 * Resolves when the stream ends. Returns the id of the last event that had one.
 */
export async function readEvents(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let lastId = null;
  let event = { event: "message", data: [], id: null };
  const dispatch = () => {
    if (event.data.length) {
      if (event.id !== null) lastId = event.id;
      onEvent({ event: event.event, data: event.data.join("\n"), id: event.id });
    }
    event = { event: "message", data: [], id: null };
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let newline;
    while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer.startsWith("\r\n", newline) ? 2 : 1));
      if (line === "") {
        dispatch();
        continue;
      }
      if (line.startsWith(":")) continue; // comment / keep-alive
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") event.event = value;
      else if (field === "data") event.data.push(value);
      else if (field === "id") event.id = value;
    }
  }
  dispatch();
  return lastId;
}

/** Parse an event's data as JSON (null when it is not JSON). */
export function eventJson(ev) {
  try {
    return JSON.parse(ev.data);
  } catch {
    return null;
  }
}

/** One line for a person from an ApiError or any other error. */
export function describeError(err) {
  if (err instanceof ApiError) {
    const title = err.title && err.title !== err.detail ? err.title : "";
    if (err.status === 0) return `${err.title}. ${err.detail}`;
    return [title, err.detail].filter(Boolean).join(": ") || `The service answered ${err.status}.`;
  }
  return `Something went wrong in the page: ${err && err.message ? err.message : err}`;
}
