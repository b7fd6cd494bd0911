"""``evaluate``: how well a policy plays against the built-in bots, with 95% intervals.

``evaluate(policy, opponents=("random",), games=200, profile="classic", seats=None, ...)`` plays
``games`` matches on a ``Table`` (the bots at engine speed) and returns an ``Evaluation``: the
policy's win share (a shared win split between the winners), its mean placing and its mean final
total, each with a 95% interval, and the per-game numbers.

Duplicate deals (``duplicate=True``, the default): games are played in blocks of ``seats``, one
deal per block, the policy once in every seat with the opponents in the same order after it, so
every seat's luck of the deal falls on the policy once. The intervals treat each block as one
sample (a cluster-robust normal interval over the blocks), since the games of a block share
their deal. With ``duplicate=False`` every game has its own deal (the policy's seat still
rotates) and the intervals are the usual ones over games.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from typing import Callable, Sequence, Union

import numpy as np

from ._core import Table

Policy = Union[str, Callable[[np.ndarray, np.ndarray], int]]
"""A built-in bot's name, or a callable ``(observation float32[OBS_LEN], action_mask
bool[ACTION_COUNT]) -> action index``."""

Z95 = 1.959964


@dataclass(frozen=True)
class Estimate:
    """A mean with the half-width of its 95% interval (``inf`` with fewer than two samples)."""

    mean: float
    ci95: float

    @property
    def low(self) -> float:
        return self.mean - self.ci95

    @property
    def high(self) -> float:
        return self.mean + self.ci95

    def covers(self, value: float) -> bool:
        """True when ``value`` lies in the 95% interval."""
        return self.low <= value <= self.high

    def __str__(self) -> str:
        return f"{self.mean:.3f} ± {self.ci95:.3f}"


def _estimate(values: np.ndarray, blocks: np.ndarray) -> Estimate:
    """The mean of ``values`` and its 95% interval, the games of one block counted as one
    sample: the cluster-robust variance of a mean, which for blocks of equal size is the
    variance of the block means over their number."""
    n = len(values)
    mean = float(values.mean())
    ids, inverse = np.unique(blocks, return_inverse=True)
    k = len(ids)
    if k < 2:
        return Estimate(mean, math.inf)
    sums = np.bincount(inverse, weights=values - mean, minlength=k)
    var = float((sums**2).sum()) / n**2 * k / (k - 1)
    return Estimate(mean, Z95 * math.sqrt(var))


@dataclass(frozen=True, eq=False)
class Evaluation:
    """What ``evaluate`` measured. ``str()`` gives one readable line."""

    policy: str
    opponents: tuple[str, ...]
    profile: str
    seats: int
    games: int
    duplicate: bool
    win_share: Estimate
    """Share of games won, a win shared by k winners counting 1/k."""
    placing: Estimate
    """Mean placing, 1 the best."""
    score: Estimate
    """Mean final total: penalty points (lower is better) except in romanian-32, where points
    are won (higher is better)."""
    # Per game, in the order played.
    seat: np.ndarray = field(repr=False)
    """The policy's seat in each game."""
    wins: np.ndarray = field(repr=False)
    placings: np.ndarray = field(repr=False)
    totals: np.ndarray = field(repr=False)

    @property
    def even_share(self) -> float:
        """The win share of a policy as good as its opponents would be at an even table: 1/seats."""
        return 1.0 / self.seats

    def __str__(self) -> str:
        if len(set(self.opponents)) == 1:
            against = self.opponents[0]
            if len(self.opponents) > 1:
                against += f" ×{len(self.opponents)}"
        else:
            against = ", ".join(self.opponents)
        points = "points, higher" if self.profile == "romanian-32" else "penalty, lower"
        return (
            f"win share {self.win_share} over {self.games} games against {against} "
            f"(even share {self.even_share:.3f}); mean placing {self.placing.mean:.2f} "
            f"± {self.placing.ci95:.2f}; mean total {self.score.mean:.1f} "
            f"± {self.score.ci95:.1f} ({points} is better)"
        )


def _name(policy: Policy) -> str:
    if isinstance(policy, str):
        return policy
    return getattr(policy, "__name__", type(policy).__name__)


def evaluate(
    policy: Policy,
    opponents: Union[str, Sequence[str]] = ("random",),
    games: int = 200,
    profile: str = "classic",
    seats: int | None = None,
    options: str = "-",
    calls: str = "challenge",
    seed: int = 0,
    duplicate: bool = True,
    progress: bool = False,
    max_turns_per_round: int = 1000,
    max_rounds: int = 1000,
) -> Evaluation:
    """Plays ``games`` matches of ``policy`` against built-in bots and returns an ``Evaluation``.

    ``policy``: a callable ``(observation, action_mask) -> action`` (the float32 vector of
    ``OBS_LEN`` and a bool mask of ``ACTION_COUNT``; return a dense index of a legal action), or
    a built-in bot's name (``"heuristic"``, ``"search:200"``; the whole match then runs in the
    engine) for a baseline. An action outside the mask that the engine refuses raises
    ``RejectedAction``.

    ``opponents``: one bot name for every other seat, or a list with one name per other seat in
    clockwise order after the policy (a list of one name fills every other seat). ``seats``
    defaults to one more than the names listed (2 for a single name).

    The rules are ``profile``, ``options`` and ``calls`` as in ``Game``. Deals come from ``seed``
    (the same arguments give the same games). ``duplicate``: see the module docs.
    ``progress=True`` prints a line to stderr every tenth of the games.

    Raises ``ValueError`` for ``games`` below 1, a table size that does not fit the opponents or
    the profile, an unknown bot name or rules the engine refuses.
    """
    if isinstance(games, bool) or not isinstance(games, (int, np.integer)):
        raise TypeError(f"games is a number of matches, got {games!r}")
    games = int(games)
    if games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    names = [opponents] if isinstance(opponents, str) else list(opponents)
    if not names or not all(isinstance(n, str) for n in names):
        raise ValueError(
            f"opponents are built-in bots' names (random, heuristic, search), got {opponents!r}"
        )
    if seats is None:
        seats = len(names) + 1 if len(names) > 1 else 2
    if isinstance(seats, bool) or not isinstance(seats, (int, np.integer)) or seats < 2:
        raise ValueError(f"seats is the table's size, 2 or more, got {seats!r}")
    seats = int(seats)
    if len(names) == 1:
        names = names * (seats - 1)
    elif len(names) != seats - 1:
        raise ValueError(
            f"{seats} seats need {seats - 1} opponents (or one name for every other seat), "
            f"got {len(names)}: {names}"
        )
    if isinstance(policy, str):
        play = None
    elif callable(policy):
        play = policy
    else:
        raise TypeError(
            f"policy is a callable(observation, action_mask) or a bot's name, got {policy!r}"
        )

    # One table per seat of the policy: opponents clockwise after it, in the order given.
    tables = []
    for p in range(seats):
        bots: list[str | None] = [None] * seats
        bots[p] = policy if play is None else None
        for j, name in enumerate(names):
            bots[(p + 1 + j) % seats] = name
        tables.append(
            Table(
                bots,
                profile=profile,
                options=options,
                calls=calls,
                max_turns_per_round=max_turns_per_round,
                max_rounds=max_rounds,
            )
        )

    deals = -(-games // seats) if duplicate else games
    deal_seeds = np.random.default_rng(seed).integers(0, 2**63 - 1, size=deals)
    seat = np.zeros(games, np.int64)
    block = np.zeros(games, np.int64)
    wins = np.zeros(games)
    placings = np.zeros(games)
    totals = np.zeros(games)
    step = max(1, games // 10)
    for i in range(games):
        if duplicate:
            block[i], seat[i] = divmod(i, seats)
        else:
            block[i], seat[i] = i, i % seats
        p = int(seat[i])
        table = tables[p]
        to_act = table.reset(int(deal_seeds[block[i]]))
        while to_act is not None:
            obs, mask = table.observe(to_act)
            to_act = table.step(play(obs, mask))
        result = table.game().result()
        placing = result["placings"][p]
        placings[i] = placing
        totals[i] = result["totals"][p]
        if placing == 1:
            wins[i] = 1.0 / sum(1 for q in result["placings"] if q == 1)
        if progress and ((i + 1) % step == 0 or i + 1 == games):
            print(
                f"{i + 1}/{games} games, win share {wins[: i + 1].mean():.3f}",
                file=sys.stderr,
                flush=True,
            )
    return Evaluation(
        policy=_name(policy),
        opponents=tuple(names),
        profile=profile,
        seats=seats,
        games=games,
        duplicate=duplicate,
        win_share=_estimate(wins, block),
        placing=_estimate(placings, block),
        score=_estimate(totals, block),
        seat=seat,
        wins=wins,
        placings=placings,
        totals=totals,
    )
