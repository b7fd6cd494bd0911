//! A connection's task as a place futures run ([`Home`]): hyper's streams of the connection, and
//! the tables that moved onto it ([`Roaming`], asked to move by a [`Mover`]). Also the
//! connection's budgets of unary calls and unknown tokens, which close a flooder.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use super::BoxFuture;
use crate::sync::lock;

/// One connection's task, as a place futures can run: the futures hyper spawns for the
/// connection (its streams), and the tables it hosts ([`Home::adopt`]).
#[derive(Clone, Default)]
pub(crate) struct Home(Arc<HomeInner>);

#[derive(Default)]
struct HomeInner {
    spawned: Mutex<Vec<BoxFuture>>,
    guests: Mutex<Guests>,
    /// Tables hosted or on their way (at most [`MAX_GUESTS`]).
    hosted: AtomicUsize,
    task: Mutex<Option<Waker>>,
    /// The connection's budget of unary calls a seat repeats (SubmitAction); `None` outside the
    /// server's connections.
    calls: Mutex<Option<crate::limit::RateLimit>>,
    /// Refusals the connection may collect before it is closed as a flood: a bucket of half
    /// the call rate, bursts of one second's calls. An honest client that runs into the limit now
    /// and then never empties it; one that keeps calling after RATE_LIMITED does, within a
    /// second or two, and then costs the server one connection set-up per bucket instead of one
    /// request per call.
    strikes: Mutex<Option<crate::limit::RateLimit>>,
    /// Calls with a missing token, or one that is no open match's (each costs a look in the
    /// store of finished matches), the connection may make: 10 a second, 20 at once. An honest
    /// client has its token; one that guesses or floods with a made-up one is closed once it
    /// has spent them.
    unknown_tokens: Mutex<Option<crate::limit::RateLimit>>,
    /// Told when the strikes are spent; the connection's task then closes it.
    flooding: tokio::sync::Notify,
    /// Set with `flooding`: the driver stops reading the connection at once, so a call the
    /// flooder sends after its RATE_LIMITED answer is never read, let alone answered.
    flooded: AtomicBool,
}

/// Calls with a missing token or one that is no open match's one connection may make per second
/// (twice that at once) before it is closed.
const UNKNOWN_TOKENS_PER_SECOND: u32 = 10;

/// Most tables one connection's task hosts. A task runs on one core at a time: a connection that
/// carries many matches (a bot host with hundreds of seats) keeps the rest of its tables on tasks
/// of their own, so that they still spread over every core.
const MAX_GUESTS: usize = 8;

/// Tables handed to a connection's task, not yet taken up by its driver.
#[derive(Default)]
struct Guests {
    arrived: Vec<BoxFuture>,
    /// The connection is gone: it takes no more guests.
    closed: bool,
}

thread_local! {
    /// The connection whose driver is polling on this thread, if any.
    static CURRENT: std::cell::RefCell<Option<Home>> = const { std::cell::RefCell::new(None) };
}

/// Marks a connection as the current one while its driver polls.
pub(super) struct Entered(Option<Home>);

impl Entered {
    pub(super) fn new(home: &Home) -> Entered {
        Entered(CURRENT.with(|c| c.borrow_mut().replace(home.clone())))
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        let previous = self.0.take();
        CURRENT.with(|c| *c.borrow_mut() = previous);
    }
}

impl Home {
    /// The connection whose request is being handled here; `None` outside this module's
    /// connections.
    pub(crate) fn current() -> Option<Home> {
        CURRENT.with(|c| c.borrow().clone())
    }

    /// A connection with a budget of `calls_per_second` unary calls (bursts of twice that).
    pub(super) fn with_calls(calls_per_second: u32) -> Home {
        let home = Home::default();
        *lock(&home.0.calls) = Some(crate::limit::RateLimit::new(calls_per_second));
        *lock(&home.0.strikes) = Some(crate::limit::RateLimit::new(calls_per_second.div_ceil(2)));
        *lock(&home.0.unknown_tokens) =
            Some(crate::limit::RateLimit::new(UNKNOWN_TOKENS_PER_SECOND));
        home
    }

    /// Takes one unary call from the connection's budget; false when it is spent. A refusal
    /// also takes a strike; when the strikes are spent, [`Home::flooding`] completes.
    pub(crate) fn allow_call(&self) -> bool {
        let allowed = lock(&self.0.calls).as_mut().is_none_or(|l| l.allow());
        if !allowed && lock(&self.0.strikes).as_mut().is_some_and(|s| !s.allow()) {
            self.flood();
        }
        allowed
    }

    /// Takes a call with a missing token, or one look in the store of finished matches (for a
    /// token that is no open match's), from the connection's budget; false when it is spent,
    /// and then [`Home::flooding`] completes. Paid before the look, so calls in flight at once
    /// cannot overspend it.
    pub(crate) fn store_look(&self) -> bool {
        let allowed = lock(&self.0.unknown_tokens)
            .as_mut()
            .is_none_or(|s| s.allow());
        if !allowed {
            self.flood();
        }
        allowed
    }

    fn flood(&self) {
        self.0.flooded.store(true, Ordering::SeqCst);
        self.0.flooding.notify_one();
    }

    /// Whether the connection has been found flooding (see [`Home::flooding`]).
    pub(super) fn flooded(&self) -> bool {
        self.0.flooded.load(Ordering::SeqCst)
    }

    /// Completes once the connection has kept calling after its budget was spent, or kept
    /// sending unknown tokens.
    pub(super) async fn flooding(&self) {
        self.0.flooding.notified().await;
    }

    /// Whether `self` and `other` are the same connection.
    pub(crate) fn same(&self, other: &Home) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    fn is_current(&self) -> bool {
        CURRENT.with(|c| c.borrow().as_ref().is_some_and(|h| h.same(self)))
    }

    /// Runs `table` on this connection's task; gives it back when the connection is gone or
    /// hosts [`MAX_GUESTS`] tables already.
    fn adopt(&self, table: Roaming) -> Result<(), Roaming> {
        {
            let mut guests = lock(&self.0.guests);
            if guests.closed || self.0.hosted.load(Ordering::SeqCst) >= MAX_GUESTS {
                return Err(table);
            }
            self.0.hosted.fetch_add(1, Ordering::SeqCst);
            guests.arrived.push(Box::pin(table));
        }
        if let Some(w) = lock(&self.0.task).as_ref() {
            w.wake_by_ref();
        }
        Ok(())
    }
}

/// Where a [`Roaming`] future is asked to run next.
#[derive(Clone, Default)]
pub(crate) struct Mover(Arc<MoverInner>);

#[derive(Default)]
struct MoverInner {
    wanted: Mutex<Option<Home>>,
    /// A request waits in `wanted` (read without the lock after every poll).
    pending: AtomicBool,
}

impl Mover {
    /// Asks for the future to run on `home`'s task from its next poll on (it stays where it is
    /// if that connection is gone or full).
    pub(crate) fn request(&self, home: Home) {
        *lock(&self.0.wanted) = Some(home);
        self.0.pending.store(true, Ordering::SeqCst);
    }

    fn take(&self) -> Option<Home> {
        if !self.0.pending.swap(false, Ordering::SeqCst) {
            return None;
        }
        lock(&self.0.wanted).take()
    }
}

/// A future (a table) that can move to a connection's task: after each poll it looks whether its
/// [`Mover`] asks for a move, and if so hands itself to that connection and ends where it was.
/// When that connection closes, its driver spawns the future as a task of its own again, so
/// nothing is lost; the first poll in a new place registers every waker anew.
pub(crate) struct Roaming {
    fut: Option<BoxFuture>,
    mover: Mover,
}

impl Roaming {
    /// `fut`, movable by `mover`.
    pub(crate) fn new(fut: impl Future<Output = ()> + Send + 'static, mover: Mover) -> Roaming {
        Roaming {
            fut: Some(Box::pin(fut)),
            mover,
        }
    }
}

impl Future for Roaming {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let Some(fut) = self.fut.as_mut() else {
            return Poll::Ready(());
        };
        if fut.as_mut().poll(cx).is_ready() {
            self.fut = None;
            return Poll::Ready(());
        }
        let Some(home) = self.mover.take() else {
            return Poll::Pending;
        };
        if home.is_current() {
            return Poll::Pending;
        }
        let moving = Roaming {
            fut: self.fut.take(),
            mover: self.mover.clone(),
        };
        match home.adopt(moving) {
            Ok(()) => Poll::Ready(()),
            Err(back) => {
                // The connection is gone or full: stay.
                self.fut = back.fut;
                Poll::Pending
            }
        }
    }
}

impl<F> hyper::rt::Executor<F> for Home
where
    F: Future<Output = ()> + Send + 'static,
{
    fn execute(&self, fut: F) {
        lock(&self.0.spawned).push(Box::pin(fut));
        if let Some(w) = lock(&self.0.task).as_ref() {
            w.wake_by_ref();
        }
    }
}

/// What the connection's [`Driver`](super::driver::Driver) takes from its home.
impl Home {
    /// Nothing handed over waits for the driver.
    pub(super) fn idle(&self) -> bool {
        lock(&self.0.spawned).is_empty() && lock(&self.0.guests).arrived.is_empty()
    }

    /// The driver polls with `waker`: handed-over futures wake it.
    pub(super) fn polled_by(&self, waker: &Waker) {
        remember(&self.0.task, waker);
    }

    /// The streams hyper spawned since the driver last looked.
    pub(super) fn take_spawned(&self) -> Vec<BoxFuture> {
        std::mem::take(&mut *lock(&self.0.spawned))
    }

    /// The tables that moved in since the driver last looked.
    pub(super) fn take_arrived(&self) -> Vec<BoxFuture> {
        std::mem::take(&mut lock(&self.0.guests).arrived)
    }

    /// A hosted table ended or moved on.
    pub(super) fn table_left(&self) {
        self.0.hosted.fetch_sub(1, Ordering::SeqCst);
    }

    /// The connection is gone: it takes no more tables; those that arrived unseen are returned.
    pub(super) fn close(&self) -> Vec<BoxFuture> {
        let mut guests = lock(&self.0.guests);
        guests.closed = true;
        std::mem::take(&mut guests.arrived)
    }
}

/// Keeps `waker` in `slot`, unless it holds one that wakes the same task.
pub(super) fn remember(slot: &Mutex<Option<Waker>>, waker: &Waker) {
    let mut slot = lock(slot);
    if !slot.as_ref().is_some_and(|w| w.will_wake(waker)) {
        *slot = Some(waker.clone());
    }
}
