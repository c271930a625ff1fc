// The play page of an agent seat: ask for the seat's turn (a long-poll the server answers as soon as the
// turn opens or the run ends), show the observation and the time left, and send the person's actions as
// the REST body {tick, actions}. The world's actions come from the form (filled by clicks on the map: world_view.js),
// a game's move from the board.
import {actionWords, worldView} from "/console/static/world_view.js";

const D = JSON.parse(document.getElementById("play-data").textContent);
const $ = (sel) => document.querySelector(sel);
const base = `/console/runs/${encodeURIComponent(D.run_id)}/seats/${D.seat}`;
const WAIT_MS = 25000;
const STATUS = {waiting: "waiting", your_turn: "your turn", ended: "ended"};

let turn = null;         // the view being shown
let answered = false;    // the shown turn's actions were accepted (or its deadline passed)
let over = null;         // resolves the wait for the shown turn to be answered or to run out

function say(text, error = false) {
  $(error ? '[data-testid="play-error"]' : '[data-testid="play-notice"]').textContent = text;
  if (!error) $('[data-testid="play-error"]').textContent = "";
}

const unit = () => (D.board ? "ply" : "tick");

function open() {
  return turn && turn.status === "your_turn" && !answered;
}

function countdown() {
  const el = $('[data-testid="deadline"]');
  if (!open() || !turn.deadline_ms) { el.textContent = "-"; return; }
  el.textContent = `${Math.max(0, Math.round((turn.deadline_ms - Date.now()) / 1000))} s`;
}

function tickWords(view) {
  // ticks and plies are numbered from 0, as in the event log and the transcript
  if (view.tick === null) return "";
  if (view.status === "ended") {
    return D.board ? "game over" : `season over: ${view.tick + 1} of ${view.season_ticks} ticks played`;
  }
  return D.board ? `${view.tick}` : `${view.tick} (turn ${view.tick + 1} of ${view.season_ticks})`;
}

async function show(view) {
  const fresh = view.status === "your_turn" && (!turn || turn.tick !== view.tick || turn.status !== "your_turn");
  turn = view;
  $('[data-testid="turn-tick"]').textContent = tickWords(view);
  if (fresh) say("");  // "waiting for the next turn" is over: the turn is open
  if (view.directions) { $("#directions").hidden = false; $('[data-testid="directions"]').textContent = view.directions; }
  if (view.observation) {
    $('[data-testid="observation"]').textContent = view.observation.text;
    $('[data-testid="state"]').textContent = JSON.stringify(view.observation.state, null, 2);
    if (board) await board.show(view.observation.state);  // drawn before a move can start on it
    if (world) world.show(view.observation.state);
    if (turn !== view) return;  // a newer view came while this one was drawn
  } else if (view.status === "ended" && !world?.shown) {
    // the game's last position comes with the result (below); a turn shown stays as it was
    $('[data-testid="observation"]').textContent = turn.observation || board
      ? "The game is over: the board shows the position it ended on." : "The run ended before a turn of yours opened.";
  }
  controls();
}

function controls() {
  // what the person may do now: act while the turn is open and unanswered, else wait
  const status = open() ? "your_turn" : turn.status === "your_turn" ? "waiting" : turn.status;
  $('[data-testid="turn-status"]').textContent = STATUS[status] || status;
  document.body.dataset.turn = open() ? "open" : turn.status;
  document.querySelectorAll("#play button, #play select, #play input").forEach((el) => { el.disabled = !open(); });
  if (board) board.enable(open());
  if (world) world.enable(open());
  countdown();
}

function done() {
  answered = true;
  controls();
  if (over) over();
}

async function answer(res) {
  const text = await res.text();
  try { return JSON.parse(text); } catch { return {error: "bad_answer", message: `the server answered ${res.status}; reload the page (you may need to sign in again)`}; }
}

async function ask(wait) {
  const res = await fetch(`${base}/turn?wait_ms=${wait}`, {headers: {accept: "application/json"}, redirect: "manual"});
  const body = await answer(res);
  if (!res.ok) throw new Error(body.message);
  return body;
}

async function submit(actions) {
  if (!open()) return;
  const tick = turn.tick;
  answered = true;  // one answer a turn: the controls wait while it is on its way
  controls();
  say("Sending ...");
  $('[data-testid="play-sent"]').textContent = "";
  const res = await fetch(`${base}/actions`, {method: "POST", redirect: "manual",
    headers: {"content-type": "application/json", "x-csrf-token": D.csrf},
    body: JSON.stringify({tick, actions})});
  const body = await answer(res);
  if (res.ok) {
    say("Waiting for the next turn.");
    $('[data-testid="play-sent"]').textContent = `Sent ${body.received} action${body.received === 1 ? "" : "s"} for ${unit()} ${tick}.`;
    clearRows();
    done();
  } else if (body.error === "turn_closed") {
    say(body.message, true);
    done();  // that turn is gone: ask for the next one
  } else {
    say(body.message, true);  // the turn is still open: the person can answer again
    answered = false;
    if (board && turn.observation) await board.show(turn.observation.state);  // undo the move drawn
    controls();
  }
}

function turnOver() {
  // the shown turn stays open until it is answered or its deadline passes; asking again before that
  // would only hear the same turn back
  return new Promise((resolve) => {
    const ms = turn.deadline_ms ? turn.deadline_ms - Date.now() + 250 : WAIT_MS;
    const timer = setTimeout(() => { answered = true; controls(); resolve(); }, Math.max(0, ms));
    over = () => { clearTimeout(timer); over = null; resolve(); };
  });
}

async function result() {
  for (;;) {
    const res = await fetch(`${base}/result`);
    $("#result").innerHTML = await res.text();
    const final = $("#result [data-final]");
    const plies = $("#result [data-plies]");
    if (plies) $('[data-testid="turn-tick"]').textContent = `game over after ${plies.dataset.plies} plies`;
    const last = $('#result [data-testid="final-position"]');
    if (board && last) {
      const state = JSON.parse(last.textContent);
      await board.show(state);
      board.enable(false);
      $('[data-testid="observation"]').textContent = "The game is over: the board shows the position it ended on.";
      $("#play").hidden = false;
    }
    if (!final || final.dataset.final === "yes") return;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

async function play(first) {
  let view = first, wait = WAIT_MS;
  for (;;) {
    if (view) {
      answered = false;
      await show(view);
      if (view.status === "ended") {
        // a game's board stays for its last position (drawn with the result), the resign button goes;
        // a world's last view stays, its controls off
        if (board) { document.querySelectorAll("#resign, .board-help").forEach((el) => { el.hidden = true; }); $("#play").hidden = !turn.observation; }
        else document.querySelectorAll("#actions, .quick").forEach((el) => { el.hidden = true; });
        say("The run has ended.");
        await result();
        return;
      }
      if (view.status === "your_turn") await turnOver();
    }
    try {
      view = await ask(wait);
    } catch (e) {
      view = null;
      say(e.message, true);
      await new Promise((r) => setTimeout(r, 3000));
    }
  }
}

// --- the world's action form ---------------------------------------------------------------------

function showFields(row) {
  const kind = row.querySelector(".action-kind").value;
  row.querySelectorAll(".action-fields").forEach((f) => { f.hidden = f.dataset.action !== kind; });
}

function clearRows() {
  document.querySelectorAll("#actions .action-row").forEach((row) => {
    row.querySelectorAll("select, input").forEach((el) => { el.value = ""; });
    showFields(row);
  });
}

function fill(action) {
  // a click's action into the form's next empty row, where the person sees it before sending
  const row = [...document.querySelectorAll("#actions .action-row")].find((r) => !r.querySelector(".action-kind").value);
  if (!row) { say(`Every row is set (${actionWords(action)} not added): clear them, or submit.`, true); return; }
  row.querySelector(".action-kind").value = action.action;
  showFields(row);
  for (const [k, v] of Object.entries(action)) {
    const field = row.querySelector(`.action-fields[data-action="${action.action}"] [data-field="${k}"]`);
    if (field) field.value = String(v);
  }
  say(`Action ${+row.dataset.row + 1}: ${actionWords(action)}.`);
}

function worldForm() {
  const form = $("#actions");
  if (!form) return;
  form.querySelectorAll(".action-row").forEach((row) => {
    row.querySelector(".action-kind").addEventListener("change", () => showFields(row));
  });
  $("#clear-actions").addEventListener("click", () => { clearRows(); say(""); });
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const actions = [];
    form.querySelectorAll(".action-row").forEach((row) => {
      const name = row.querySelector(".action-kind").value;
      if (!name) return;
      const action = {action: name};
      row.querySelector(`.action-fields[data-action="${name}"]`).querySelectorAll("[data-field]").forEach((el) => {
        if (el.value === "") return;  // an optional field left out; a required one is refused by the engine
        action[el.dataset.field] = el.dataset.kind === "number" && /^-?\d+$/.test(el.value) ? parseInt(el.value, 10) : el.value;
      });
      actions.push(action);
    });
    submit(actions);
  });
}

// --- the boards ----------------------------------------------------------------------------------

async function chessBoard(el) {
  const {Chessboard, COLOR, FEN, INPUT_EVENT_TYPE} = await import("/arena/assets/cm-chessboard/src/Chessboard.js");
  const cb = new Chessboard(el, {position: FEN.start, assetsUrl: "/arena/assets/cm-chessboard/assets/",
                                style: {pieces: {file: "pieces/standard.svg"}, borderType: "frame"}});
  function markLast() {
    // the last move's two squares, as a board app marks them (the board is drawn once, so mark on it)
    el.querySelectorAll(".square.last-move").forEach((sq) => sq.classList.remove("last-move"));
    const last = ((state && state.moves_uci) || []).at(-1);
    if (!last) return;
    for (const sq of [last.slice(0, 2), last.slice(2, 4)]) {
      const rect = el.querySelector(`.square[data-square="${sq}"]`);
      if (rect) rect.classList.add("last-move");
    }
    el.dataset.lastMove = last;
  }
  let state = null, on = false, side = COLOR.white;
  function move(from, to) {
    const legal = (state && state.legal_uci) || [];
    return legal.find((m) => m === from + to) || legal.find((m) => m === from + to + "q") || null;
  }
  const handler = (event) => {
    if (event.type === INPUT_EVENT_TYPE.moveInputStarted) return on && legalFrom(event.squareFrom);
    if (event.type === INPUT_EVENT_TYPE.validateMoveInput) {
      const uci = move(event.squareFrom, event.squareTo);
      if (uci) submit([{move: uci}]);
      return uci !== null;
    }
    return true;
  };
  const legalFrom = (sq) => ((state && state.legal_uci) || []).some((m) => m.startsWith(sq));
  return {
    async show(s) {
      state = s;
      const you = s.you === "black" ? COLOR.black : COLOR.white;
      if (you !== side) { side = you; await cb.setOrientation(you); }
      await cb.setPosition(s.fen, false);
      markLast();
    },
    enable(yes) {
      on = yes;
      cb.disableMoveInput();
      if (yes && state) cb.enableMoveInput(handler, state.you === "black" ? COLOR.black : COLOR.white);
    },
  };
}

function fourInRow(grid) {
  // the cells of every four in a row (across, down, both diagonals), as "row,column"
  const out = new Set();
  grid.forEach((row, j) => row.forEach((v, i) => {
    if (!v) return;
    for (const [dj, di] of [[0, 1], [1, 0], [1, 1], [1, -1]]) {
      const cells = [0, 1, 2, 3].map((k) => [j + k * dj, i + k * di]);
      if (cells.every(([r, c]) => grid[r] && grid[r][c] === v)) cells.forEach(([r, c]) => out.add(`${r},${c}`));
    }
  }));
  return out;
}

function connectFourBoard(el) {
  // drawn as the arena's replay draws it (rows top first: 0 empty, 1 the first mover's disc, 2 the other)
  let state = null, on = false;
  function draw() {
    const t = document.createElement("table");
    t.className = "board c4-play";
    const head = t.createTHead().insertRow();
    for (let c = 1; c <= 7; c++) {
      const b = document.createElement("button");
      b.type = "button"; b.textContent = `${c} ↓`; b.dataset.column = c;
      b.setAttribute("aria-label", `Column ${c}`);
      b.disabled = !on || !state.playable_columns.includes(c);
      b.onclick = () => submit([{column: c}]);
      head.insertCell().append(b);
    }
    const body = t.createTBody();
    const won = fourInRow(state.grid);
    // the last disc played: the top one of the last move's column
    const lastCol = (state.moves || []).at(-1), lastRow = lastCol ? state.grid.findIndex((r) => r[lastCol - 1]) : -1;
    state.grid.forEach((row, j) => {
      const tr = body.insertRow();
      row.forEach((v, i) => {
        const td = tr.insertCell(), disc = document.createElement("span");
        td.className = "c4"; td.dataset.column = i + 1;
        disc.className = "disc" + (v ? " p" + v : "") + (j === lastRow && i + 1 === lastCol ? " last" : "");
        if (won.has(`${j},${i}`)) { td.classList.add("win"); td.dataset.testid = "winning-disc"; }
        if (disc.classList.contains("last")) { disc.dataset.testid = "last-move"; disc.title = `the last disc, column ${lastCol}`; }
        td.append(disc);
        td.onclick = () => { if (on && state.playable_columns.includes(i + 1)) submit([{column: i + 1}]); };
      });
    });
    el.replaceChildren(t);
    const you = document.createElement("p");
    you.innerHTML = `You play <span class="disc p${state.you === "X" ? 1 : 2}"></span> (${state.you}).`;
    el.append(you);
  }
  return {
    show(s) { state = s; draw(); },
    enable(yes) { on = yes; if (state) draw(); },
  };
}

const boardEl = $("#board");
const board = !boardEl ? null : D.board === "chess" ? await chessBoard(boardEl) : connectFourBoard(boardEl);
const world = $("#world-map") ? worldView($("#play"), {legend: D.terrain, fill}) : null;
const resign = $("#resign");
if (resign) resign.addEventListener("click", () => { if (confirm("Resign this game?")) submit([{action: "resign"}]); });
worldForm();
setInterval(countdown, 500);
play(D.turn);
