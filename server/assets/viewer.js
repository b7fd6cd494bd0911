// The match viewer's script: draws one frame of `maumau::viewer` (the table after one step, as
// one perspective saw it) and steps through them. Plain JavaScript, no library, no network but
// the frames' own URL (a served page) or none at all (an exported file holds its frames).
// A finished match opens at its first event, with a "jump to result" button; its last frame
// shows the result and the standings. Keys: space plays and pauses, ← → step, Home End jump, PageUp PageDown go by round.
// A live match (`viewing.live`) is followed: the page asks for its frames again every second
// and stays at the newest one if it was there, with the time the seat to act has left counting
// down; when the match ends it loads the whole viewer. A seat's refused messages are listed at
// the event they came at (in its own view and the omniscient one).
// (Polling, not Watch over grpc-web: Watch carries events, and the table's state at each step
// would then be worked out here, outside the engine; the frames endpoint answers from the
// table's own record and the engine's views, in one small GET.)
"use strict";
(function () {
  const root = document.getElementById("viewer");
  const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
  const RED = { D: true, H: true };
  let viewing = null; // { perspective, seats, finished, frames: [...] }
  let at = 0;
  let timer = null;
  let tick = null; // the live countdown's interval
  const $ = (id) => document.getElementById(id);

  // A card face from its text form ("10H"), or a card back when `code` is null.
  function card(code, extra) {
    const el = document.createElement("span");
    el.className = "card" + (extra ? " " + extra : "");
    if (code == null) {
      el.className += " back";
      el.setAttribute("aria-label", "hidden card");
      return el;
    }
    const suit = code.slice(-1);
    el.className += RED[suit] ? " red" : " black";
    el.dataset.card = code;
    el.textContent = code.slice(0, -1) + SUITS[suit];
    return el;
  }

  function text(el, value) {
    el.textContent = value;
    return el;
  }

  function seatName(s) {
    const names = viewing.names || [];
    return names[s] ? "S" + s + " " + names[s] : "S" + s;
  }

  function renderSeats(frame) {
    const t = frame.table;
    const box = $("seats");
    box.replaceChildren();
    box.dataset.count = t.seats.length;
    for (const s of t.seats) {
      const el = document.createElement("div");
      el.className = "seat";
      el.dataset.seat = s.seat;
      el.style.setProperty("--i", s.seat);
      if (t.to_act === s.seat) el.classList.add("to-act");
      if (viewing.perspective === "seat " + s.seat) el.classList.add("me");
      const head = document.createElement("div");
      head.className = "who";
      head.append(text(document.createElement("b"), seatName(s.seat)));
      if (t.dealer === s.seat) head.append(text(document.createElement("span"), " · dealer"));
      if (s.last_call) head.append(text(document.createElement("span"), " · said " + s.last_call));
      el.append(head);
      const stats = document.createElement("div");
      stats.className = "stats";
      stats.textContent = s.cards + (s.cards === 1 ? " card" : " cards") + " · total " + s.total +
        " · rounds won " + s.rounds_won;
      el.append(stats);
      const hand = document.createElement("div");
      hand.className = "hand";
      if (s.hand) {
        for (const c of s.hand) hand.append(card(c));
      } else {
        for (let i = 0; i < s.cards; i++) hand.append(card(null, "small"));
      }
      el.append(hand);
      box.append(el);
    }
  }

  function renderCentre(frame) {
    const t = frame.table;
    const pile = $("discard");
    pile.replaceChildren();
    t.recent.forEach((c, i) => pile.append(card(c, i === t.recent.length - 1 ? "top" : "under")));
    $("top").dataset.card = t.top;
    $("stock").textContent = t.stock;
    const named = $("named");
    named.dataset.suit = t.named_suit || "";
    named.textContent = t.named_suit ? SUITS[t.named_suit] : "–";
    named.className = t.named_suit && RED[t.named_suit] ? "red" : "";
    $("debt").textContent = t.debt;
    $("debt-box").classList.toggle("hot", t.debt > 0);
    $("direction").textContent = t.clockwise ? "↻ clockwise" : "↺ counter-clockwise";
    $("turn").textContent = t.to_act == null ? (t.phase === "over" ? "match over" : "–") : seatName(t.to_act);
    $("turn").dataset.seat = t.to_act == null ? "" : t.to_act;
    clock(frame);
    $("round").textContent = t.round;
    $("offence").textContent = t.offence || "";
    const legal = $("legal");
    legal.replaceChildren();
    if (t.legal.length) {
      legal.append(text(document.createElement("b"), "may: "));
      legal.append(document.createTextNode(t.legal.join(" · ")));
    }
  }

  function renderStep(frame) {
    $("line").textContent = frame.line;
    $("think").textContent = frame.think_ms ? "decided in " + frame.think_ms + " ms" : "";
    const refused = $("refused");
    refused.replaceChildren();
    for (const r of frame.rejections || []) {
      const li = text(document.createElement("li"), r.line);
      li.dataset.seat = r.seat;
      refused.append(li);
    }
    const notes = $("notes");
    notes.replaceChildren();
    for (const n of frame.notes) notes.append(text(document.createElement("li"), n));
    renderResult(frame);
    const end = $("round-end");
    end.replaceChildren();
    if (frame.round_end) {
      const r = frame.round_end;
      end.append(text(document.createElement("b"), "Round " + r.round + ": " +
        (r.winner == null ? "blocked" : seatName(r.winner) + " went out")));
      r.hands.forEach((h, s) => {
        const row = document.createElement("div");
        row.className = "laid";
        row.append(text(document.createElement("span"), seatName(s) + " +" + r.points[s] + " = " + r.totals[s] + " "));
        for (const c of h) row.append(card(c, "small"));
        end.append(row);
      });
    }
  }

  // The match's result on the frame where it ended: its line (the notation's, with names) and
  // the standings as a small card: place, player, total.
  function renderResult(frame) {
    const box = $("result-card");
    box.replaceChildren();
    box.hidden = !frame.result;
    if (!frame.result) return;
    const r = frame.result;
    box.append(text(document.createElement("h3"), r.line));
    const table = document.createElement("table");
    table.className = "standings";
    const head = document.createElement("tr");
    for (const h of ["place", "player", r.scoring === "points" ? "points" : "penalty"]) {
      head.append(text(document.createElement("th"), h));
    }
    table.append(head);
    for (const p of r.standings) {
      const row = document.createElement("tr");
      row.dataset.seat = p.seat;
      if (p.place === 1) row.className = "first";
      row.append(text(document.createElement("td"), p.place));
      row.append(text(document.createElement("td"), seatName(p.seat)));
      row.append(text(document.createElement("td"), p.total));
      table.append(row);
    }
    box.append(table);
  }

  // The time the seat to act has left, counting down, on the newest frame of a live match
  // (`time_left_ms` is the server's as of the answer that brought it).
  function clock(frame) {
    const el = $("deadline");
    if (tick) clearInterval(tick);
    tick = null;
    $("deadline-box").hidden = !viewing.live;
    const left = viewing.time_left_ms;
    const newest = frame.index === viewing.frames.length - 1;
    if (!viewing.live || left == null || !newest || frame.table.to_act == null) {
      el.textContent = "–";
      el.dataset.ms = "";
      return;
    }
    el.dataset.ms = left;
    const show = () => {
      const ms = Math.max(0, left - (performance.now() - viewing.received));
      el.textContent = seatName(frame.table.to_act) + ": " + (ms / 1000).toFixed(1) + " s left";
    };
    show();
    tick = setInterval(show, 100);
  }

  function go(i) {
    if (!viewing) return;
    at = Math.max(0, Math.min(viewing.frames.length - 1, i));
    const frame = viewing.frames[at];
    root.dataset.e = at;
    renderSeats(frame);
    renderCentre(frame);
    renderStep(frame);
    $("scrub").value = at;
    $("where").textContent = at + " / " + (viewing.frames.length - 1);
    for (const li of document.querySelectorAll("#moves li.current")) li.classList.remove("current");
    const li = document.querySelector('#moves li[data-e="' + at + '"]');
    if (li) {
      li.classList.add("current");
      showInList(li);
    }
    const hash = "#e=" + at;
    if (location.hash !== hash) history.replaceState(null, "", hash);
  }

  // Scrolls the move list, and nothing else, so that `li` is in view: scrollIntoView would
  // scroll the page too, and a live page (or a phone's, where the list is below the table)
  // would keep running away from its header and seats.
  function showInList(li) {
    const box = li.closest("aside");
    if (!box) return;
    const b = box.getBoundingClientRect();
    const r = li.getBoundingClientRect();
    if (r.top < b.top) box.scrollTop -= b.top - r.top;
    else if (r.bottom > b.bottom) box.scrollTop += r.bottom - b.bottom;
  }

  function buildMoves() {
    const list = $("moves");
    list.replaceChildren();
    let round = 0;
    for (const f of viewing.frames) {
      if (f.table.round !== round && f.round_end == null) {
        round = f.table.round;
        const h = text(document.createElement("li"), "Round " + round);
        h.className = "round";
        h.dataset.e = f.index;
        list.append(h);
      }
      const li = document.createElement("li");
      li.dataset.e = f.index;
      li.textContent = (f.index ? f.index + ". " : "") + f.line;
      if (f.notes.length) li.append(text(document.createElement("small"), f.notes.join("; ")));
      for (const r of f.rejections || []) {
        const small = text(document.createElement("small"), "✗ " + r.line);
        small.className = "refused";
        li.append(small);
      }
      list.append(li);
      if (f.round_end) {
        round = f.table.round;
        if (f.table.phase !== "over") {
          const h = text(document.createElement("li"), "Round " + round);
          h.className = "round";
          h.dataset.e = f.index;
          list.append(h);
        }
      }
    }
    $("scrub").max = viewing.frames.length - 1;
  }

  function play(on) {
    if (timer) clearInterval(timer);
    timer = null;
    if (on) {
      if (at >= viewing.frames.length - 1) go(0);
      timer = setInterval(() => {
        if (at >= viewing.frames.length - 1) return play(false);
        go(at + 1);
      }, Number($("speed").value));
    }
    $("play").textContent = timer ? "❚❚ pause" : "▶ play";
    $("play").setAttribute("aria-pressed", timer ? "true" : "false");
  }

  function roundStart(dir) {
    const starts = viewing.frames.filter((f) => f.index === 0 || f.round_end).map((f) => f.index);
    const next = dir > 0 ? starts.find((s) => s > at) : starts.reverse().find((s) => s < at);
    go(next == null ? (dir > 0 ? viewing.frames.length - 1 : 0) : next);
  }

  // The event the address names: `#e=N`, or `#e=end` for the last one.
  function fromHash() {
    if (location.hash === "#e=end") return Infinity;
    const m = /^#e=(\d+)$/.exec(location.hash);
    return m ? Number(m[1]) : null;
  }

  function show(v) {
    viewing = v;
    root.dataset.perspective = v.perspective;
    $("perspective-now").textContent = v.perspective;
    buildMoves();
    // A finished match opens at its first event (its end would spoil it; the result is one
    // click away); a live one at the newest.
    $("to-result").hidden = !v.finished || !!v.live;
    const e = fromHash();
    go(e == null ? (v.live ? viewing.frames.length - 1 : 0) : e);
    root.classList.add("ready");
  }

  function failed(message) {
    $("line").textContent = message;
    root.classList.add("failed");
  }

  // Frames from the page itself (an exported file, one block of frames per perspective, the
  // first the default) or from the server.
  async function load(query) {
    const blocks = [...document.querySelectorAll("script.frames")];
    if (blocks.length) {
      const wanted = new URLSearchParams(query || location.search).get("view");
      const block = blocks.find((b) => b.dataset.view === wanted) || blocks[0];
      if (perspective) perspective.value = block.dataset.view;
      const keep = viewing ? at : null;
      show(JSON.parse(block.textContent));
      if (keep != null) go(keep);
      return;
    }
    const url = root.dataset.framesUrl + (query || "");
    const answer = await fetch(url, { headers: { accept: "application/json" } });
    const body = await answer.json();
    if (!answer.ok) return failed(body.message || "the frames could not be loaded");
    const keep = viewing ? at : null;
    body.received = performance.now();
    show(body);
    if (keep != null) go(keep);
    if (body.live) setTimeout(follow, FOLLOW_MS);
  }

  const FOLLOW_MS = 1000;

  // One more look at a live match: new frames are added (the view stays at the newest if it was
  // there); once the match has ended, the page is loaded again, with every perspective.
  async function follow() {
    let body = null;
    try {
      const answer = await fetch(root.dataset.framesUrl + (root.dataset.query || ""), {
        headers: { accept: "application/json" },
      });
      body = answer.ok ? await answer.json() : null;
    } catch (e) {
      body = null; // the server is away for a moment: look again
    }
    const newest = at >= viewing.frames.length - 1;
    if (body && !body.live) {
      // A watcher at the newest event stays at the end once the page loads the whole match.
      if (newest) history.replaceState(null, "", location.pathname + location.search + "#e=end");
      location.reload();
      return;
    }
    if (body) {
      body.received = performance.now();
      const grown = body.frames.length !== viewing.frames.length;
      viewing = body;
      if (grown) buildMoves();
      go(newest ? viewing.frames.length - 1 : at);
    }
    setTimeout(follow, FOLLOW_MS);
  }

  $("play").addEventListener("click", () => play(!timer));
  $("back").addEventListener("click", () => { play(false); go(at - 1); });
  $("forward").addEventListener("click", () => { play(false); go(at + 1); });
  $("first").addEventListener("click", () => { play(false); go(0); });
  $("last").addEventListener("click", () => { play(false); go(viewing.frames.length - 1); });
  $("to-result").addEventListener("click", () => { play(false); go(viewing.frames.length - 1); });
  $("scrub").addEventListener("input", (e) => { play(false); go(Number(e.target.value)); });
  $("speed").addEventListener("change", () => { if (timer) play(true); });
  $("moves").addEventListener("click", (e) => {
    const li = e.target.closest("li[data-e]");
    if (li) { play(false); go(Number(li.dataset.e)); }
  });
  const perspective = $("perspective");
  if (perspective) {
    perspective.addEventListener("change", () => {
      play(false);
      // The address keeps the perspective, so it stays a permalink (with the event's `#e=`).
      const query = "?view=" + encodeURIComponent(perspective.value);
      history.replaceState(null, "", location.pathname + query + location.hash);
      load(query);
    });
  }
  window.addEventListener("hashchange", () => { const e = fromHash(); if (e != null && e !== at) go(e); });
  document.addEventListener("keydown", (e) => {
    if (!viewing || e.target.closest("input, select, textarea")) return;
    const keys = {
      " ": () => play(!timer),
      ArrowLeft: () => { play(false); go(at - 1); },
      ArrowRight: () => { play(false); go(at + 1); },
      Home: () => { play(false); go(0); },
      End: () => { play(false); go(viewing.frames.length - 1); },
      PageUp: () => { play(false); roundStart(-1); },
      PageDown: () => { play(false); roundStart(1); },
    };
    if (keys[e.key]) {
      e.preventDefault();
      keys[e.key]();
    }
  });
  load(root.dataset.query || "").catch((e) => failed("the frames could not be loaded: " + e));
})();
