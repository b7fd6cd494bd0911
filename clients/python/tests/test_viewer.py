"""The match viewer in a real browser: Debian's Chromium driven by Playwright (the system
browser as its executable; no browser download), against the real `maumau serve` binary.

Finished matches of every profile are opened at a permalinked event and the table is compared
with the frame the server sent for it (the Rust test tests/viewer.rs compares those frames with
the engine); stepping, scrubbing, the keyboard, the move list and the perspective switch are
driven by clicks and keys; the file written by `maumau replay FILE --html` opens from file://
with the network off at the last position and switches perspective from the file; the list of
matches fits a phone; a public view never shows a hidden card; and a live
match shows whose turn it is with its time running down.
Screenshots of each profile's table go to $MAUMAU_TEST_OUTPUT/viewer (default:
target/test-output/viewer in the repository) for people to look at.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import grpc
import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from maumau_client import Bot, run
from maumau_client.pb.maumau.v1 import match_pb2, record_pb2, rules_pb2

REPO = Path(__file__).resolve().parents[3]
OUT = Path(os.environ.get("MAUMAU_TEST_OUTPUT", REPO / "target" / "test-output")) / "viewer"
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"

PROFILES = [
    ("classic", rules_pb2.PROFILE_CLASSIC, 3),
    ("penalty-points", rules_pb2.PROFILE_PENALTY_POINTS, 3),
    ("brazilian", rules_pb2.PROFILE_BRAZILIAN, 4),
    ("romanian-32", rules_pb2.PROFILE_ROMANIAN_32, 3),
]

# What the page shows: the event, the table's facts and each seat's cards (faces and backs).
READ_TABLE = """() => {
  const q = (s) => document.querySelector(s);
  const seats = [...document.querySelectorAll('#seats .seat')];
  return {
    e: Number(q('#viewer').dataset.e),
    perspective: q('#viewer').dataset.perspective,
    top: q('#top').dataset.card,
    debt: Number(q('#debt').textContent),
    named: q('#named').dataset.suit,
    turn: q('#turn').dataset.seat,
    hands: seats.map((s) => [...s.querySelectorAll('[data-card]')].map((c) => c.dataset.card)),
    backs: seats.map((s) => s.querySelectorAll('.card.back').length),
    current: q('#moves li.current') && Number(q('#moves li.current').dataset.e),
  };
}"""


@pytest.fixture(scope="module")
def browser():
    assert Path(CHROMIUM).is_file(), (
        f"no Chromium at {CHROMIUM}: install it (`sudo apt-get install -y chromium`) or set CHROMIUM"
    )
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def finished_match(server, profile: int, seats: int, seed: int):
    """A match between heuristic bots, at most two rounds, played to its end; its id and replay."""
    created = server.matches.CreateMatch(
        match_pb2.CreateMatchRequest(
            config=rules_pb2.MatchConfig(profile=profile, seats=seats, max_rounds=2),
            seed=seed,
            bots=[match_pb2.SeatBot(seat=s, kind=record_pb2.BOT_KIND_HEURISTIC) for s in range(seats)],
            label="viewer test",
        ),
        timeout=10,
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            replay = server.matches.GetReplay(
                match_pb2.GetReplayRequest(match_id=created.match_id), timeout=10
            ).replay
            return created, replay
        except grpc.RpcError as e:
            if time.monotonic() > deadline:
                raise AssertionError(f"the match did not end: {e}") from e
            time.sleep(0.05)


def frames(server, match_id: str, query: str = "") -> dict:
    url = f"http://{server.address}/matches/{match_id}/frames{query}"
    with urllib.request.urlopen(url, timeout=30) as answer:
        return json.load(answer)


def expected(frame: dict) -> dict:
    t = frame["table"]
    return {
        "e": frame["index"],
        "top": t["top"],
        "debt": t["debt"],
        "named": t["named_suit"] or "",
        "turn": "" if t["to_act"] is None else str(t["to_act"]),
        "hands": [s["hand"] or [] for s in t["seats"]],
        "backs": [0 if s["hand"] is not None else s["cards"] for s in t["seats"]],
        "current": frame["index"],
    }


def shown(page: Page) -> dict:
    got = page.evaluate(READ_TABLE)
    got.pop("perspective")
    return got


def open_at(page: Page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("#viewer.ready")


def test_a_permalinked_event_shows_its_frame_in_every_profile(server, browser: Browser):
    OUT.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1360, "height": 900})
    for i, (name, profile, seats) in enumerate(PROFILES):
        created, replay = finished_match(server, profile, seats, 70 + i)
        seen = frames(server, created.match_id)
        assert seen["profile"] == name and seen["finished"]
        assert len(seen["frames"]) == len(replay.actions) + 1
        # An event with a debt or a named suit where the match has one, else the middle.
        k = next(
            (f["index"] for f in seen["frames"] if f["table"]["debt"] and f["table"]["to_act"] is not None),
            next((f["index"] for f in seen["frames"] if f["table"]["named_suit"]), len(seen["frames"]) // 2),
        )
        open_at(page, f"http://{server.address}/matches/{created.match_id}/view#e={k}")
        assert shown(page) == expected(seen["frames"][k]), name
        assert page.locator("#moves li[data-e]").count() >= len(seen["frames"])
        assert page.locator("#line").inner_text() == seen["frames"][k]["line"]
        page.screenshot(path=str(OUT / f"{name}.png"), full_page=True)
    # The front page lists them, each linked to its viewer.
    page.goto(f"http://{server.address}/")
    assert page.locator("a.view").count() == len(PROFILES)
    page.screenshot(path=str(OUT / "matches.png"), full_page=True)
    page.click("a.view >> nth=0")
    page.wait_for_selector("#viewer.ready")
    page.close()


def test_step_scrub_keys_moves_and_perspective(server, browser: Browser):
    created, _ = finished_match(server, rules_pb2.PROFILE_CLASSIC, 3, 5)
    seen = frames(server, created.match_id)["frames"]
    last = len(seen) - 1
    # Playwright's wait_for_function evaluates its expression with eval, which the viewer's CSP
    # forbids (rightly); the page runs under that CSP in tests/viewer.rs, not here.
    page = browser.new_page(viewport={"width": 1360, "height": 900}, bypass_csp=True)
    open_at(page, f"http://{server.address}/matches/{created.match_id}/view#e=5")

    def at() -> int:
        return page.evaluate(READ_TABLE)["e"]

    page.click("#forward")
    assert shown(page) == expected(seen[6])
    assert page.evaluate("location.hash") == "#e=6", "the permalink follows"
    page.click("#back")
    assert at() == 5
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert shown(page) == expected(seen[7])
    page.keyboard.press("Home")
    assert at() == 0
    page.keyboard.press("End")
    assert shown(page) == expected(seen[last])
    page.locator("#scrub").fill("3")
    assert shown(page) == expected(seen[3])
    page.click('#moves li[data-e="9"]:not(.round)')
    assert shown(page) == expected(seen[9])
    # Play runs on by itself; space pauses it.
    page.select_option("#speed", "250")
    page.click("#play")
    page.wait_for_function("Number(document.querySelector('#viewer').dataset.e) >= 11")
    page.keyboard.press(" ")
    stopped = at()
    assert page.locator("#play").get_attribute("aria-pressed") == "false"
    page.wait_for_timeout(600)
    assert at() == stopped, "paused"
    # The hash moves the viewer too (a pasted permalink).
    page.evaluate("location.hash = '#e=4'")
    page.wait_for_function("document.querySelector('#viewer').dataset.e === '4'")

    # After the end, the perspective switch: seat 1's own view, at the same event.
    page.select_option("#perspective", "1")
    page.wait_for_function("document.querySelector('#viewer').dataset.perspective === 'seat 1'")
    seat1 = frames(server, created.match_id, "?view=1")["frames"]
    assert shown(page) == expected(seat1[4])
    got = shown(page)
    assert got["hands"][0] == [] and got["hands"][2] == [], "only seat 1's cards are faces"
    assert got["hands"][1] and got["backs"][1] == 0
    # The address is a permalink to this perspective at this event.
    assert page.evaluate("location.search + location.hash") == "?view=1#e=4"
    page.reload()
    page.wait_for_selector("#viewer.ready")
    assert page.evaluate(READ_TABLE)["perspective"] == "seat 1"
    assert shown(page) == expected(seat1[4])
    page.screenshot(path=str(OUT / "classic-seat-1.png"), full_page=True)
    page.select_option("#perspective", "public")
    page.wait_for_function("document.querySelector('#viewer').dataset.perspective === 'public'")
    assert shown(page)["hands"] == [[], [], []]
    page.close()


def test_a_public_view_never_shows_a_hidden_card(server, browser: Browser):
    # A live match (seat 0 has not joined): its page follows it as a spectator sees it, so no
    # seat's card face is drawn (only the discard pile's); every hand is refused with its typed
    # reason while it is played.
    live = server.matches.CreateMatch(
        match_pb2.CreateMatchRequest(
            config=rules_pb2.MatchConfig(profile=rules_pb2.PROFILE_CLASSIC, seats=2),
            bots=[match_pb2.SeatBot(seat=1, kind=record_pb2.BOT_KIND_HEURISTIC)],
        ),
        timeout=10,
    )
    page = browser.new_page()
    page.goto(f"http://{server.address}/matches/{live.match_id}/view")
    assert "Live" in page.locator("#live").inner_text()
    page.wait_for_function("document.querySelector('#viewer').classList.contains('ready')")
    assert page.locator("#seats [data-card]").count() == 0
    public = frames(server, live.match_id, "")
    assert public["live"] is True and public["perspective"] == "public"
    assert all(s["hand"] is None for f in public["frames"] for s in f["table"]["seats"])
    with pytest.raises(urllib.error.HTTPError) as refused:
        frames(server, live.match_id, "?view=omniscient")
    assert refused.value.code == 409
    assert refused.value.headers["maumau-reason"] == "ERROR_REASON_MATCH_NOT_FINISHED"

    # A finished match's public view, event by event: no seat's card face on the table; the only
    # faces are the discard pile's and the hands laid down at a round's end.
    created, _ = finished_match(server, rules_pb2.PROFILE_BRAZILIAN, 4, 9)
    public = frames(server, created.match_id, "?view=public")["frames"]
    open_at(page, f"http://{server.address}/matches/{created.match_id}/view?view=public#e=0")
    for frame in public:
        got = page.evaluate(READ_TABLE)
        assert got["e"] == frame["index"]
        assert got["hands"] == [[], [], [], []], f"a card face on the table at event {got['e']}"
        assert got["backs"] == [s["cards"] for s in frame["table"]["seats"]]
        allowed = set(frame["table"]["recent"])
        if frame["round_end"]:
            allowed |= {c for h in frame["round_end"]["hands"] for c in h}
        faces = page.evaluate("[...document.querySelectorAll('[data-card]')].map((c) => c.dataset.card)")
        assert set(faces) <= allowed, f"event {got['e']}: {set(faces) - allowed}"
        page.keyboard.press("ArrowRight")
    page.close()


class _Waiting(Bot):
    """Answers its first prompt only once `go` is set, then plays the first legal action."""

    def __init__(self) -> None:
        self.prompted = threading.Event()
        self.go = threading.Event()

    def decide(self, prompt) -> int:
        self.prompted.set()
        self.go.wait(120)
        return prompt.legal_actions[0].index


def test_a_live_match_shows_whose_turn_it_is_and_its_time_running_down(server, browser: Browser):
    # Seat 0 is a Python bot that holds its first decision while the page is looked at.
    created = server.matches.CreateMatch(
        match_pb2.CreateMatchRequest(
            config=rules_pb2.MatchConfig(profile=rules_pb2.PROFILE_CLASSIC, seats=2, max_rounds=1),
            bots=[match_pb2.SeatBot(seat=1, kind=record_pb2.BOT_KIND_HEURISTIC)],
            time_control=rules_pb2.TimeControl(
                decision_ms=60_000, bank_ms=60_000, max_timeouts=3, disconnect_grace_ms=60_000
            ),
        ),
        timeout=10,
    )
    bot = _Waiting()
    done: dict[str, object] = {}

    def play() -> None:
        try:
            done["report"] = run(bot, server.address, created.seat_tokens[0].token, client_name="waiting")
        except BaseException as e:  # handed to the test below
            done["error"] = e

    thread = threading.Thread(target=play, daemon=True)
    thread.start()
    try:
        assert bot.prompted.wait(60), "seat 0 was never prompted"
        # wait_for_function evaluates with eval, which the viewer's CSP forbids (see above).
        page = browser.new_page(viewport={"width": 1280, "height": 900}, bypass_csp=True)
        page.goto(f"http://{server.address}/matches/{created.match_id}/view")
        page.wait_for_selector("#viewer.ready")
        page.wait_for_function("document.querySelector('#deadline').dataset.ms !== ''")
        assert page.locator("#turn").get_attribute("data-seat") == "0"
        assert page.locator("#deadline-box").is_visible()
        left = page.locator("#deadline").inner_text()
        assert left.startswith("S0 waiting: ") and left.endswith(" s left"), left
        first = float(left.split(": ")[1].split(" ")[0])
        assert 0 < first <= 120
        # The time runs down on the page between the server's answers.
        page.wait_for_function(
            f"parseFloat(document.querySelector('#deadline').textContent.split(': ')[1]) < {first}"
        )
        assert page.locator("#seats [data-card]").count() == 0, "a card face on the live page"
        OUT.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(OUT / "live-countdown.png"), full_page=True)
    finally:
        bot.go.set()
    thread.join(120)
    assert "error" not in done, done.get("error")
    # Once it has ended, the page shows the whole match, with no clock.
    page.wait_for_selector("#perspective", timeout=60_000)
    page.wait_for_selector("#viewer.ready")
    assert not page.locator("#deadline-box").is_visible()
    page.close()


def test_the_exported_file_opens_offline_at_the_start_and_jumps_to_the_end(server, maumau_bin, browser: Browser, tmp_path):
    created, replay = finished_match(server, rules_pb2.PROFILE_ROMANIAN_32, 3, 12)
    file = tmp_path / "m.replay"
    file.write_bytes(replay.SerializeToString())
    html = tmp_path / "m.html"
    out = subprocess.run(
        [str(maumau_bin), "replay", str(file), "--html", str(html)],
        capture_output=True, text=True, check=True,
    )
    assert f"viewer written to {html}" in out.stdout
    seen = frames(server, created.match_id)["frames"]
    context = browser.new_context(offline=True, viewport={"width": 1360, "height": 900})
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    # A finished match opens at its start (no spoiler); `#e=end` is its last position.
    open_at(page, html.as_uri())
    assert shown(page) == expected(seen[0]), "the first position"
    open_at(page, html.as_uri() + "#e=end")
    page.reload()
    page.wait_for_selector("#viewer.ready")
    assert shown(page) == expected(seen[-1]), "the last position"
    assert all(u.startswith(("file:", "data:")) for u in requests), requests
    page.keyboard.press("ArrowLeft")
    assert shown(page) == expected(seen[-2])
    OUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(OUT / "exported-romanian-32.png"), full_page=True)
    context.close()


def test_the_exported_file_switches_perspective_offline(server, maumau_bin, browser: Browser, tmp_path):
    created, replay = finished_match(server, rules_pb2.PROFILE_CLASSIC, 3, 14)
    file = tmp_path / "m.replay"
    file.write_bytes(replay.SerializeToString())
    html = tmp_path / "m.html"
    subprocess.run([str(maumau_bin), "replay", str(file), "--html", str(html)], check=True, capture_output=True)
    seat_1 = frames(server, created.match_id, "?view=1")["frames"]
    context = browser.new_context(offline=True, viewport={"width": 1360, "height": 900})
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    open_at(page, html.as_uri() + "#e=3")
    assert page.evaluate(READ_TABLE)["perspective"] == "omniscient", "every hand first"
    page.select_option("#perspective", "1")
    page.wait_for_selector('#viewer[data-perspective="seat 1"]')
    assert shown(page) == expected(seat_1[3]), "seat 1's view at the same event, from the file"
    assert "view=1" in page.url, "the address keeps the perspective"
    assert all(u.startswith(("file:", "data:")) for u in requests), requests
    OUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(OUT / "exported-seat-1.png"), full_page=True)
    context.close()


def test_the_list_of_matches_fits_a_phone(server, browser: Browser):
    finished_match(server, rules_pb2.PROFILE_CLASSIC, 3, 21)
    for name, width, height in [("matches-1366", 1366, 900), ("matches-phone", 390, 844)]:
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        page.goto(f"http://{server.address}/matches")
        page.wait_for_selector("table.matches")
        scroll, inner = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert scroll <= inner, f"the list scrolls sideways at {width} px: {scroll} > {inner}"
        OUT.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(OUT / f"{name}.png"), full_page=False)
        context.close()


def test_stepping_scrolls_the_move_list_not_the_page(server, browser: Browser):
    created, _ = finished_match(server, rules_pb2.PROFILE_CLASSIC, 3, 22)
    for name, width, height in [("end-1366", 1366, 900), ("end-phone", 390, 844)]:
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        open_at(page, f"http://{server.address}/matches/{created.match_id}/view#e=end")
        for _ in range(3):
            page.keyboard.press("ArrowLeft")
        scrolled = page.evaluate("() => [window.scrollY, document.querySelector('aside').scrollTop]")
        assert scrolled[0] == 0, f"the page itself scrolled at {width} px: {scrolled}"
        assert scrolled[1] > 0, f"the move list shows the current move at {width} px: {scrolled}"
        OUT.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(OUT / f"{name}.png"), full_page=False)
        context.close()
