// The page's entry point: routing between the Ask and Research views, and the API-key prompt.

import { apiKey, onAuthNeeded, setApiKey } from "./api.js";
import { initAsk, resetAsk } from "./ask.js";
import { byId, fill, show } from "./dom.js";
import { initResearch, resetResearch, showJob, showResearchHome } from "./research.js";

const KEY_HELP =
  "Whoever runs this medlit service creates keys on the server with " +
  "`medlit keys create --tenant NAME` and gives you one. It is kept for this browser tab only.";

/** Ask the user for an API key in a modal dialog; resolves with the key or "" if dismissed. */
function promptForKey(reason) {
  const dialog = byId("key-dialog");
  const input = byId("api-key-input");
  fill(byId("key-reason"), reason || "This medlit service needs an API key.");
  fill(byId("key-help"), KEY_HELP);
  input.value = "";
  return new Promise((resolve) => {
    const done = () => {
      dialog.removeEventListener("close", done);
      const key = dialog.returnValue === "save" ? input.value.trim() : "";
      resolve(key);
    };
    dialog.addEventListener("close", done);
    dialog.showModal();
    input.focus();
  });
}

function route() {
  const hash = location.hash || "#/";
  // "#ref-3", "#main": a place in the page, not a view (the report's links scroll to their
  // reference themselves).
  if (!hash.startsWith("#/")) return;
  const match = hash.match(/^#\/research(?:\/([^/?#]+))?/);
  const onResearch = Boolean(match);
  show(byId("ask-view"), !onResearch);
  show(byId("research-view"), onResearch);
  byId("tab-ask").setAttribute("aria-current", onResearch ? "false" : "page");
  byId("tab-research").setAttribute("aria-current", onResearch ? "page" : "false");
  if (!onResearch) {
    document.title = "medlit · Ask";
    return;
  }
  document.title = "medlit · Research";
  if (match[1]) showJob(decodeURIComponent(match[1]));
  else showResearchHome();
}

/** Enter (or replace) the API key from the header, before any question. */
async function enterKey() {
  const key = await promptForKey(apiKey() ? "Replace the API key this tab uses." : "");
  if (!key) return;
  forgetViews(); // another key may be another tenant: nothing of the last one stays
  setApiKey(key);
  show(byId("key-needed"), false);
  route();
}

/** Clear everything the last key's tenant could see: answer, conversation, jobs, report. */
function forgetViews() {
  resetAsk();
  resetResearch();
}

/** Whether this service wants a key the tab does not have: then say so at once. */
async function checkKeyNeeded() {
  if (apiKey()) return;
  try {
    const response = await fetch("/v1/cache/stats", { headers: { Accept: "application/json" } });
    show(byId("key-needed"), response.status === 401);
  } catch {
    // The service is not reachable: the first question says so.
  }
}

function init() {
  onAuthNeeded(promptForKey);
  const forget = byId("forget-key");
  forget.addEventListener("click", () => {
    setApiKey("");
    forgetViews();
    fill(byId("forget-key-status"), "API key forgotten for this tab; its answers and jobs are cleared.");
    checkKeyNeeded();
  });
  for (const id of ["enter-key", "key-needed-button"]) byId(id).addEventListener("click", enterKey);
  const showForget = () => {
    show(forget, Boolean(apiKey()));
    fill(byId("enter-key"), apiKey() ? "Change API key" : "API key");
  };
  window.addEventListener("medlit:key", showForget);
  showForget();
  checkKeyNeeded();
  initAsk();
  initResearch();
  window.addEventListener("hashchange", route);
  route();
  document.documentElement.dataset.ready = "true";
}

init();
