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

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs = {}, text = "") {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
  if (text) el.textContent = text;
  return el;
}

/** The counts of the report's "Flow of records" table: [[step, count], ...]. */
function flowCounts(table) {
  return Array.from(table.tBodies[0]?.rows || [], (row) => [row.cells[0]?.textContent.trim() || "", Number(row.cells[1]?.textContent.trim() || 0)]);
}

/**
 * Draw the report's PRISMA-style flow (the table under "Flow of records") as a diagram: the
 * records identified, screened and included down the middle, what was removed or excluded at
 * each step in boxes beside them. An SVG built node by node (no markup parsed), scaled to the
 * page's width; the table stays for screen readers and copying, folded under the drawing.
 */
export function drawFlow(root) {
  const heading = Array.from(root.querySelectorAll("h3")).find((el) => el.textContent.trim() === "Flow of records");
  const table = heading?.nextElementSibling?.tagName === "TABLE" ? heading.nextElementSibling : null;
  if (!table) return null;
  const counts = flowCounts(table);
  const get = (name) => counts.find(([step]) => step === name)?.[1] ?? 0;
  const excluded = counts.filter(([step]) => step.startsWith("Excluded: "));
  const main = [
    ["Records identified", get("Records identified")],
    ["Articles screened", get("Articles screened")],
    ["Included (evidence)", get("Included (evidence)")],
  ];
  const side = [
    [`Not English: ${get("Not English (removed)")}`, `Duplicates: ${get("Duplicates removed")}`],
    excluded.length ? excluded.map(([step, n]) => `${step.replace("Excluded: ", "")}: ${n}`) : ["none excluded"],
  ];
  const boxW = 220, boxH = 52, gap = 40, sideX = 280, sideW = 250, line = 18;
  const sideH = side.map((lines) => Math.max(boxH, 14 + line * (lines.length + 1)));
  const rowH = main.map((_, i) => Math.max(boxH, sideH[i] || 0) + gap);
  const height = rowH.reduce((a, b) => a + b, 0) - gap + 2;
  const drawing = svg("svg", {
    viewBox: `0 0 ${sideX + sideW + 2} ${height}`, class: "flow-diagram", role: "img",
    "aria-label": counts.map(([step, n]) => `${step}: ${n}`).join("; "),
  });
  const defs = svg("defs");
  const marker = svg("marker", { id: "flow-arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
  marker.append(svg("path", { d: "M0,0 L10,5 L0,10 z", class: "flow-arrowhead" }));
  defs.append(marker);
  drawing.append(defs);
  let y = 1;
  main.forEach(([label, n], i) => {
    drawing.append(svg("rect", { x: 1, y, width: boxW, height: boxH, rx: 6, class: "flow-box" }));
    drawing.append(svg("text", { x: 1 + boxW / 2, y: y + 22, "text-anchor": "middle", class: "flow-label" }, label));
    drawing.append(svg("text", { x: 1 + boxW / 2, y: y + 42, "text-anchor": "middle", class: "flow-count" }, String(n)));
    if (side[i]) {
      const lines = side[i];
      const title = i === 0 ? "Removed" : "Excluded";
      drawing.append(svg("rect", { x: sideX, y, width: sideW, height: sideH[i], rx: 6, class: "flow-box flow-side" }));
      [title, ...lines].forEach((text, k) =>
        drawing.append(svg("text", { x: sideX + 10, y: y + 20 + k * line, class: k ? "flow-note" : "flow-label" }, text)),
      );
      drawing.append(svg("line", { x1: 1 + boxW, y1: y + boxH / 2, x2: sideX - 2, y2: y + boxH / 2, class: "flow-edge", "marker-end": "url(#flow-arrow)" }));
    }
    if (i < main.length - 1) {
      const next = y + rowH[i];
      drawing.append(svg("line", { x1: 1 + boxW / 2, y1: y + boxH, x2: 1 + boxW / 2, y2: next - 2, class: "flow-edge", "marker-end": "url(#flow-arrow)" }));
    }
    y += rowH[i];
  });
  const figure = h("figure", { id: "flow-diagram", class: "flow" }, drawing);
  const folded = h("details", { class: "flow-table" }, h("summary", {}, "The counts as a table"));
  table.replaceWith(figure);
  folded.append(table);
  figure.after(folded);
  return figure;
}
