// The Research view: start a job, watch it live (SSE, resumable), read and export its report.

import { ApiError, describeError, eventJson, json, readEvents, request } from "./api.js";
import { append, byId, clear, download, duration, fill, h, show } from "./dom.js";
import { enhanceEvidenceTable, placeFlow } from "./evidence.js";

const STAGES = ["PLANNING", "EXECUTING", "VERIFYING", "SYNTHESIZING"];
const TERMINAL = new Set(["COMPLETED", "FAILED", "CANCELLED"]);
const STAGE_TEXT = {
  PENDING: "Waiting for a worker",
  PLANNING: "Planning sub-questions",
  EXECUTING: "Reading the literature",
  VERIFYING: "Checking facts across sources",
  SYNTHESIZING: "Writing the report",
  COMPLETED: "Completed",
  FAILED: "Failed",
  CANCELLED: "Cancelled",
  INTERRUPTED: "Interrupted",
};

let watch = null; // {id, controller, job, markdown, timer}

function showError(message) {
  const box = byId("research-error");
  fill(box, h("strong", {}, "Problem: "), message);
  show(box, true);
}

function clearError() {
  show(byId("research-error"), false);
}

function jobsOf(data) {
  if (Array.isArray(data)) return data;
  for (const key of ["items", "jobs", "results", "data"]) if (Array.isArray(data?.[key])) return data[key];
  return [];
}

/** The tenant's past jobs, newest first. */
export async function loadJobs() {
  const list = byId("jobs");
  try {
    const jobs = jobsOf(await json("/v1/research?limit=50"));
    clear(list);
    if (!jobs.length) list.append(h("li", { class: "empty" }, "No research jobs yet."));
    for (const job of jobs) {
      const when = job.created_at ? new Date(job.created_at).toLocaleString() : "";
      list.append(
        h(
          "li",
          {},
          h("a", { href: `#/research/${encodeURIComponent(job.id)}` }, job.question || job.id),
          h(
            "span",
            { class: "job-meta" },
            h("span", { class: `badge status status-${String(job.status).toLowerCase()}` }, job.status || "?"),
            ` ${job.depth || ""}`,
            when ? ` · ${when}` : "",
          ),
        ),
      );
    }
  } catch (err) {
    fill(list, h("li", { class: "empty" }, `Past jobs could not be listed: ${describeError(err)}`));
  }
}

async function startJob(event) {
  event.preventDefault();
  clearError();
  const question = byId("research-question").value.trim();
  if (!question) {
    showError("type a research question first.");
    byId("research-question").focus();
    return;
  }
  const button = byId("research-submit");
  button.disabled = true;
  try {
    const job = await json("/v1/research", {
      method: "POST",
      body: { question, depth: byId("depth").value },
    });
    location.hash = `#/research/${encodeURIComponent(job.id)}`;
  } catch (err) {
    showError(describeError(err));
  } finally {
    button.disabled = false;
  }
}

function stopWatching() {
  if (!watch) return;
  watch.controller.abort();
  clearInterval(watch.timer);
  clearTimeout(watch.pending);
  watch = null;
}

/** Forget every job and report on screen (another API key may be another tenant). */
export function resetResearch() {
  stopWatching();
  clearError();
  for (const id of ["jobs", "report", "reader-summary", "job-log", "sub-questions", "stages"]) {
    const el = document.getElementById(id);
    if (el) clear(el);
  }
  fill(byId("job-question"), "");
  for (const id of ["job-view", "report-box", "job-log-box", "sub-questions-box"]) show(byId(id), false);
  show(byId("research-home"), true);
}

/** Show the job list and the form (route #/research). */
export function showResearchHome() {
  stopWatching();
  show(byId("job-view"), false);
  show(byId("research-home"), true);
  loadJobs();
}

/** Show one job live (route #/research/ID). */
export async function showJob(id) {
  stopWatching();
  clearError();
  show(byId("research-home"), false);
  show(byId("job-view"), true);
  show(byId("report-box"), false);
  clear(byId("report"));
  clear(byId("job-log"));
  show(byId("job-log-box"), false);
  byId("job-trail").open = true;
  fill(byId("job-question"), "Loading…");
  const controller = new AbortController();
  watch = { id, controller, job: null, markdown: null, timer: setInterval(tickElapsed, 1000) };
  const mine = watch;
  try {
    await refresh(mine);
  } catch (err) {
    if (err?.name === "AbortError") return;
    fill(byId("job-question"), "Research job");
    showError(err instanceof ApiError && err.status === 404 ? "there is no such research job (or it is not yours)." : describeError(err));
    return;
  }
  if (!TERMINAL.has(mine.job.status)) {
    follow(mine);
    return;
  }
  // An ended job: replay its stored events once (the stream ends by itself) and show the report.
  mine.reportLoaded = true;
  follow(mine, { once: true });
  if (mine.job.status === "COMPLETED") await loadReport(mine);
}

async function refresh(mine) {
  const job = await json(`/v1/research/${encodeURIComponent(mine.id)}`, { signal: mine.controller.signal });
  if (watch !== mine) return;
  mine.job = job;
  renderJob(job);
}

function refreshSoon(mine) {
  if (mine.pending) return; // at most one snapshot request per 300 ms, however many events
  mine.pending = setTimeout(async () => {
    mine.pending = null;
    if (watch !== mine) return;
    try {
      await refresh(mine);
    } catch (err) {
      if (err?.name !== "AbortError") logLine(describeError(err));
    }
    if (watch === mine && TERMINAL.has(mine.job.status) && !mine.reportLoaded) {
      mine.reportLoaded = true;
      if (mine.job.status === "COMPLETED") await loadReport(mine);
    }
  }, 300);
}

async function follow(mine, { once = false } = {}) {
  let lastId = null;
  for (let attempt = 0; watch === mine && attempt < 50; attempt++) {
    try {
      const extraHeaders = lastId !== null ? { "Last-Event-ID": lastId } : undefined;
      const response = await request(`/v1/research/${encodeURIComponent(mine.id)}/events`, {
        accept: "text/event-stream",
        signal: mine.controller.signal,
        extraHeaders,
      });
      await readEvents(response, (ev) => {
        if (ev.id !== null) lastId = ev.id; // resume after it if the stream breaks
        const data = eventJson(ev);
        if (data && typeof data === "object") {
          const text = data.message || data.stage || ev.event;
          if (text) logLine(String(text));
        }
        if (!once) refreshSoon(mine);
      });
      if (once) return;
    } catch (err) {
      if (err?.name === "AbortError") return;
      logLine(`Live updates interrupted (${describeError(err)}); reconnecting…`);
    }
    if (watch !== mine) return;
    await refresh(mine).catch(() => {});
    if (mine.job && TERMINAL.has(mine.job.status)) {
      refreshSoon(mine);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

function logLine(text) {
  const log = byId("job-log");
  log.append(h("li", {}, text));
  while (log.childNodes.length > 8) log.firstChild.remove();
  show(byId("job-log-box"), true);
}

function usageOf(job) {
  const usage = job.usage || {};
  const tokens = typeof usage.tokens === "object" && usage.tokens ? usage.tokens.total ?? 0 : usage.tokens;
  return { llm: usage.llm_calls ?? 0, tokens: tokens ?? 0 };
}

function elapsedOf(job) {
  const start = Date.parse(job.created_at);
  if (!Number.isFinite(start)) return NaN;
  const end = TERMINAL.has(job.status) ? Date.parse(job.updated_at || job.finished_at) : Date.now();
  return (end - start) / 1000;
}

function tickElapsed() {
  if (watch?.job && !TERMINAL.has(watch.job.status)) fill(byId("stat-elapsed"), duration(elapsedOf(watch.job)));
}

function stageStates(job) {
  // ResearchJobView: status (PENDING...COMPLETED, FAILED, CANCELLED, INTERRUPTED) and stage (the
  // stage it is in, or where it failed, was cancelled or interrupted). Stages before it are done.
  const status = String(job.status || "PENDING");
  const at = STAGES.indexOf(String(job.stage || status));
  return STAGES.map((stage, i) => {
    if (status === "COMPLETED") return "done";
    if (i < at) return "done";
    if (i === at) return TERMINAL.has(status) || status === "INTERRUPTED" ? "stopped" : "current";
    return "todo";
  });
}

function renderJob(job) {
  fill(byId("job-question"), job.question || job.id);
  const status = String(job.status || "PENDING");
  const badge = byId("job-status");
  fill(badge, STAGE_TEXT[status] || status);
  badge.className = `badge status status-${status.toLowerCase()}`;
  const steps = clear(byId("stages"));
  stageStates(job).forEach((state, i) => {
    steps.append(
      h("li", { class: `step step-${state}`, "aria-current": state === "current" ? "step" : null }, STAGE_TEXT[STAGES[i]]),
    );
  });
  const subs = job.sub_questions || job.plan?.sub_questions || [];
  const finished = subs.filter((q) => q.status === "COMPLETED" || q.status === "SKIPPED").length;
  const { llm, tokens } = usageOf(job);
  fill(byId("stat-articles"), String(job.articles ?? job.articles_retrieved ?? 0));
  fill(byId("stat-subs"), subs.length ? `${finished} / ${subs.length}` : "–");
  fill(byId("stat-llm"), String(llm));
  fill(byId("stat-tokens"), Number(tokens).toLocaleString());
  fill(byId("stat-elapsed"), duration(elapsedOf(job)));
  const list = clear(byId("sub-questions"));
  for (const q of subs) {
    const st = String(q.status || "PENDING");
    list.append(
      h(
        "li",
        { class: q.parent_id ? "follow-up" : "" },
        h("span", { class: `badge sq sq-${st.toLowerCase()}` }, st.replace("_", " ").toLowerCase()),
        " ",
        // The id the events name ("q2: 3 of 5 read").
        q.id ? h("span", { class: "sq-id" }, `${q.id} `) : null,
        h("span", { class: "sq-text" }, q.text),
        q.articles_found
          ? h("span", { class: "sq-meta" }, ` · ${q.articles_found} article${q.articles_found === 1 ? "" : "s"}`)
          : null,
        q.from_cache ? h("span", { class: "sq-meta" }, " · from cached evidence") : null,
        q.skip_reason ? h("span", { class: "sq-meta" }, ` · ${q.skip_reason}`) : null,
      ),
    );
  }
  show(byId("sub-questions-box"), subs.length > 0);
  show(byId("job-cancel"), !TERMINAL.has(status));
  if (status === "FAILED") showError(`the job failed while ${String(job.stage || "").toLowerCase() || "running"}: ${job.error || "no reason given"}`);
  else if (status === "CANCELLED") showError("the job was cancelled.");
  if (status === "INTERRUPTED") {
    // Not ended: its work so far is kept, and a research worker (or `medlit research resume`)
    // continues it; the page goes on following it.
    const where = String(job.stage || "").toLowerCase();
    fill(byId("job-note"), `Interrupted${where ? ` while ${where}` : ""}; its work so far is kept. It resumes when a research worker is free (or: medlit research resume ${job.id}).`);
  } else {
    fill(byId("job-note"), job.budget_stop_reason ? `Stopped early by its budget: ${job.budget_stop_reason}.` : "");
  }
}

async function loadReport(mine) {
  try {
    const response = await request(`/v1/research/${encodeURIComponent(mine.id)}/report`, {
      accept: "text/markdown",
      signal: mine.controller.signal,
    });
    const markdown = await response.text();
    const rendered = await json("/web/render", { method: "POST", body: { markdown }, signal: mine.controller.signal });
    if (watch !== mine) return;
    mine.markdown = markdown;
    placeReport(rendered.html, mine.job);
    show(byId("report-box"), true);
    // The report is what a finished job is read for: its trail folds into one line above it
    // (on a phone it pushed the report a screen or two down); a click shows it again.
    byId("job-trail").open = false;
    performance.mark("research:report-rendered");
  } catch (err) {
    if (err?.name !== "AbortError") showError(`the report could not be shown: ${describeError(err)}`);
  }
}

/**
 * Put the server-rendered report into the page. The HTML was produced by markdown-it with raw
 * HTML disabled and then cleaned by nh3 (an allow-list sanitiser); it is parsed in an inert
 * document first, and the page's Content-Security-Policy forbids inline script besides.
 */
function placeReport(html, job) {
  const doc = new DOMParser().parseFromString(`<body>${html}</body>`, "text/html");
  const report = clear(byId("report"));
  report.append(...Array.from(doc.body.childNodes, (n) => document.adoptNode(n)));
  linkReferences(report);
  enhanceEvidenceTable(report);
  placeFlow(report);
  foldBookkeeping(report);
  report.prepend(readerSummary(job, report));
}

/** The report's first lines for a reader: what was found, how sure, what is missing. */
function readerSummary(job, report) {
  const cited = report.querySelectorAll("#references > li").length;
  const read = Number(job?.articles ?? 0);
  const facts = Number(job?.facts ?? 0);
  const conflicts = Number(job?.discrepancies ?? 0);
  const subs = job?.sub_questions || [];
  const missing = subs.filter((q) => q.status === "SKIPPED" || q.status === "FAILED" || (q.status === "COMPLETED" && !q.articles_found));
  const found = cited
    ? `${cited} article${cited === 1 ? "" : "s"} cited, of ${read} read.`
    : `No article could be cited (${read} read).`;
  const sure = !cited
    ? "Not sure at all: nothing here rests on a cited article."
    : `${facts} finding${facts === 1 ? "" : "s"} checked against the abstracts` +
      (conflicts ? `; ${conflicts} point${conflicts === 1 ? "" : "s"} where the sources disagree (see Discrepancies).` : "; the sources found do not contradict each other.");
  const gaps = missing.length
    ? `${missing.length} of ${subs.length} sub-question${subs.length === 1 ? "" : "s"} found no usable evidence: ` +
      missing.map((q) => `“${q.text}”`).join("; ") + "."
    : "Every sub-question found evidence; the report covers only what the retrieved abstracts say.";
  return h(
    "section",
    { id: "reader-summary", class: "reader-summary", "aria-label": "At a glance" },
    h("h2", {}, "At a glance"),
    h("dl", {},
      h("dt", {}, "What was found"), h("dd", {}, found),
      h("dt", {}, "How sure"), h("dd", {}, sure),
      h("dt", {}, "What is missing"), h("dd", {}, gaps),
    ),
  );
}

/**
 * The pipeline's own notes (the Limitations list: drafts left out, sections marked short) go
 * behind one "details" toggle before the references: they say how the report was made, not
 * what the literature says. Each section's evidence-quality note stays with its section.
 */
function foldBookkeeping(report) {
  const notes = [];
  const limits = Array.from(report.querySelectorAll("h2")).find((el) => el.textContent.trim() === "Limitations");
  if (limits) {
    let node = limits.nextElementSibling;
    limits.remove();
    while (node && node.tagName !== "H2") {
      const next = node.nextElementSibling;
      notes.push(node);
      node = next;
    }
  }
  if (!notes.length) return;
  const details = h(
    "details",
    { id: "report-details", class: "report-details" },
    h("summary", {}, "Details: how this report was made"),
    ...notes,
  );
  const refs = Array.from(report.querySelectorAll("h2")).find((el) => el.textContent.trim() === "References");
  if (refs) refs.before(details);
  else report.append(details);
}

/** Give reference items ids and turn "[1, 2]" in the text into links to them (text nodes only).
 * A click scrolls to the reference and leaves the address (the view's route) as it is. */
function linkReferences(root) {
  const heading = Array.from(root.querySelectorAll("h2")).find((el) => el.textContent.trim() === "References");
  const refs = heading?.nextElementSibling?.tagName === "OL" ? heading.nextElementSibling : null;
  if (!refs) return;
  refs.id = "references";
  const start = Number(refs.getAttribute("start") || 1);
  Array.from(refs.children).forEach((li, i) => (li.id = `ref-${start + i}`));
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const targets = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (refs.contains(node) || node.parentElement.closest("a, code, pre")) continue;
    if (/\[\d+(?:,\s*\d+)*\]/.test(node.data)) targets.push(node);
  }
  for (const node of targets) {
    const parts = [];
    let at = 0;
    for (const m of node.data.matchAll(/\[(\d+(?:,\s*\d+)*)\]/g)) {
      parts.push(node.data.slice(at, m.index), "[");
      m[1].split(/,\s*/).forEach((n, i) => {
        if (i) parts.push(", ");
        parts.push(root.querySelector(`#ref-${n}`) ? h("a", { href: `#ref-${n}`, class: "ref-link" }, n) : n);
      });
      parts.push("]");
      at = m.index + m[0].length;
    }
    parts.push(node.data.slice(at));
    const span = append(document.createDocumentFragment(), parts);
    node.replaceWith(span);
  }
}

/** A click on "[3]" in the report: scroll to reference 3, without touching the route. */
function followReference(event) {
  const report = byId("report");
  const link = event.target.closest?.("a.ref-link");
  if (!link || !report.contains(link)) return;
  event.preventDefault();
  const target = report.querySelector(link.getAttribute("href"));
  if (!target) return;
  target.setAttribute("tabindex", "-1");
  target.scrollIntoView({ block: "center" });
  target.focus({ preventScroll: true });
  target.classList.add("ref-target");
  setTimeout(() => target.classList.remove("ref-target"), 2000);
}

async function exportAs(format, extension) {
  if (!watch) return;
  try {
    const response = await request(`/v1/research/${encodeURIComponent(watch.id)}/export?format=${format}`);
    download(await response.blob(), `medlit-${watch.id}.${extension}`);
  } catch (err) {
    showError(`the export failed: ${describeError(err)}`);
  }
}

async function cancelJob() {
  if (!watch) return;
  try {
    await request(`/v1/research/${encodeURIComponent(watch.id)}/cancel`, { method: "POST" });
    logLine("Cancellation requested; the job stops at its next step.");
    refreshSoon(watch);
  } catch (err) {
    showError(describeError(err));
  }
}

/** Wire the Research view's controls. */
export function initResearch() {
  byId("research-form").addEventListener("submit", startJob);
  byId("report").addEventListener("click", followReference);
  byId("research-question").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      byId("research-form").requestSubmit();
    }
  });
  byId("download-md").addEventListener("click", () => {
    if (watch?.markdown) download(watch.markdown, `medlit-${watch.id}.md`, "text/markdown");
  });
  byId("print-report").addEventListener("click", () => window.print());
  byId("export-ris").addEventListener("click", () => exportAs("ris", "ris"));
  byId("export-bibtex").addEventListener("click", () => exportAs("bibtex", "bib"));
  byId("export-csv").addEventListener("click", () => exportAs("csv", "csv"));
  byId("job-cancel").addEventListener("click", cancelJob);
  byId("refresh-jobs").addEventListener("click", loadJobs);
}
