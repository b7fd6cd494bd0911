"""Checks a finished match's deals from its revealed seed, in pure Python.

The server commits to each match's seed before play (``Welcome.seed_commitment`` =
SHA-256(salt ‖ seed as 8 big-endian bytes)) and reveals seed and salt at the end
(``MatchReport.seed``, ``MatchReport.seed_salt``). This module recomputes every deal from the
revealed seed exactly as the server shuffles (docs/PROTOCOL.md, "Checking the deals": the
generator, how it is seeded, the shuffle loop and the deal order) and compares the deals with what
a seat saw: its own dealt cards, in dealing order, the up-card and the dealer of every round.

    class MyBot(DealRecorder, Bot):        # records the Welcome and every event
        def decide(self, prompt): ...

    bot = MyBot()
    report = run(bot, address, token, from_start=True)   # events from event 1
    check = bot.check_deals(report)                       # or check_deals(welcome, events, report)
    assert check.ok, check.problems

It covers matches started from a seed (every rated match, and every match created without a
deck order or a position).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Optional

from .bot import seed_commitment
from .pb.maumau.v1 import cards_pb2, events_pb2, play_pb2, record_pb2, rules_pb2

__all__ = [
    "Pcg64Mcg",
    "Deal",
    "DealCheck",
    "DealRecorder",
    "check_deals",
    "deal_round",
    "deck",
    "generator",
    "random_below",
    "seed_commitment",
    "shuffle",
]

_M32 = (1 << 32) - 1
_M64 = (1 << 64) - 1
_M128 = (1 << 128) - 1
#: The multiplier of rand_pcg's Mcg128Xsl64 (Pcg64Mcg).
PCG_MULTIPLIER = 0x2360_ED05_1FC6_5DA4_4385_DF64_9FCC_F645
#: The odd constant the shuffle counter is multiplied by before it is mixed into the seed.
GOLDEN = 0x9E37_79B9_7F4A_7C15

#: A card as (Rank, Suit) enum numbers of cards.proto, e.g. (RANK_SEVEN, SUIT_HEARTS) = (7, 3).
Card = tuple[int, int]


def _rotr32(x: int, r: int) -> int:
    r &= 31
    return ((x >> r) | (x << (32 - r))) & _M32


def _rotr64(x: int, r: int) -> int:
    r &= 63
    return ((x >> r) | (x << (64 - r))) & _M64


class Pcg64Mcg:
    """rand_pcg 0.10's ``Mcg128Xsl64``: a 128-bit multiplicative congruential generator with the
    XSL RR output function, 64 bits per step."""

    def __init__(self, state: int):
        self.state = (state | 1) & _M128  # the low bit is forced to 1

    @classmethod
    def seed_from_u64(cls, seed: int) -> "Pcg64Mcg":
        """rand_core 0.10's default ``SeedableRng::seed_from_u64``: four outputs of a PCG32 step
        on a 64-bit state fill the 16 seed bytes (each output little-endian), and the seed is read
        as two little-endian u64 words, low word first."""
        state = seed & _M64
        raw = b""
        for _ in range(4):
            state = (state * 0x5851_F42D_4C95_7F2D + 0xA176_54E4_6FBE_17F3) & _M64
            xorshifted = (((state >> 18) ^ state) >> 27) & _M32
            raw += _rotr32(xorshifted, state >> 59).to_bytes(4, "little")
        low = int.from_bytes(raw[:8], "little")
        high = int.from_bytes(raw[8:], "little")
        return cls(low | (high << 64))

    def next_u64(self) -> int:
        self.state = (self.state * PCG_MULTIPLIER) & _M128
        rot = self.state >> 122
        xsl = ((self.state >> 64) ^ self.state) & _M64
        return _rotr64(xsl, rot)

    def next_u32(self) -> int:
        """The low 32 bits of the next 64-bit output."""
        return self.next_u64() & _M32


def generator(seed: int, shuffles: int) -> Pcg64Mcg:
    """The fresh generator the engine makes for its shuffle (or draw of lots) number
    ``shuffles`` (counted from 0) of the match: Pcg64Mcg.seed_from_u64(seed XOR ((shuffles + 1)
    × 0x9E3779B97F4A7C15 mod 2^64))."""
    return Pcg64Mcg.seed_from_u64(seed ^ (((shuffles + 1) * GOLDEN) & _M64))


def random_below(rng: Pcg64Mcg, n: int) -> int:
    """A number in [0, n) for 1 <= n <= 2^32, as rand 0.10's ``random_range(0..n)`` draws a u32
    (also for u8 ranges): Canon's method with one extra draw to reduce the bias."""
    rng_n = n & _M32
    if rng_n == 0:  # n = 2^32: the whole range
        return rng.next_u32()
    product = rng.next_u32() * rng_n
    result, low = product >> 32, product & _M32
    if low > ((-rng_n) & _M32):
        new_high = (rng.next_u32() * rng_n) >> 32
        if low + new_high > _M32:
            result += 1
    return result


def _chunk_bound(m: int) -> tuple[int, int]:
    """(m × (m+1) × … × (m+count-1), count): the longest such product that fits a u32."""
    product, current = m, m + 1
    while product * current <= _M32:
        product *= current
        current += 1
    return product, current - m


def shuffle(items: list, rng: Pcg64Mcg) -> None:
    """rand 0.10's ``SliceRandom::shuffle`` of a slice shorter than 2^32, in place.

    For i = 0, 1, …, len-1 it swaps items[i] with items[j], j uniform in [0, i]. The j are taken
    from "chunks": one ``random_below(rng, bound)`` with bound = (i+1)(i+2)…(i+count) (the most
    factors that fit a u32) yields the next ``count`` indices as its mixed-radix digits, lowest
    first (j = chunk mod (i+1), chunk //= (i+1)); the last digit of a chunk is what remains of it.
    The first index (i = 0) is always 0 and draws nothing.
    """
    if len(items) <= 1:
        return
    n = 0  # the next index is uniform in [0, n]
    chunk = 0
    remaining = 1  # for n = 0 the first index is 0 without a draw
    for i in range(len(items)):
        next_n = n + 1
        if remaining == 0:
            bound, count = _chunk_bound(next_n)
            chunk = random_below(rng, bound)
            remaining = count
        remaining -= 1
        if remaining == 0:
            j = chunk
        else:
            j = chunk % next_n
            chunk //= next_n
        n = next_n
        items[i], items[j] = items[j], items[i]


def deck(rules: rules_pb2.Rules) -> list[Card]:
    """The deck before a shuffle: suits clubs, diamonds, hearts, spades; within a suit the ranks
    from two to ace that are in the deck; each card ``rules.copies`` times in a row."""
    ranks = [r.rank for r in rules.ranks if r.in_deck]
    ranks.sort()
    copies = max(1, rules.copies)
    suits = [cards_pb2.SUIT_CLUBS, cards_pb2.SUIT_DIAMONDS, cards_pb2.SUIT_HEARTS, cards_pb2.SUIT_SPADES]
    return [(rank, suit) for suit in suits for rank in ranks for _ in range(copies)]


@dataclass
class Deal:
    """One round's deal: each seat's cards in the order dealt, the up-card and the stock (top
    first) after it."""

    dealer: int
    hands: list[list[Card]]
    up_card: Card
    stock: list[Card]


def deal_round(rules: rules_pb2.Rules, seed: int, shuffles: int, dealer: int) -> Deal:
    """The deal of a round whose shuffle is the match's shuffle number ``shuffles``: the deck is
    shuffled with ``generator(seed, shuffles)``; its last element is the top. Cards are dealt one
    at a time from the top, ``hand_size`` rounds of the table, starting with the dealer under
    UP_CARD_MODE_AS_PLAY_BY_FIRST (brazilian: the first player F), else with the seat after the
    dealer, going up in seat number; then the next card is turned up."""
    cards = deck(rules)
    shuffle(cards, generator(seed, shuffles))
    seats = rules.seats
    hands: list[list[Card]] = [[] for _ in range(seats)]
    seat = dealer if rules.up_card == rules_pb2.UP_CARD_MODE_AS_PLAY_BY_FIRST else (dealer + 1) % seats
    for _ in range(rules.hand_size * seats):
        hands[seat].append(cards.pop())
        seat = (seat + 1) % seats
    up = cards.pop()
    return Deal(dealer=dealer, hands=hands, up_card=up, stock=list(reversed(cards)))


@dataclass
class DealCheck:
    """What :func:`check_deals` found: ``ok`` when the commitment holds and every round's deal
    equals what the seat saw."""

    commitment_ok: bool = False
    rounds_checked: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.commitment_ok and self.rounds_checked > 0 and not self.problems


def _card(c: cards_pb2.Card) -> Card:
    return (c.rank, c.suit)


def _show(c: Card) -> str:
    return f"{cards_pb2.Rank.Name(c[0])}/{cards_pb2.Suit.Name(c[1])}"


def check_deals(
    welcome: play_pb2.Welcome,
    events: Iterable[play_pb2.NumberedEvent],
    report: record_pb2.MatchReport,
) -> DealCheck:
    """Checks a finished match from one seat's view: the revealed seed and salt against the
    commitment in ``welcome``, then, round by round, the dealer, the seat's dealt cards (in
    order) and the up-card against the deal recomputed from the seed. ``events`` must be the
    seat's whole event log from event 1 (see :class:`DealRecorder`).

    The shuffle counter: the first dealer is drawn with generator 0 (``random_below(seats)``);
    every round's shuffle and every rebuild of the stock (a StockRebuilt event) takes the next
    generator, in the order they happen."""
    out = DealCheck()
    out.commitment_ok = seed_commitment(report.seed, report.seed_salt) == welcome.seed_commitment
    if not out.commitment_ok:
        out.problems.append("SHA-256(seed_salt ‖ seed) is not the commitment sent in Welcome")
    rules = welcome.rules
    seat = welcome.seat
    shuffles = 0
    dealer = random_below(generator(report.seed, shuffles), rules.seats)
    shuffles += 1
    expected: Optional[Deal] = None
    round_no = 0
    dealt: list[Card] = []
    up: Optional[Card] = None

    def finish_round() -> None:
        if expected is None:
            return
        out.rounds_checked += 1
        want = expected.hands[seat]
        if dealt != want:
            out.problems.append(
                f"round {round_no}: dealt {[_show(c) for c in dealt]}, the seed deals "
                f"{[_show(c) for c in want]}"
            )
        if up != expected.up_card:
            out.problems.append(
                f"round {round_no}: up-card {_show(up) if up else None}, the seed turns "
                f"{_show(expected.up_card)}"
            )

    for numbered in events:
        e = numbered.event
        kind = e.WhichOneof("kind")
        if kind == "round_started":
            finish_round()
            round_no = e.round_started.round
            if round_no > 1:
                dealer = (dealer + 1) % rules.seats
            if e.round_started.dealer != dealer:
                out.problems.append(
                    f"round {round_no}: dealer {e.round_started.dealer}, the seed picks {dealer}"
                )
            expected = deal_round(rules, report.seed, shuffles, dealer)
            shuffles += 1
            dealt, up = [], None
        elif kind == "card_drawn" and e.card_drawn.cause == events_pb2.DRAW_CAUSE_DEAL:
            if e.card_drawn.seat == seat and e.card_drawn.HasField("card"):
                dealt.append(_card(e.card_drawn.card))
        elif kind == "up_card_turned":
            up = _card(e.up_card_turned.card)
        elif kind == "stock_rebuilt":
            shuffles += 1
    finish_round()
    if out.rounds_checked == 0:
        out.problems.append("no round started in the events given (they must start at event 1)")
    return out


class DealRecorder:
    """Keeps what :func:`check_deals` needs while a bot plays: mix it in before :class:`Bot`
    (``class MyBot(DealRecorder, Bot)``; call ``super()`` in your own ``on_welcome`` and
    ``on_event``) and play with ``run(..., from_start=True)``, so the events start at event 1."""

    welcome: Optional[play_pb2.Welcome] = None

    def on_welcome(self, welcome: play_pb2.Welcome) -> None:
        if self.welcome is None:
            self.welcome = welcome
        super().on_welcome(welcome)  # type: ignore[misc]

    def on_event(self, event: play_pb2.NumberedEvent) -> None:
        if not hasattr(self, "events"):
            self.events: list[play_pb2.NumberedEvent] = []
        self.events.append(event)
        super().on_event(event)  # type: ignore[misc]

    def check_deals(self, report: record_pb2.MatchReport) -> DealCheck:
        """:func:`check_deals` on what this seat recorded."""
        if self.welcome is None:
            return DealCheck(problems=["no Welcome was recorded"])
        return check_deals(self.welcome, getattr(self, "events", []), report)
