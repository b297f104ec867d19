// The Ask view: a question, live progress from POST /v1/ask (SSE), then the cited answer.

import { describeError, eventJson, readEvents, request } from "./api.js";
import { ago, append, byId, clear, fill, h, show } from "./dom.js";

const SESSION_KEY = "medlit.sessionId";
const PUBMED = "https://pubmed.ncbi.nlm.nih.gov/";
const VERDICTS = { yes: "Yes", no: "No", uncertain: "Uncertain" };

let current = null; // {controller} of the ask in flight
let lastQuestion = "";
let turns = 0;
// The answer on screen: the question as asked, its label (the standalone form, which a
// refresh asks again) and its verdict.
let shown = null;
const HISTORY_MAX = 20; // earlier answers kept on the page

function newId() {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The conversation id kept in this browser (follow-ups such as "and in children?"). */
export function sessionId() {
  let id = localStorage.getItem(SESSION_KEY);
  if (!id) {
    id = `web-${newId()}`;
    localStorage.setItem(SESSION_KEY, id);
  }
  return id;
}

/** Forget everything on screen (another API key may be another tenant) and start afresh. */
export function resetAsk() {
  if (current) current.controller.abort();
  current = null;
  byId("ask-submit").disabled = false;
  for (const id of ["answer", "citations", "ask-progress", "ask-draft", "history", "findings"]) clear(byId(id));
  for (const id of ["ask-meta", "understood", "conversation-note", "ask-error"]) fill(byId(id), "");
  for (const id of ["ask-result", "ask-progress-box", "history-box", "ask-error", "findings-box"]) show(byId(id), false);
  localStorage.setItem(SESSION_KEY, `web-${newId()}`);
  turns = 0;
  lastQuestion = "";
  shown = null;
  byId("question").value = "";
}

const SOURCE_NAMES = { pubmed: "PubMed", europepmc: "Europe PMC", local: "the local corpus" };

/**
 * A warning in words a reader can use: "source failed: pubmed: connection failed
 * (ConnectError: All connection attempts failed) after 5 tries" is "PubMed could not be
 * searched (connection failed)". Exception names and their messages are left out.
 */
export function readerWarning(text) {
  const raw = String(text || "").trim();
  const failed = /^(?:source failed:\s*)?(pubmed|europepmc|local)\s*:\s*(?:\1\s*:\s*)?(.*)$/i.exec(raw);
  if (failed) {
    const name = SOURCE_NAMES[failed[1].toLowerCase()] || failed[1];
    const reason = plainReason(failed[2]);
    return `${name} could not be searched${reason ? ` (${reason})` : ""}.`;
  }
  return plainReason(raw) || raw;
}

/** A failure's reason without exception names or their raw messages. */
function plainReason(text) {
  return String(text || "")
    .replace(/\s*\((?:[A-Z]\w*(?:Error|Exception|Timeout)\w*)[^)]*\)/g, "")
    .replace(/\b[A-Z]\w*(?:Error|Exception)\b:?\s*/g, "")
    .replace(/\s+after \d+ tries/, "")
    .replace(/\s+/g, " ")
    .trim();
}

/** Each warning once, in reader's words (the same failure is often reported at each step). */
export function readerWarnings(warnings) {
  return [...new Set((warnings || []).map(readerWarning).filter(Boolean))];
}

/** Whether the answer is only a failure to search (the API's `outage`: every source failed and
 * nothing was cited). */
function isOutage(result) {
  return result.outage === true;
}

function newConversation() {
  localStorage.setItem(SESSION_KEY, `web-${newId()}`);
  turns = 0;
  lastQuestion = "";
  shown = null;
  clear(byId("history"));
  show(byId("history-box"), false);
  show(byId("ask-result"), false);
  show(byId("ask-progress-box"), false);
  show(byId("ask-error"), false);
  fill(byId("conversation-note"), "New conversation started.");
  const box = byId("question");
  box.value = "";
  box.focus();
}

/** Time marks of the last ask, read by the browser test (performance.getEntriesByName). */
function mark(name) {
  performance.mark(`ask:${name}`);
}

function showError(message) {
  const box = byId("ask-error");
  fill(box, h("strong", {}, "Could not answer: "), plainReason(message) || message);
  show(box, true);
}

function progressItem(text, kind = "stage") {
  const list = byId("ask-progress");
  if (kind === "warning") {
    text = readerWarning(text);
    const said = Array.from(list.querySelectorAll("li.warning"), (li) => li.textContent);
    if (said.includes(text)) return; // the same failure, reported again by a later step
  }
  const items = list.querySelectorAll("li");
  const last = items[items.length - 1];
  if (last) last.classList.add("done");
  list.append(h("li", { class: kind === "warning" ? "warning" : "" }, text));
}

async function ask(question, { noCache = false } = {}) {
  if (current) current.controller.abort();
  const controller = new AbortController();
  current = { controller };
  performance.clearMarks();
  mark("submit");
  lastQuestion = question;

  const body = { question, session_id: sessionId() };
  const source = byId("source").value;
  if (source) body.source = source;
  if (noCache) body.no_cache = true;

  show(byId("ask-error"), false);
  show(byId("ask-result"), false);
  clear(byId("ask-progress"));
  clear(byId("ask-draft"));
  show(byId("ask-draft"), false);
  show(byId("ask-progress-box"), true);
  byId("ask-steps").open = true; // steps show as they come...
  fill(byId("ask-progress-heading"), "Working…");
  byId("ask-progress-box").setAttribute("aria-busy", "true");
  byId("ask-submit").disabled = true;

  let result = null;
  let failure = null;
  let firstProgress = true;
  let draftText = ""; // the answer as streamed so far
  try {
    const response = await request("/v1/ask", {
      method: "POST",
      body,
      accept: "text/event-stream",
      signal: controller.signal,
    });
    const type = response.headers.get("content-type") || "";
    if (!type.includes("text/event-stream")) {
      result = await response.json(); // a server that answered JSON after all
    } else {
      await readEvents(response, (ev) => {
        if (firstProgress && (ev.event === "stage" || ev.event === "token")) {
          firstProgress = false;
          mark("first-progress");
        }
        const data = eventJson(ev);
        if ((ev.event === "stage" || ev.event === "warning") && data) {
          progressItem(stageText(data), ev.event);
        } else if (ev.event === "token") {
          const piece = data && typeof data === "object" ? data.message ?? data.text ?? "" : data ?? ev.data;
          draftText += String(piece);
          // Redrawn whole: a [PMID:n] marker becomes a numbered link once it is complete.
          show(fill(byId("ask-draft"), answerNodes(draftText, draftNumbers(draftText))), true);
        } else if (ev.event === "result" && data) {
          result = data;
        } else if (ev.event === "error") {
          failure = data && typeof data === "object"
            ? [data.title, data.detail].filter(Boolean).join(": ")
            : ev.data;
        }
      });
    }
  } catch (err) {
    if (err && err.name === "AbortError") return;
    failure = describeError(err);
  } finally {
    // A newer ask aborted this one: it owns the controls now.
    if (current && current.controller === controller) {
      current = null;
      byId("ask-submit").disabled = false;
      byId("ask-progress-box").setAttribute("aria-busy", "false");
    }
  }
  if (result) {
    keepShownAnswer(question, noCache);
    renderResult(result);
    const verdict = isOutage(result) ? null : result.verdict;
    shown = { question, label: result.standalone_question || question, verdict };
    turns += 1;
    fill(
      byId("conversation-note"),
      `Follow-up questions continue this conversation (${turns} question${turns === 1 ? "" : "s"} so far).`,
    );
    mark("rendered");
    const steps = byId("ask-progress").querySelectorAll("li");
    for (const li of steps) li.classList.add("done");
    // ...and fold into one line once the answer is shown, so that it is in view (on a phone a
    // dozen steps pushed it below the fold); a click shows them again.
    fill(byId("ask-progress-heading"), `Steps taken (${steps.length})`);
    byId("ask-steps").open = false;
    show(byId("ask-draft"), false);
    requestAnimationFrame(() => setTimeout(() => mark("painted"), 0));
  } else {
    showError(failure || "the service closed the stream without an answer.");
    show(byId("ask-progress-box"), false);
    mark("rendered");
  }
}

/**
 * Before another question's answer replaces the one on screen, keep that one under "Earlier
 * in this conversation" (newest first), folded to its question and verdict: a follow-up such
 * as "and in children?" is read beside the answer it follows. The same question again (a
 * repeat, or *Refresh from the literature*) replaces the answer without keeping it.
 */
function keepShownAnswer(nextQuestion, noCache) {
  // (The answer's elements still hold it: an ask hides them while it runs, a failed one does
  // not render.)
  if (!shown || noCache || sameText(shown.question, nextQuestion)) return;
  const body = h("div", { class: "history-body" });
  for (const part of [byId("understood"), byId("answer"), byId("ask-meta"), byId("citations-box")]) {
    if (part.hidden) continue;
    const copy = part.cloneNode(true);
    for (const el of [copy, ...copy.querySelectorAll("[id], [aria-labelledby]")]) {
      el.removeAttribute("id"); // ids stay unique: the copies are the answer's elements
      el.removeAttribute("aria-labelledby");
    }
    body.append(copy);
  }
  const verdict = shown.verdict && VERDICTS[shown.verdict];
  const item = h(
    "li",
    {},
    h(
      "details",
      {},
      h(
        "summary",
        {},
        h("span", { class: "history-question" }, shown.label),
        verdict ? h("span", { class: `badge verdict verdict-${shown.verdict}` }, verdict) : null,
      ),
      body,
    ),
  );
  const list = byId("history");
  list.prepend(item);
  while (list.children.length > HISTORY_MAX) list.lastElementChild.remove();
  show(byId("history-box"), true);
}

function sameText(a, b) {
  const norm = (text) => String(text).toLowerCase().replace(/\W+/g, " ").trim();
  return norm(a) === norm(b);
}

function stageText(event) {
  const message = event.message || String(event.stage || "").replaceAll("_", " ");
  const data = event.data || {};
  const counts = [];
  if (Number.isFinite(data.articles)) counts.push(`${data.articles} articles`);
  if (Number.isFinite(data.count)) counts.push(`${data.count}`);
  const text = message.charAt(0).toUpperCase() + message.slice(1);
  return counts.length ? `${text} (${counts.join(", ")})` : text;
}

/** Numbers for the PMIDs of a streamed draft: in the order they are first cited. */
function draftNumbers(text) {
  const order = [...new Set([...text.matchAll(/PMID:\s*(\d+)/g)].map((m) => m[1]))];
  return (pmid) => order.indexOf(pmid) + 1;
}

/** The passages a citation rests on, folded: each with its section, and "full text" when it
 * comes from the article's body rather than its abstract. */
function citedPassages(passages) {
  if (!Array.isArray(passages) || passages.length === 0) return null;
  return h(
    "details",
    { class: "cite-passages" },
    h("summary", {}, passages.length === 1 ? "1 passage" : `${passages.length} passages`),
    passages.map((p) =>
      h(
        "p",
        { class: "passage" },
        h("span", { class: "passage-where" }, [p.section, p.from_full_text ? "full text" : "abstract"].filter(Boolean).join(" · ")),
        " ",
        String(p.text || ""),
      ),
    ),
  );
}

/** Whether a citation is written as a noun: it opens a sentence or a clause, or follows
 * "in", "by", "from" or "see", and a lower-case word goes on ("In [PMID:1], ...",
 * "Specifically, [PMID:1] found ..."). */
export function citesAsNoun(before, after) {
  const opens = /(?:^|[.!?:;,]\s*|\n\s*|\b(?:[Ii]n|[Bb]y|[Ff]rom|[Ss]ee)\s+)$/.test(before);
  return opens && /^(?:\s+[a-z]|\s*,)/.test(after);
}

/** Split answer text into text and numbered PubMed links for every [PMID:…] marker. */
export function answerNodes(text, numberOf) {
  const nodes = [];
  const marker = /\[(?:\s*PMID:\s*\d+\s*[,;]?\s*)+\]/g;
  let at = 0;
  for (const match of text.matchAll(marker)) {
    if (match.index > at) nodes.push(text.slice(at, match.index));
    const pmids = match[0].match(/\d+/g) || [];
    const links = pmids.map((pmid) => {
      const n = numberOf(pmid);
      return h(
        "a",
        {
          class: "cite",
          href: `${PUBMED}${pmid}/`,
          target: "_blank",
          rel: "noopener noreferrer",
          title: `PMID ${pmid} on PubMed`,
          "aria-label": `reference ${n}, PMID ${pmid} on PubMed`,
          "data-pmid": pmid,
        },
        String(n),
      );
    });
    const group = ["[", links.flatMap((a, i) => (i ? [", ", a] : [a])), "]"];
    const end = match.index + match[0].length;
    // "Specifically, [PMID:1] found ...": a citation standing as the sentence's subject stays
    // on the line as "[1]"; a superscript there would read "Specifically, ¹ found".
    const noun = citesAsNoun(text.slice(0, match.index), text.slice(end));
    nodes.push(h(noun ? "span" : "sup", { class: noun ? "cites cites-inline" : "cites" }, ...group));
    at = end;
  }
  if (at < text.length) nodes.push(text.slice(at));
  return nodes;
}

function ageText(cache) {
  const at = cache.created_at ?? cache.cached_at ?? cache.stored_at;
  let seconds = Number.isFinite(cache.age_s) ? cache.age_s : null;
  if (seconds === null && at !== undefined && at !== null) {
    const when = typeof at === "number" ? at * 1000 : Date.parse(at);
    if (Number.isFinite(when)) seconds = (Date.now() - when) / 1000;
  }
  return seconds === null ? "" : `, asked ${ago(seconds)}`;
}

function renderResult(result) {
  if (isOutage(result)) {
    renderOutage(result);
    return;
  }
  byId("ask-result").classList.remove("outage");
  fill(byId("answer-heading"), "Answer");
  const citations = Array.isArray(result.citations) ? result.citations : [];
  const numbers = new Map();
  citations.forEach((c, i) => c.pmid && numbers.set(String(c.pmid), i + 1));
  const numberOf = (pmid) => {
    if (!numbers.has(pmid)) numbers.set(pmid, numbers.size + 1);
    return numbers.get(pmid);
  };

  const verdict = byId("verdict");
  if (result.verdict && VERDICTS[result.verdict]) {
    fill(verdict, VERDICTS[result.verdict]);
    verdict.className = `badge verdict verdict-${result.verdict}`;
    show(verdict, true);
  } else {
    show(verdict, false);
  }

  // A follow-up is rewritten into a full question before the lookup: show what was answered.
  const understood = byId("understood");
  const standalone = String(result.standalone_question || "").trim();
  if (standalone && !sameText(standalone, String(result.question || ""))) {
    fill(understood, "Understood as: ", h("q", {}, standalone));
    show(understood, true);
  } else {
    show(understood, false);
  }

  const cache = result.cache || {};
  const cacheNote = byId("cache-note");
  if (cache.tier1 === "hit") {
    const same = cache.matched_question ? `same question as “${cache.matched_question}”` : "a question asked before";
    fill(byId("cache-text"), `Answered from cache: ${same}${ageText(cache)}.`);
    show(cacheNote, true);
  } else {
    show(cacheNote, false);
  }

  const answer = clear(byId("answer"));
  // A question not in English: medlit searches English abstracts, and says what it searched.
  if (result.language_note) answer.append(h("p", { class: "note warning" }, String(result.language_note)));
  let lines = String(result.answer || "").split(/\n/);
  // The answer opens with its verdict ("Verdict: Yes", or a bare "Yes" while streamed): the
  // badge already shows it, so a first line that says the same is not shown twice.
  const opening = /^\s*(?:verdict\s*[:=-]?\s*)?(yes|no|uncertain)\W*$/i.exec(lines[0] || "");
  if (result.verdict && opening && opening[1].toLowerCase() === result.verdict) lines = lines.slice(1);
  for (const para of lines.join("\n").split(/\n\s*\n/)) {
    if (!para.trim()) continue;
    const p = h("p");
    para.split("\n").forEach((line, i) => {
      if (i) p.append(h("br"));
      append(p, answerNodes(line, numberOf));
    });
    answer.append(p);
  }
  if (!answer.childNodes.length) answer.append(h("p", {}, "No answer text was returned."));
  if (result.mode === "evidence_digest") {
    answer.append(
      h("p", { class: "note" }, "Evidence digest: the most relevant sentences of the retrieved abstracts, not generated text."),
    );
  }
  // A check's own message is shown once, in the box below, not also as a warning here.
  const spoken = new Set((result.findings || []).map((f) => String(f.message || "")));
  const warnings = (result.warnings || []).filter((w) => !spoken.has(String(w)));
  for (const warning of readerWarnings(warnings)) answer.append(h("p", { class: "note warning" }, warning));
  renderFindings(result.findings);

  const list = clear(byId("citations"));
  citations.forEach((c, i) => {
    const link = c.pmid
      ? h("a", { href: `${PUBMED}${c.pmid}/`, target: "_blank", rel: "noopener noreferrer" }, c.title || `PMID ${c.pmid}`)
      : h("span", {}, c.title || "Untitled");
    const meta = [c.journal, c.year].filter(Boolean).join(", ");
    list.append(
      h(
        "li",
        { id: `citation-${i + 1}`, "data-pmid": c.pmid || "" },
        h("span", { class: "cite-number", "aria-hidden": "true" }, `${i + 1}`),
        h(
          "div",
          { class: "cite-body" },
          link,
          h(
            "div",
            { class: "cite-meta" },
            meta ? h("span", {}, meta) : null,
            c.study_type ? h("span", { class: `badge study study-${slug(c.study_type)}` }, c.study_type) : null,
            Number.isFinite(c.score) ? h("span", { class: "score", title: "relevance score" }, `score ${c.score.toFixed(2)}`) : null,
            c.pmid ? h("span", { class: "pmid" }, `PMID ${c.pmid}`) : null,
          ),
          citedPassages(c.passages),
        ),
      ),
    );
  });
  show(byId("citations-box"), citations.length > 0);

  const calls = result.api_calls || {};
  const total = result.timings_ms && result.timings_ms.total;
  fill(
    byId("ask-meta"),
    [
      Number.isFinite(total) ? `${Math.round(total)} ms` : null,
      // Each source asked, by the requests sent to it: a local answer never reads "PubMed calls: 0".
      ...[
        ["pubmed", "PubMed call"],
        ["europepmc", "Europe PMC call"],
        ["local", "local corpus search"],
      ]
        .filter(([name]) => calls[name])
        .map(([name, one]) => `${calls[name]} ${one}${calls[name] === 1 ? "" : one.endsWith("search") ? "es" : "s"}`),
      `LLM calls: ${calls.llm ?? 0}`,
      cache.tier1 === "miss" && cache.evidence_reused
        ? `${cache.evidence_reused} cached passage${cache.evidence_reused === 1 ? "" : "s"} reused`
        : null,
      // A question close to this one was answered before, but its answer does not fit this one.
      cache.tier1 === "miss" && cache.guard_reason ? `not from cache: a similar question's answer did not fit (${cache.guard_reason})` : null,
    ]
      .filter(Boolean)
      .join(" · "),
  );
  show(byId("ask-result"), true);
}

const ACTIONS = {
  drop: "left out",
  uncite: "citation removed",
  cite: "citation added",
  rewrite: "reworded",
  warn: "warning",
  note: "note",
  flip_verdict: "verdict changed",
};

/**
 * The answer's check findings grouped by check id, in the order the checks first spoke:
 * [{check, items: [{action, message, pmids, sentence}]}]. Records without a check id or a
 * message are left out.
 */
export function findingGroups(findings) {
  const groups = new Map();
  for (const f of Array.isArray(findings) ? findings : []) {
    const check = String(f?.check || "").trim();
    const message = String(f?.message || "").trim();
    if (!check || !message) continue;
    if (!groups.has(check)) groups.set(check, []);
    groups.get(check).push({
      action: String(f.action || ""),
      message,
      pmids: Array.isArray(f.pmids) ? f.pmids.map(String) : [],
      sentence: f.sentence ? String(f.sentence) : null,
    });
  }
  return Array.from(groups, ([check, items]) => ({ check, items }));
}

/** The folded "What the checks changed" box: one heading per check, its findings below. */
function renderFindings(findings) {
  const groups = findingGroups(findings);
  const box = clear(byId("findings"));
  const count = groups.reduce((n, g) => n + g.items.length, 0);
  fill(byId("findings-heading"), `What the checks changed (${count})`);
  for (const { check, items } of groups) {
    box.append(
      h("section", { class: "finding-group", "data-check": check },
        h("h4", {}, check),
        h("ul", {}, ...items.map((item) =>
          h("li", {},
            h("span", { class: "finding-action" }, ACTIONS[item.action] || item.action),
            readerWarning(item.message),
            item.pmids.length ? ` (PMID ${item.pmids.join(", ")})` : "",
            item.sentence ? h("span", { class: "finding-sentence" }, `“${item.sentence}”`) : null,
          ),
        )),
      ),
    );
  }
  byId("findings-box").open = false;
  show(byId("findings-box"), count > 0);
}

/** A search that could not be made: say so, and what to do; no verdict, no "answer". */
function renderOutage(result) {
  show(byId("verdict"), false);
  show(byId("findings-box"), false);
  show(byId("understood"), false);
  show(byId("cache-note"), false);
  byId("ask-result").classList.add("outage");
  fill(byId("answer-heading"), "The literature could not be searched");
  const answer = clear(byId("answer"));
  answer.append(
    h(
      "p",
      {},
      "This is not an answer to your question: the sources it is answered from did not respond, " +
        "so nothing was read. Try again in a few minutes, or choose another source.",
    ),
  );
  for (const warning of readerWarnings(result.warnings)) answer.append(h("p", { class: "note warning" }, warning));
  clear(byId("citations"));
  show(byId("citations-box"), false);
  fill(byId("ask-meta"), "");
  show(byId("ask-result"), true);
}

function slug(text) {
  return String(text).toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
}

/** Wire the Ask view's controls. */
export function initAsk() {
  const form = byId("ask-form");
  const box = byId("question");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const question = box.value.trim();
    if (!question) {
      showError("type a question first.");
      box.focus();
      return;
    }
    ask(question);
  });
  box.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  byId("new-conversation").addEventListener("click", newConversation);
  byId("refresh").addEventListener("click", () => {
    const question = shown?.label || lastQuestion;
    if (question) ask(question, { noCache: true });
  });
}
