// The page's entry point: routing between the Ask and Research views, and the API-key prompt.

import { apiKey, onAuthNeeded, setApiKey } from "./api.js";
import { initAsk } from "./ask.js";
import { byId, fill, show } from "./dom.js";
import { initResearch, showJob, showResearchHome } from "./research.js";

/** Ask the user for an API key in a modal dialog; resolves with the key or "" if dismissed. */
function promptForKey(reason) {
  const dialog = byId("key-dialog");
  const input = byId("api-key-input");
  fill(byId("key-reason"), reason || "This medlit service needs an API key. It is kept for this browser tab only.");
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

function init() {
  onAuthNeeded(promptForKey);
  const forget = byId("forget-key");
  forget.addEventListener("click", () => {
    setApiKey("");
    fill(byId("forget-key-status"), "API key forgotten for this tab.");
  });
  const showForget = () => show(forget, Boolean(apiKey()));
  window.addEventListener("medlit:key", showForget);
  showForget();
  initAsk();
  initResearch();
  window.addEventListener("hashchange", route);
  route();
  document.documentElement.dataset.ready = "true";
}

init();
