// The play page's world: the seat's view of the map drawn as the replay draws the map (its terrain
// colours, agents as dots), the seat marked "you", other agents by id with their names, and beside it
// the seat's state, goods, offers, agents and messages; last tick's outcome as a banner. A click chooses
// an action (a tile: one step toward it, your own tile: gather; a button: eat, accept an offer ...) and
// `fill` puts it in the next empty row of the action form, which sends it.
const STEPS = {north: [0, -1], south: [0, 1], west: [-1, 0], east: [1, 0]};

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text != null) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

function button(text, action, label) {
  const b = el("button", text);
  b.type = "button";
  b.dataset.action = JSON.stringify(action);
  if (label) b.setAttribute("aria-label", label);
  return b;
}

// one step from (x, y) toward (tx, ty): along the longer way first, as a person walks toward it
export function stepToward(x, y, tx, ty) {
  const dx = tx - x, dy = ty - y;
  if (!dx && !dy) return null;
  if (Math.abs(dx) >= Math.abs(dy)) return dx > 0 ? "east" : "west";
  return dy > 0 ? "south" : "north";
}

// an action as a person reads it: "move north", "accept offer 3"
export function actionWords(a) {
  const rest = Object.entries(a).filter(([k]) => k !== "action").map(([k, v]) => (k === "direction" ? v : `${k.replace("_", " ")} ${v}`));
  return [a.action, ...rest].join(" ");
}

export function worldView(root, {legend, fill}) {
  const map = root.querySelector("#world-map");
  const colors = Object.fromEntries(legend.map((t) => [t.glyph, t.color]));
  const names = Object.fromEntries(legend.map((t) => [t.glyph, t.terrain + (t.goods ? ` (${t.goods})` : "")]));
  let state = null, before = null, on = false;

  function pick(action) {
    if (on) fill(action);
  }

  function drawMap(s) {
    const r = (s.view.length - 1) / 2, you = s.you;
    const goods = new Map(s.resources.map((t) => [`${t.x},${t.y}`, t]));
    const agents = new Map(s.agents.map((a) => [`${a.x},${a.y}`, a]));
    map.style.gridTemplateColumns = `repeat(${s.view.length}, var(--cell))`;
    const cells = [];
    s.view.forEach((row, j) => [...row].forEach((glyph, i) => {
      const x = you.x - r + i, y = you.y - r + j, key = `${x},${y}`;
      const cell = el("button", null, "cell");
      cell.type = "button";
      cell.dataset.x = x; cell.dataset.y = y;
      if (glyph === " ") {
        cell.classList.add("beyond"); cell.disabled = true;
        cell.setAttribute("aria-label", `(${x},${y}): beyond the map`);
        cells.push(cell);
        return;
      }
      cell.style.background = colors[glyph] || "#fff";
      const here = x === you.x && y === you.y, other = agents.get(key), pool = goods.get(key);
      let words = `(${x},${y}) ${names[glyph] || glyph}`;
      if (pool) { words += `, ${pool.amount} ${pool.resource}`; cell.append(el("small", String(pool.amount), "amount")); }
      if (here) { cell.classList.add("you"); cell.append(el("span", "you", "you-mark")); words += ": you (click to gather here)"; }
      else if (other) { cell.append(el("span", `#${other.id}`, "agent-dot")); words += `: #${other.id} ${other.name}`; }
      const step = stepToward(you.x, you.y, x, y);
      if (!here) words += `; click to move ${step}`;
      cell.title = words;
      cell.setAttribute("aria-label", words);
      cell.onclick = () => pick(here ? {action: "gather"} : {action: "move", direction: step});
      cells.push(cell);
    }));
    map.replaceChildren(...cells);
  }

  function list(id, items, render, none) {
    const ul = root.querySelector(id);
    ul.replaceChildren(...(items.length ? items.map((x) => { const li = el("li"); render(li, x); return li; }) : [el("li", none, "hint")]));
  }

  function drawSide(s) {
    const you = s.you, dl = root.querySelector("#you");
    const was = before && before.you;
    const change = (k) => (was && was[k] !== you[k] ? ` (was ${was[k]})` : "");
    dl.replaceChildren();
    [["Name", `#${you.id} ${you.name}`], ["At", `(${you.x},${you.y})`], ["Health", `${you.health} of 100${change("health")}`],
     ["Satiety", `${you.satiety} of 100${change("satiety")}`], ["Shelter", you.shelter ? "built" : "none"],
     ["Tool", you.tool ? "crafted" : "none"]].forEach(([k, v]) => { dl.append(el("dt", k), el("dd", v)); });
    const goods = root.querySelector("#goods");
    goods.replaceChildren(...Object.entries(you.inventory).map(([k, v]) => {
      const tr = el("tr"); tr.append(el("th", k), el("td", String(v))); return tr;
    }));
    list("#offers-to-you", s.offers_to_you, (li, o) => {
      li.append(`Offer ${o.offer_id} from #${o.from}: you get ${o.give_qty} ${o.give} for ${o.want_qty} ${o.want}, until tick ${o.expires_tick} `,
        button("Accept", {action: "accept", offer_id: o.offer_id}, `Accept offer ${o.offer_id}`), " ",
        button("Decline", {action: "decline", offer_id: o.offer_id}, `Decline offer ${o.offer_id}`));
    }, "none");
    list("#your-offers", s.your_offers, (li, o) => {
      li.append(`Offer ${o.offer_id} to #${o.to}: you give ${o.give_qty} ${o.give} for ${o.want_qty} ${o.want}, until tick ${o.expires_tick}`);
    }, "none");
    list("#agents-in-view", s.agents, (li, a) => {
      li.append(el("span", `#${a.id}`, "agent-dot"), ` ${a.name} at (${a.x},${a.y})`,
        a.shelter ? ", shelter" : "", a.tool ? ", tool" : "");
    }, "nobody in view");
    list("#messages", s.messages, (li, m) => { li.append(`#${m.from}: ${m.text}`); }, "none");
  }

  function banner(s) {
    const b = document.querySelector('[data-testid="last-outcome"]');
    if (!s.last_actions.length) { b.hidden = true; return; }
    b.hidden = false;
    b.classList.toggle("refused", s.last_actions.some((a) => !a.ok));
    b.textContent = `Tick ${s.tick - 1}: ` + s.last_actions.map((a) => (a.ok ? `${a.action} done` : `${a.action} refused (${a.reason})`)).join("; ") + ".";
  }

  root.querySelectorAll("[data-quick]").forEach((b) => { b.onclick = () => pick({action: b.dataset.quick}); });
  root.addEventListener("click", (e) => {
    const b = e.target.closest("button[data-action]");
    if (b) pick(JSON.parse(b.dataset.action));
  });

  return {
    get shown() { return state !== null; },
    show(s) {
      if (state && s.tick === state.tick) return;
      before = state; state = s;
      drawMap(s); drawSide(s); banner(s);
    },
    enable(yes) {
      on = yes;
      root.querySelectorAll(".world-play button").forEach((b) => { b.disabled = !yes || b.classList.contains("beyond"); });
      // gathering takes goods from your own tile: where it holds none (grass, an emptied pool) it would be refused
      const gather = root.querySelector('[data-quick="gather"]');
      if (gather && state) {
        const pool = state.resources.find((t) => t.x === state.you.x && t.y === state.you.y);
        const some = pool && pool.amount >= 1;
        if (!some) gather.disabled = true;
        gather.title = some ? `gather ${pool.resource} here (${pool.amount} left)` : "nothing to gather on your tile";
      }
    },
  };
}
