// The research report's evidence table made sortable (click a column heading) and filterable by
// study design. The table itself is the server-rendered, sanitised report's (see research.js):
// this only reorders and hides its rows, building the filter with h() (no HTML parsing). Each
// cell is given its column's name (data-label), which a phone shows above the cell when the
// rows stack as cards (app.css), so the table never scrolls sideways.

import { h } from "./dom.js";

const DESIGN_COLUMN = 1;

/** Find the table under the report's "Evidence table" heading and give it sorting and a filter. */
export function enhanceEvidenceTable(root) {
  const heading = Array.from(root.querySelectorAll("h2")).find((el) => el.textContent.trim() === "Evidence table");
  const table = heading?.nextElementSibling?.tagName === "TABLE" ? heading.nextElementSibling : null;
  const body = table?.tBodies[0];
  if (!table || !body) return null;
  table.id = "evidence-table";
  table.classList.add("evidence-table");
  const rows = Array.from(body.rows);
  const names = Array.from(table.tHead?.rows[0]?.cells || [], (th) => th.textContent.trim());
  for (const row of rows) Array.from(row.cells).forEach((cell, column) => cell.setAttribute("data-label", names[column] || ""));
  const designs = [...new Set(rows.map((row) => row.cells[DESIGN_COLUMN]?.textContent.trim() || ""))].sort();
  const filter = h(
    "select",
    { id: "evidence-design", "aria-label": "Show studies of this design" },
    h("option", { value: "" }, `all designs (${rows.length})`),
    designs.map((design) =>
      h("option", { value: design }, `${design} (${rows.filter((r) => r.cells[DESIGN_COLUMN].textContent.trim() === design).length})`),
    ),
  );
  filter.addEventListener("change", () => {
    for (const row of rows) row.hidden = Boolean(filter.value) && row.cells[DESIGN_COLUMN].textContent.trim() !== filter.value;
  });
  table.before(h("p", { class: "evidence-filter" }, h("label", { for: "evidence-design" }, "Design: "), filter));
  Array.from(table.tHead?.rows[0]?.cells || []).forEach((th, column) => {
    th.setAttribute("aria-sort", "none");
    const button = h("button", { type: "button", class: "sort" }, th.textContent);
    th.replaceChildren(button);
    button.addEventListener("click", () => sortBy(table, body, column, th));
  });
  return table;
}

function sortBy(table, body, column, th) {
  const ascending = th.getAttribute("aria-sort") !== "ascending";
  for (const other of table.tHead.rows[0].cells) other.setAttribute("aria-sort", "none");
  th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  const key = (row) => row.cells[column]?.textContent.trim() || "";
  const sorted = Array.from(body.rows).sort((a, b) => {
    const order = key(a).localeCompare(key(b), undefined, { numeric: true, sensitivity: "base" });
    return ascending ? order : -order;
  });
  body.append(...sorted);
}

/**
 * Give the report's PRISMA-style flow its place: the drawing under "Flow of records" is the
 * report's own (an SVG the server drew and the renderer let through as an image, see
 * medlit.research.flow_diagram); it goes into a figure scaled to the column, and the counts
 * table, kept for screen readers and copying, folds under it.
 */
export function placeFlow(root) {
  const heading = Array.from(root.querySelectorAll("h3")).find((el) => el.textContent.trim() === "Flow of records");
  let node = heading?.nextElementSibling;
  const image = node?.tagName === "P" ? node.querySelector("img") : null;
  if (!image) return null;
  const figure = h("figure", { id: "flow-diagram", class: "flow" });
  image.classList.add("flow-diagram");
  figure.append(image);
  node.replaceWith(figure);
  node = figure.nextElementSibling;
  if (node?.tagName === "TABLE") {
    const folded = h("details", { class: "flow-table" }, h("summary", {}, "The counts as a table"));
    node.replaceWith(folded);
    folded.append(node);
  }
  return figure;
}
