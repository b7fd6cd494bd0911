"""The observation vector from what the server sends: a policy trained on ``VecEnv`` plays over gRPC.

``observation_vector(prompt.observation)`` turns a ``maumau.v1.Observation`` (the message in every
``DecisionPrompt``, from the ``maumau-client`` package) into the same ``float32[OBS_LEN]`` that
``Game.observation_vector(seat)`` gives for that seat, in the layout of ``OBS_LAYOUT`` (the
package README). ``action_mask(prompt)`` is the prompt's legal actions as a bool mask over the
dense action index. A test (``tests-installed/test_grpc_observation.py``) plays matches on a real
``maumau serve`` and checks, range by range, that both encodings agree at every decision.

Only the message's fields are read (no import of the generated code), so any protobuf object
with the ``Observation`` fields works.
"""

from __future__ import annotations

import numpy as np

from ._core import ACTION_COUNT, MAX_SEATS, OBS_LAYOUT, OBS_LEN

__all__ = ["action_mask", "card_index", "observation_vector"]

_HAND, _TOP, _DISCARD, _DRAWN, _PENALTY, _NAMED_SUIT, _PHASE, _SCALARS, _PROFILE, _CALLS, _SEATS, _OFFENCE = (
    OBS_LAYOUT[name][0]
    for name in (
        "hand",
        "top",
        "discard",
        "drawn",
        "penalty",
        "named_suit",
        "phase",
        "scalars",
        "profile",
        "calls",
        "seats",
        "offence_kind",
    )
)
_SEAT_WIDTH = (OBS_LAYOUT["seats"][1] - _SEATS) // MAX_SEATS


def card_index(card) -> int:
    """A ``maumau.v1.Card``'s index in the vector's card blocks: ``suit * 13 + rank``, suits ♣ ♦ ♥ ♠
    and ranks 2 … A from 0 (the wire's enums start at 1 for clubs and at 2 for the two)."""
    return (card.suit - 1) * 13 + (card.rank - 2)


def _has(message, name: str) -> bool:
    return message.HasField(name)


def observation_vector(obs, out: np.ndarray | None = None) -> np.ndarray:
    """``obs`` (a seat's ``maumau.v1.Observation``) as ``float32[OBS_LEN]``, the layout of
    ``Game.observation_vector``. Writes into ``out`` when given (``OBS_LEN`` float32s)."""
    v = np.zeros(OBS_LEN, np.float32) if out is None else out
    if out is not None:
        v.fill(0.0)
    for c in obs.hand:
        v[_HAND + card_index(c)] += 1.0
    if _has(obs, "top") and obs.top.suit:
        v[_TOP + card_index(obs.top)] = 1.0
    for c in obs.discard:
        v[_DISCARD + card_index(c)] += 1.0
    if _has(obs, "drawn_card") and obs.drawn_card.suit:
        v[_DRAWN + card_index(obs.drawn_card)] = 1.0
    for c in obs.penalty_cards:
        v[_PENALTY + card_index(c)] += 1.0
    if obs.named_suit:
        v[_NAMED_SUIT + obs.named_suit - 1] = 1.0
    v[_PHASE + obs.phase - 1] = 1.0
    v[_SCALARS : _SCALARS + 6] = (
        obs.debt,
        obs.stock_size,
        obs.round,
        obs.turns,
        float(obs.clockwise),
        float(obs.just_accused),
    )
    v[_PROFILE + obs.config.profile - 1] = 1.0
    v[_CALLS + obs.config.calls - 1] = 1.0
    n = obs.config.seats
    viewer = obs.seat if _has(obs, "seat") else 0
    offence = obs.offence if _has(obs, "offence") and obs.offence.kind else None
    to_act = obs.to_act if _has(obs, "to_act") else None
    pending_out = obs.pending_out if _has(obs, "pending_out") else None
    for k in range(n):
        s = (viewer + k) % n
        b = _SEATS + k * _SEAT_WIDTH
        v[b] = 1.0
        v[b + 1] = obs.hand_sizes[s]
        v[b + 2] = obs.totals[s]
        v[b + 3] = obs.rounds_won[s]
        v[b + 4] = float(to_act == s)
        v[b + 5] = float(obs.dealer == s)
        v[b + 6] = float(offence is not None and offence.offender == s)
        v[b + 7] = float(pending_out == s)
        v[b + 8 + (obs.last_calls[s] if s < len(obs.last_calls) else 0)] = 1.0
    if offence is not None:
        v[_OFFENCE + offence.kind - 1] = 1.0
    return v


def action_mask(prompt) -> np.ndarray:
    """The legal actions of a ``maumau.v1.DecisionPrompt`` as ``bool[ACTION_COUNT]`` over the
    dense index (``prompt.legal_actions[i].index``)."""
    mask = np.zeros(ACTION_COUNT, bool)
    for a in prompt.legal_actions:
        mask[a.index] = True
    return mask
