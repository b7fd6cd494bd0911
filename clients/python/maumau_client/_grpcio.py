"""The grpcio transport of :func:`maumau_client.run` and :func:`maumau_client.hold_lobby`: the Play
stream on grpcio's asyncio stack (``grpc.aio``), or on a synchronous channel handed to ``run``.
Imported only when a bot plays on grpcio (see :mod:`maumau_client.native`), so that grpc and
asyncio are not imported by a bot that plays natively."""

from __future__ import annotations

import asyncio
import logging
import queue
from dataclasses import dataclass, field
from typing import Iterator, Optional, Union

import grpc
import grpc.aio

from .bot import Bot, MatchError, channel_options
from .pb.maumau.v1 import errors_pb2, match_pb2, match_pb2_grpc, play_pb2, play_pb2_grpc, record_pb2

log = logging.getLogger("maumau_client")


@dataclass
class RunStats:
    """What happened on the wire during :func:`run` (pass one in to read it afterwards)."""

    streams: int = 0  #: Play streams opened (1 + reconnects)
    resumed_from: list = field(default_factory=list)  #: last_event_number sent in each resume
    events: int = 0  #: events handed to the bot
    duplicates: int = 0  #: events dropped because their number was already seen
    gaps: int = 0  #: times a gap in the numbers made the helper ask for a Resume
    prompts: int = 0  #: required prompts answered
    resent: int = 0  #: answers re-sent after a reconnect
    rejected: int = 0  #: ActionRejected received
    batches: int = 0  #: EventBatch messages received
    accepted: int = 0  #: ActionAccepted received, on their own or in batches
    last_event_number: int = 0

# Refusals after which reconnecting cannot help (the `maumau-reason` trailer of a failed stream).
_FATAL_REASONS = {
    "ERROR_REASON_BAD_TOKEN",
    "ERROR_REASON_NOT_SEATED",
    "ERROR_REASON_NOT_JOINED",
    "ERROR_REASON_ALREADY_JOINED",
    "ERROR_REASON_SUPERSEDED",
    "ERROR_REASON_PERMISSION_DENIED",
    "ERROR_REASON_MATCH_NOT_FOUND",
    "ERROR_REASON_MALFORMED_MESSAGE",
}
# gRPC codes of a dropped or broken connection: worth a new stream.
_RETRYABLE_CODES = {
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.CANCELLED,
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.ABORTED,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
}


class _Outbox:
    """The request side of a synchronous gRPC stream: a queue the gRPC thread drains (the lobby's,
    and a Play stream on a synchronous channel handed to :func:`run`)."""

    _CLOSE = object()

    def __init__(self) -> None:
        self._q: "queue.Queue[object]" = queue.Queue()

    def put(self, request: play_pb2.PlayRequest) -> None:
        self._q.put(request)

    def close(self) -> None:
        self._q.put(self._CLOSE)

    def __iter__(self) -> Iterator[play_pb2.PlayRequest]:
        while True:
            item = self._q.get()
            if item is self._CLOSE:
                return
            yield item  # type: ignore[misc]


def _reason(error: grpc.RpcError) -> str:
    try:
        for key, value in error.trailing_metadata() or ():
            if key == "maumau-reason":
                return value
    except Exception:  # a locally failed call may have no trailers
        pass
    return ""


# What the session queues to send while it handles a message; the stream sends it afterwards.
_Requests = list


class _Session:
    def __init__(self, bot: Bot, token: str, client_name: str, stats: RunStats, batched: bool = True):
        self.bot = bot
        # Bot.on_message needs each part of a batch wrapped in a ServerMessage of its own; skip
        # building those copies when the bot does not look at them.
        self.wants_messages = getattr(bot.on_message, "__func__", None) is not Bot.on_message
        self.token = token
        self.client_name = client_name
        self.batched = batched
        self.stats = stats
        self.last_event = 0
        self.joined = False
        self.match_id = ""
        self.request_id = 0
        # The last required prompt and the answer to it, until the server acknowledges it.
        self.pending: Optional[play_pb2.DecisionPrompt] = None
        self.pending_index: Optional[int] = None
        self.pending_request = 0
        self.answered: set[int] = set()  # state ids answered on the current stream
        self.fallback_used: set[int] = set()
        self.resyncing = False
        self.from_start = False  # the first Join asks for every event from event 1
        self.hold_back = 0.0  # seconds to wait before sending what handle() queued (rate limited)

    # ----- sending ---------------------------------------------------------------------------

    def _submit(self, outbox: _Requests, state_id: int, index: int) -> int:
        self.request_id += 1
        outbox.append(
            play_pb2.PlayRequest(
                action=play_pb2.ActionSubmission(
                    state_id=state_id, action_index=index, request_id=self.request_id
                )
            )
        )
        return self.request_id

    def _answer(self, outbox: _Requests, state_id: int, index: int) -> None:
        """Submits the answer to the pending required prompt."""
        self.pending_index = index
        self.pending_request = self._submit(outbox, state_id, index)

    def join_request(self) -> play_pb2.PlayRequest:
        join = play_pb2.Join(token=self.token, client_name=self.client_name)
        join.event_delivery = (
            play_pb2.EVENT_DELIVERY_WITH_PROMPT if self.batched else play_pb2.EVENT_DELIVERY_PER_STEP
        )
        if self.joined:
            join.resume.last_event_number = self.last_event
            self.stats.resumed_from.append(self.last_event)
        elif self.from_start:
            join.resume.CopyFrom(play_pb2.Resume(last_event_number=0))
            self.stats.resumed_from.append(0)
        return play_pb2.PlayRequest(join=join)

    def new_stream(self) -> None:
        self.answered = set()
        self.resyncing = False

    # ----- receiving -------------------------------------------------------------------------

    def handle(self, msg: play_pb2.ServerMessage, outbox: _Requests) -> Optional[record_pb2.MatchReport]:
        """Handles one server message; what it has to send is appended to ``outbox``."""
        kind = msg.WhichOneof("kind")
        if kind == "batch":
            self.stats.batches += 1
            # EVENT_DELIVERY_WITH_PROMPT or _PER_STEP: the held answers, the events, then the
            # prompt, each handled (and shown to the bot) as if it had come on its own.
            batch = msg.batch
            for accepted in batch.accepted:
                self._part("accepted", accepted, outbox)
            for event in batch.events:
                self._part("event", event, outbox)
            if batch.HasField("prompt"):
                self._part("prompt", batch.prompt, outbox)
            return None
        if kind is None:
            self.bot.on_message(msg)
            return None
        return self._part(kind, getattr(msg, kind), outbox, msg)

    def _part(
        self, kind: str, body, outbox: _Requests, msg: Optional[play_pb2.ServerMessage] = None
    ) -> Optional[record_pb2.MatchReport]:
        """One message, ``body`` being its ``kind`` field (``msg`` itself unless it came in a batch)."""
        if self.wants_messages:
            self.bot.on_message(msg if msg is not None else play_pb2.ServerMessage(**{kind: body}))
        if kind == "event":
            n = body.number
            if self.resyncing:
                pass  # wait for the Welcome that answers our Resume
            elif n <= self.last_event:
                self.stats.duplicates += 1
                log.warning("event %d received again; ignored", n)
            elif n > self.last_event + 1:
                self.stats.gaps += 1
                log.warning("events %d..%d missing; resuming", self.last_event + 1, n - 1)
                self.resyncing = True
                outbox.append(play_pb2.PlayRequest(resume=play_pb2.Resume(last_event_number=self.last_event)))
            else:
                self.last_event = n
                self.stats.last_event_number = n
                self.stats.events += 1
                self.bot.on_event(body)
        elif kind == "prompt":
            self._prompt(body, outbox)
        elif kind == "accepted":
            self.stats.accepted += 1
            if self.pending is not None and body.request_id == self.pending_request:
                self.pending = None
                self.pending_index = None
        elif kind == "welcome":
            resumed = self.joined
            self.joined = True
            self.resyncing = False
            self.match_id = body.match_id
            self.bot.on_welcome(body)
            if resumed and self.pending is not None and self.pending_index is not None:
                # The server does not always repeat a pending prompt after a resume: answer it
                # again. If the first answer got through, this one is refused as stale.
                self.answered.add(self.pending.state_id)
                self.stats.resent += 1
                self._answer(outbox, self.pending.state_id, self.pending_index)
        elif kind == "snapshot":
            self.last_event = max(self.last_event, body.last_event_number)
            self.stats.last_event_number = self.last_event
            self.bot.on_snapshot(body)
        elif kind == "rejected":
            self._rejected(body, outbox)
        elif kind == "finished":
            self.bot.on_finished(body.report)
            return body.report
        return None

    def _prompt(self, prompt: play_pb2.DecisionPrompt, outbox: _Requests) -> None:
        legal = {a.index for a in prompt.legal_actions}
        if not prompt.required:
            choice = self.bot.decide_optional(prompt)
            if choice is not None:
                if choice not in legal:
                    raise ValueError(f"decide_optional returned {choice}, not one of {sorted(legal)}")
                self._submit(outbox, 0, choice)  # challenges and announces may race: state 0
            return
        if prompt.state_id in self.answered:
            return  # already answered on this stream (re-sent after a reconnect)
        choice = self.bot.decide(prompt)
        if choice not in legal:
            raise ValueError(f"decide returned {choice!r}, not one of the legal indices {sorted(legal)}")
        self.pending = prompt
        self.answered.add(prompt.state_id)
        self.stats.prompts += 1
        self._answer(outbox, prompt.state_id, choice)

    def _rejected(self, rejected: play_pb2.ActionRejected, outbox: _Requests) -> None:
        self.stats.rejected += 1
        self.bot.on_rejected(rejected)
        reason = errors_pb2.ErrorReason.Name(rejected.reason) if rejected.reason in errors_pb2.ErrorReason.values() else ""
        pending = self.pending
        if pending is None or rejected.request_id != self.pending_request:
            return
        if reason == "ERROR_REASON_STALE_STATE" or reason == "ERROR_REASON_MATCH_OVER":
            self.pending = None  # the match moved on; a new prompt follows if one is due
            self.pending_index = None
        elif reason == "ERROR_REASON_RATE_LIMITED":
            self.hold_back = 0.05  # waited on the event loop, so a lobby's other matches go on
            self._answer(outbox, pending.state_id, self.pending_index or 0)
        elif pending.state_id not in self.fallback_used:
            # The engine refused a listed action: play the first legal one so the match goes on.
            log.warning("action refused (%s: %s); playing the first legal action", reason, rejected.message)
            self.fallback_used.add(pending.state_id)
            self._answer(outbox, pending.state_id, pending.legal_actions[0].index)


class _AioStream:
    """A Play stream on a ``grpc.aio`` channel: reads and writes on the event loop's thread."""

    def __init__(self, channel: grpc.aio.Channel, first: play_pb2.PlayRequest) -> None:
        self._first: Optional[play_pb2.PlayRequest] = first
        self._call = play_pb2_grpc.PlayServiceStub(channel).Play()

    async def read(self) -> Optional[play_pb2.PlayResponse]:
        if self._first is not None:
            first, self._first = self._first, None
            await self.write([first])
        response = await self._call.read()
        return None if response is grpc.aio.EOF else response

    async def write(self, requests: _Requests) -> None:
        for request in requests:
            try:
                await self._call.write(request)
            except asyncio.InvalidStateError:
                return  # the stream is over; read() tells how

    def cancel(self) -> None:
        self._call.cancel()


class _AioChannel:
    """The channel :func:`_play` uses: a ``grpc.aio`` one (the default)."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.channel = channel

    async def ready(self, timeout: float) -> bool:
        if self.channel.get_state(try_to_connect=True) == grpc.ChannelConnectivity.READY:
            return True
        try:
            await asyncio.wait_for(self.channel.channel_ready(), timeout)
        except asyncio.TimeoutError:
            return False
        return True

    def stream(self, first: play_pb2.PlayRequest) -> _AioStream:
        return _AioStream(self.channel, first)

    async def result(self, match_id: str) -> Optional[record_pb2.MatchReport]:
        stub = match_pb2_grpc.MatchServiceStub(self.channel)
        return (await stub.GetResult(match_pb2.GetResultRequest(match_id=match_id), timeout=5)).report


class _SyncStream:
    """A Play stream on a synchronous channel: grpc's threads, the responses read on a worker."""

    def __init__(self, channel: grpc.Channel, first: play_pb2.PlayRequest) -> None:
        self._outbox = _Outbox()
        self._outbox.put(first)
        self._call = play_pb2_grpc.PlayServiceStub(channel).Play(iter(self._outbox))

    async def read(self) -> Optional[play_pb2.PlayResponse]:
        return await asyncio.to_thread(next, self._call, None)

    async def write(self, requests: _Requests) -> None:
        for request in requests:
            self._outbox.put(request)

    def cancel(self) -> None:
        self._outbox.close()
        self._call.cancel()


class _SyncChannel:
    """The channel :func:`_play` uses when :func:`run` is handed a synchronous ``grpc.Channel``."""

    def __init__(self, channel: grpc.Channel) -> None:
        self.channel = channel

    async def ready(self, timeout: float) -> bool:
        try:
            await asyncio.to_thread(grpc.channel_ready_future(self.channel).result, timeout=timeout)
        except grpc.FutureTimeoutError:
            return False
        return True

    def stream(self, first: play_pb2.PlayRequest) -> _SyncStream:
        return _SyncStream(self.channel, first)

    async def result(self, match_id: str) -> Optional[record_pb2.MatchReport]:
        stub = match_pb2_grpc.MatchServiceStub(self.channel)
        request = match_pb2.GetResultRequest(match_id=match_id)
        return (await asyncio.to_thread(stub.GetResult, request, timeout=5)).report


async def _play(
    bot: Bot,
    address: str,
    token: str,
    channel: "Optional[Union[_AioChannel, _SyncChannel]]",
    client_name: Optional[str] = None,
    max_reconnects: int = 10,
    reconnect_delay: float = 0.2,
    connect_timeout: float = 10.0,
    stats: Optional[RunStats] = None,
    batched: bool = True,
    from_start: bool = False,
) -> record_pb2.MatchReport:
    """:func:`run` on the running event loop (a new ``grpc.aio`` channel to ``address`` when
    ``channel`` is None). :func:`maumau_client.hold_lobby` runs its matches with it."""
    stats = stats if stats is not None else RunStats()
    session = _Session(bot, token, client_name or bot.name, stats, batched)
    session.from_start = from_start
    own = channel is None
    ch = (
        channel
        if channel is not None
        else _AioChannel(grpc.aio.insecure_channel(address, options=channel_options(address)))
    )
    failures = 0
    try:
        while True:
            error: Optional[BaseException] = None
            heard = False
            if not await ch.ready(connect_timeout):
                error = TimeoutError(f"not connected within {connect_timeout} s")
            else:
                session.new_stream()
                stats.streams += 1
                stream = ch.stream(session.join_request())
                outbox: _Requests = []
                try:
                    while (response := await stream.read()) is not None:
                        heard = True
                        report = session.handle(response.message, outbox)
                        if report is not None:
                            return report
                        if session.hold_back:
                            await asyncio.sleep(session.hold_back)
                            session.hold_back = 0.0
                        if outbox:
                            await stream.write(outbox)
                            outbox.clear()
                    error = None  # the server closed the stream without MatchFinished
                except grpc.RpcError as e:
                    reason = _reason(e)
                    code = e.code()
                    if reason in _FATAL_REASONS or code not in _RETRYABLE_CODES:
                        raise MatchError(f"{code.name}: {e.details()}", reason, code) from e
                    error = e
                finally:
                    stream.cancel()
            failures = 0 if heard else failures + 1
            if failures > max_reconnects:
                if session.match_id:
                    report = await _result_after_end(ch, session.match_id)
                    if report is not None:
                        return report
                raise MatchError(f"no answer from {address} after {failures} attempts: {_why(error)}")
            log.warning("stream dropped (%s); resuming after event %d", _why(error), session.last_event)
            bot.on_disconnect(error, failures)
            await asyncio.sleep(min(reconnect_delay * (2 ** max(failures - 1, 0)), 5.0))
    finally:
        if own:
            await ch.channel.close()


def _why(error: Optional[BaseException]) -> str:
    """Why a stream dropped, in a line: a gRPC error's code and details (its ``str`` spans lines)."""
    if error is None:
        return "the server closed the stream"
    if isinstance(error, grpc.RpcError):
        return f"{error.code().name}: {error.details()}"
    return str(error)


async def _result_after_end(ch: "Union[_AioChannel, _SyncChannel]", match_id: str) -> Optional[record_pb2.MatchReport]:
    """The report of a match that ended while this client was away, if the server has it."""
    try:
        return await ch.result(match_id)
    except grpc.RpcError:
        return None
