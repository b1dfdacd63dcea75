// mlsysim_nb live memory bar: stacked horizontal bars (GB) against the device's
// capacity line, drawn as SVG from numbers computed in Python. Hover a segment
// for its value; bars glide to new widths when the model changes. Every number is
// spelled in Python (the derivation's formatter), so chart and text agree.
const SVG = "http://www.w3.org/2000/svg";
const W = 560, LEFT = 150, ROW = 34, TOP = 40, RIGHT = 70, LEGEND = 22;
// a caption line holds about this many characters of 12px bold text in the picture's width
const CAPTION_CHARS = 80, CAPTION_LINE = 15, CHAR = 7;

// the caption in lines of at most CAPTION_CHARS characters, broken between words (never cut)
function wrapped(text) {
  const lines = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > CAPTION_CHARS) { lines.push(line); line = word; }
    else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

function node(tag, attrs, parent) {
  const n = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, v);
  if (parent) parent.appendChild(n);
  return n;
}

function render({ model, el }) {
  const root = document.createElement("div");
  root.className = "msn-bar";
  const svg = node("svg", { role: "img" });
  const tip = document.createElement("div");
  tip.className = "msn-bar-tip";
  root.append(svg, tip);
  el.appendChild(root);
  const rects = new Map();

  function draw() {
    const bars = model.get("bars") || [];
    const cap = model.get("capacity");
    const highlight = model.get("highlight");
    const max = Math.max(cap || 0, ...bars.map((b) => b.total_gb), 1e-9) * 1.08;
    const captionLines = wrapped(model.get("caption") || "");
    const top = TOP + CAPTION_LINE * Math.max(captionLines.length - 1, 0);
    const height = top + ROW * bars.length + 8 + LEGEND;
    const x = (gb) => LEFT + (gb / max) * (W - LEFT - RIGHT);
    svg.setAttribute("viewBox", `0 0 ${W} ${height}`);
    svg.setAttribute("width", W);
    svg.setAttribute("height", height);
    svg.setAttribute("aria-label", model.get("summary") || "memory bar chart");
    for (const n of Array.from(svg.querySelectorAll(".msn-bar-static"))) n.remove();
    if (captionLines.length) {
      const ok = model.get("ok");
      const c = node("text", { x: 4, y: 12, class: "msn-bar-static msn-bar-caption" }, svg);
      if (ok === true) c.classList.add("msn-bar-ok");
      if (ok === false) c.classList.add("msn-bar-bad");
      captionLines.forEach((text, i) => {
        node("tspan", { x: 4, dy: i ? CAPTION_LINE : 0 }, c).textContent = text;
      });
    }
    const seen = new Set();
    bars.forEach((bar, i) => {
      const y = top + i * ROW;
      const label = node("text", { x: LEFT - 8, y: y + ROW / 2, class: "msn-bar-static msn-bar-label", "text-anchor": "end", "dominant-baseline": "middle" }, svg);
      label.textContent = bar.label;
      if (bar.label === highlight) label.classList.add("msn-bar-highlight");
      let left = 0;
      bar.parts.forEach((part) => {
        const key = `${i}:${part.name}`;
        seen.add(key);
        let r = rects.get(key);
        if (!r) {
          r = node("rect", { class: "msn-bar-part", height: ROW - 12 }, svg);
          r.addEventListener("mousemove", (ev) => {
            tip.textContent = r.dataset.tip;
            tip.style.display = "block";
            const box = root.getBoundingClientRect();
            tip.style.left = `${ev.clientX - box.left + 12}px`;
            tip.style.top = `${ev.clientY - box.top + 12}px`;
          });
          r.addEventListener("mouseleave", () => { tip.style.display = "none"; });
          rects.set(key, r);
        }
        r.setAttribute("y", y + 6);
        r.setAttribute("fill", part.color);
        r.style.x = `${x(left)}px`;
        r.style.width = `${Math.max(0, x(left + part.gb) - x(left))}px`;
        r.dataset.tip = `${bar.label} · ${part.name}: ${part.text}`;
        left += part.gb;
      });
      // the total beside its bar; where the capacity line would run through it, past the line
      let tx = x(left) + 6;
      if (cap && tx - 3 <= x(cap) && x(cap) <= tx + CHAR * bar.total_text.length + 3) tx = x(cap) + 6;
      const total = node("text", { x: tx, y: y + ROW / 2, class: "msn-bar-static msn-bar-total", "dominant-baseline": "middle", "data-gb": bar.total_gb }, svg);
      total.textContent = bar.total_text;
    });
    for (const [key, r] of rects) if (!seen.has(key)) { r.remove(); rects.delete(key); }
    const barsBottom = height - LEGEND;
    if (cap) {
      node("line", { x1: x(cap), x2: x(cap), y1: top - 6, y2: barsBottom - 4, class: "msn-bar-static msn-bar-cap" }, svg);
      // near the right edge the label sits on the line's left, so it stays inside the picture
      const anchor = x(cap) > W * 0.6 ? "end" : "middle";
      const t = node("text", { x: x(cap), y: top - 10, class: "msn-bar-static msn-bar-caplabel", "text-anchor": anchor }, svg);
      t.textContent = model.get("capacity_label");
    }
    // the legend: each part's colour once, as the static chart has it
    const colours = new Map();
    bars.forEach((bar) => bar.parts.forEach((part) => { if (!colours.has(part.name)) colours.set(part.name, part.color); }));
    let lx = 4;
    for (const [name, color] of colours) {
      node("rect", { x: lx, y: barsBottom + 6, width: 10, height: 10, fill: color, class: "msn-bar-static" }, svg);
      const label = node("text", { x: lx + 14, y: barsBottom + 15, class: "msn-bar-static msn-bar-legend" }, svg);
      label.textContent = name;
      lx += 22 + 6.5 * name.length;
    }
  }

  // redraw on every trait the picture shows (a device switch changes only the label, say)
  for (const trait of ["bars", "capacity", "capacity_label", "highlight", "summary", "caption", "ok"]) {
    model.on(`change:${trait}`, draw);
  }
  draw();
  return () => root.remove();
}

export default { render };
