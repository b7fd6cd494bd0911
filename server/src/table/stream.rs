//! A connection's outgoing stream: what a Play or Watch call answers with. It yields the
//! messages the table (and the connection itself) queued in the connection's outbox, adds a
//! heartbeat when the stream has been silent, and, for a Watch stream, tells the table when the
//! client goes away.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use maumau::{encoded, pb};
use tokio::sync::mpsc;
use tokio_stream::Stream;
use tonic::Status;

use super::delivery::message;
use super::handle::Handle;
use super::{Command, Role};
use crate::clock::now_ms;
use crate::frames::Frame;
use crate::outbox::{Inbox, Out};

/// A connection's outgoing queue as seen from the stream: it yields the messages the table (and
/// the connection itself) queued, one by one, and ends after MatchFinished, after an error, or
/// when the table lets go of the queue. A stream silent for the heartbeat interval yields a
/// `Heartbeat`.
///
/// Its items are encoded already ([`encoded::Response`]: the same bytes for a Play stream and a
/// Watch stream).
pub(crate) struct Outgoing {
    rx: Inbox,
    batch: std::vec::IntoIter<Frame>,
    done: bool,
    /// For a Watch stream: the table to tell when the client goes away.
    detach: Option<(Arc<Handle>, Role, u64)>,
    heartbeat: Option<Heartbeat>,
    /// Counts the stream in `maumau_streams_open` while it lives.
    _open: crate::metrics::Open,
}

impl Outgoing {
    pub(crate) fn new(rx: Inbox, heartbeat: Option<Duration>) -> Outgoing {
        Outgoing {
            rx,
            batch: Vec::new().into_iter(),
            done: false,
            detach: None,
            heartbeat: heartbeat.map(Heartbeat::new),
            _open: crate::metrics::Open::stream(),
        }
    }

    /// For a Watch stream, which is the only sign that its client went away: dropping it
    /// detaches the connection `conn` from the table of `entry`.
    pub(crate) fn detach_when_dropped(
        mut self,
        entry: Arc<Handle>,
        role: Role,
        conn: u64,
    ) -> Outgoing {
        self.detach = Some((entry, role, conn));
        self
    }
}

/// A stream's heartbeat: a `Heartbeat` message once the stream has been silent for at least
/// `interval` (and at most one and a half times it).
///
/// Nothing is done per message sent but setting `active`, and nothing when the stream runs dry
/// but a look at the timer: the timer ticks every half interval, and a tick that finds the
/// stream was not active since the tick before it (so silent for a whole interval) sends the
/// heartbeat. No clock is read and no timer moved on the path of a decision.
struct Heartbeat {
    /// Half the interval.
    tick: Duration,
    timer: Pin<Box<tokio::time::Sleep>>,
    /// Whether the timer was polled since it was last set, so it will wake the stream.
    armed: bool,
    /// Whether the stream sent something since the last tick.
    active: bool,
    /// Ticks since the stream last sent something.
    quiet_ticks: u8,
}

impl Heartbeat {
    fn new(interval: Duration) -> Heartbeat {
        let tick = interval / 2;
        Heartbeat {
            tick,
            timer: Box::pin(tokio::time::sleep(tick)),
            armed: false,
            active: false,
            quiet_ticks: 0,
        }
    }

    /// Called when the stream has nothing to send: the heartbeat's frame if the stream has been
    /// silent for the interval, else `None` (the timer will wake the stream).
    fn poll_due(&mut self, cx: &mut Context<'_>) -> Option<encoded::Response> {
        loop {
            if !self.armed {
                if std::future::Future::poll(self.timer.as_mut(), cx).is_pending() {
                    self.armed = true;
                    return None;
                }
            } else if !self.timer.is_elapsed() {
                return None;
            }
            let next = self.timer.deadline() + self.tick;
            self.timer.as_mut().reset(next);
            self.armed = false;
            if std::mem::take(&mut self.active) {
                self.quiet_ticks = 0;
                continue;
            }
            self.quiet_ticks += 1;
            if self.quiet_ticks >= 2 {
                self.quiet_ticks = 0;
                let beat = pb::Heartbeat {
                    server_time_unix_ms: now_ms(),
                };
                return Some(encoded::Response::new(&message(
                    pb::server_message::Kind::Heartbeat(beat),
                )));
            }
        }
    }
}

impl Stream for Outgoing {
    type Item = Result<encoded::Response, Status>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if this.done {
                return Poll::Ready(None);
            }
            if let Some(f) = this.batch.next() {
                this.done = f.last;
                if let Some(h) = &mut this.heartbeat {
                    h.active = true;
                }
                return Poll::Ready(Some(Ok(f.response)));
            }
            let next = match this.rx.poll_next(cx) {
                Poll::Ready(next) => next,
                Poll::Pending => {
                    let beat = this.heartbeat.as_mut().and_then(|h| h.poll_due(cx));
                    return match beat {
                        Some(frame) => Poll::Ready(Some(Ok(frame))),
                        None => Poll::Pending,
                    };
                }
            };
            match next {
                Some(Out::Frame(f)) => {
                    this.done = f.last;
                    if let Some(h) = &mut this.heartbeat {
                        h.active = true;
                    }
                    return Poll::Ready(Some(Ok(f.response)));
                }
                Some(Out::Frames(batch)) => this.batch = batch.into_iter(),
                Some(Out::End(status)) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(status)));
                }
                None => {
                    this.done = true;
                    return Poll::Ready(None);
                }
            }
        }
    }
}

impl Drop for Outgoing {
    fn drop(&mut self) {
        let Some((entry, role, conn)) = self.detach.take() else {
            return;
        };
        let Some(tx) = entry.sender() else { return };
        if let Err(mpsc::error::TrySendError::Full(cmd)) =
            tx.try_send(Command::Detach { role, conn })
            && let Ok(rt) = tokio::runtime::Handle::try_current()
        {
            rt.spawn(async move {
                let _ = tx.send(cmd).await;
            });
        }
    }
}
