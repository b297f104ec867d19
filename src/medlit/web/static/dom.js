// Building DOM from data without ever parsing it as HTML.
//
// Everything the page shows that comes from the service (answers, titles, abstracts, model
// output) goes through h(): strings become text nodes, never markup. The one exception is the
// research report, which the server renders from Markdown and sanitises (see report()).

const SAFE_URL = /^(https?:\/\/|#|\/(?!\/))/i;

/** True when a URL may be put in an href: http(s), a fragment, or a same-origin path. */
export function safeUrl(url) {
  return typeof url === "string" && SAFE_URL.test(url.trim());
}

/**
 * Create an element: h("a", {href: "...", class: "x"}, "text", child, ...).
 * Attributes starting with "on" are refused (handlers are attached with addEventListener).
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (/^on/i.test(name)) throw new Error(`refusing event attribute ${name}`);
    if ((name === "href" || name === "src") && !safeUrl(String(value))) continue;
    el.setAttribute(name, value === true ? "" : String(value));
  }
  append(el, ...children);
  return el;
}

/** Append children: nodes as they are, strings and numbers as text, arrays flattened. */
export function append(el, ...children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Remove every child of an element. */
export function clear(el) {
  el.replaceChildren();
  return el;
}

/** Replace an element's children with the given ones. */
export function fill(el, ...children) {
  clear(el);
  return append(el, ...children);
}

/** Shortcut for document.getElementById that fails loudly on a missing id. */
export function byId(id) {
  const el = document.getElementById(id);
  if (!el) throw new Error(`missing element #${id}`);
  return el;
}

/** Show or hide an element (the hidden attribute). */
export function show(el, visible = true) {
  el.hidden = !visible;
  return el;
}

/** "3 days ago", "5 minutes ago", "just now" from an age in seconds. */
export function ago(seconds) {
  const s = Math.max(0, Math.round(seconds));
  const units = [
    ["year", 365 * 86400],
    ["month", 30 * 86400],
    ["day", 86400],
    ["hour", 3600],
    ["minute", 60],
  ];
  for (const [name, size] of units) {
    if (s >= size) {
      const n = Math.floor(s / size);
      return `${n} ${name}${n === 1 ? "" : "s"} ago`;
    }
  }
  return "just now";
}

/** "1 min 05 s" / "12.3 s" from seconds. */
export function duration(seconds) {
  if (!Number.isFinite(seconds) || seconds < 0) return "–";
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const m = Math.floor(seconds / 60);
  const s = Math.floor(seconds % 60);
  return `${m} min ${String(s).padStart(2, "0")} s`;
}

/** Offer text or a Blob to the user as a file download. */
export function download(content, filename, type = "text/plain") {
  const blob = content instanceof Blob ? content : new Blob([content], { type });
  const url = URL.createObjectURL(blob);
  const a = h("a", { href: "#", download: filename });
  a.href = url; // blob: URLs are ours; set directly (h() only allows http(s) and paths)
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
