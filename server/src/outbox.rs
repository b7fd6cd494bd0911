//! A connection's outgoing queue: the table puts what a step made for each connection, then
//! wakes them all.
//!
//! A bounded queue of [`Out`] items with one reader (the connection's stream, see `play::Feed`)
//! and few writers (the table, and the connection's own task before it is attached). Unlike a
//! channel that wakes its reader on every send, [`Outbox::put`] hands the reader's waker back:
//! the table wakes the connections after it has queued a step's messages for all of them, so a
//! connection carrying several seats of a match (one HTTP/2 connection, several streams) finds
//! all of them queued when it runs, and writes them at once.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use tonic::Status;

use crate::frames::Frame;
use crate::sync::lock;
use crate::transport::Home;

/// One item of a connection's outgoing queue.
pub(crate) enum Out {
    /// The one message a step of the table made for the connection, encoded (the usual case,
    /// kept apart so that it allocates no list).
    Frame(Frame),
    /// The messages one step of the table made for the connection, in order, encoded.
    Frames(Vec<Frame>),
    /// The error that ends the connection's stream.
    End(Status),
}

struct Queue {
    items: VecDeque<Out>,
    capacity: usize,
    /// Live [`Outbox`] handles; none left ends the stream once it has read everything.
    writers: usize,
    /// The reader went away: nothing more can be delivered.
    reader_gone: bool,
    reader: Option<Waker>,
}

/// The queue and the connection it belongs to.
struct Shared {
    queue: Mutex<Queue>,
    /// The HTTP/2 connection whose stream reads the queue (none when not served by the
    /// server's own connection loop, [`crate::transport`]).
    home: Option<Home>,
}

/// The writing end of a connection's queue.
pub(crate) struct Outbox(Arc<Shared>);

/// The reading end of a connection's queue.
pub(crate) struct Inbox(Arc<Shared>);

/// A new queue of at most `capacity` items, read by a stream of the connection `home`.
pub(crate) fn outbox(capacity: usize, home: Option<Home>) -> (Outbox, Inbox) {
    let q = Arc::new(Shared {
        queue: Mutex::new(Queue {
            items: VecDeque::new(),
            capacity,
            writers: 1,
            reader_gone: false,
            reader: None,
        }),
        home,
    });
    (Outbox(q.clone()), Inbox(q))
}

impl Outbox {
    /// The connection whose stream reads this queue.
    pub(crate) fn home(&self) -> Option<&Home> {
        self.0.home.as_ref()
    }

    /// Queues `out` without waking the reader; returns the waker to wake once the step is done
    /// (`Ok(None)`: the reader is not waiting). Refused when the queue is full or the reader
    /// is gone.
    pub(crate) fn put(&self, out: Out) -> Result<Option<Waker>, Out> {
        let mut q = lock(&self.0.queue);
        if q.reader_gone || q.items.len() >= q.capacity {
            return Err(out);
        }
        q.items.push_back(out);
        Ok(q.reader.take())
    }

    /// Queues `out` and wakes the reader; false when the queue is full or the reader is gone.
    pub(crate) fn send(&self, out: Out) -> bool {
        match self.put(out) {
            Ok(waker) => {
                if let Some(w) = waker {
                    w.wake();
                }
                true
            }
            Err(_) => false,
        }
    }
}

impl Clone for Outbox {
    fn clone(&self) -> Outbox {
        lock(&self.0.queue).writers += 1;
        Outbox(self.0.clone())
    }
}

impl Drop for Outbox {
    fn drop(&mut self) {
        let waker = {
            let mut q = lock(&self.0.queue);
            q.writers -= 1;
            if q.writers > 0 {
                return;
            }
            q.reader.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

impl Inbox {
    /// The next item; `None` once every writer is gone and the queue is empty.
    pub(crate) fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Out>> {
        let mut q = lock(&self.0.queue);
        if let Some(out) = q.items.pop_front() {
            return Poll::Ready(Some(out));
        }
        if q.writers == 0 {
            return Poll::Ready(None);
        }
        if !q.reader.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            q.reader = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}

impl Drop for Inbox {
    fn drop(&mut self) {
        let mut q = lock(&self.0.queue);
        q.reader_gone = true;
        q.items.clear();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    use super::*;

    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn batch(n: usize) -> Out {
        Out::Frames(
            (0..n)
                .map(|_| Frame {
                    response: maumau::encoded::Response::default(),
                    last: false,
                })
                .collect(),
        )
    }

    fn len(out: Poll<Option<Out>>) -> usize {
        match out {
            Poll::Ready(Some(Out::Frames(v))) => v.len(),
            _ => usize::MAX,
        }
    }

    #[test]
    fn the_reader_is_woken_when_the_writer_says_so_and_reads_in_order() {
        let (tx, mut rx) = outbox(2, None);
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        assert!(rx.poll_next(&mut cx).is_pending());
        // `put` hands the waker back instead of waking.
        let w = tx.put(batch(1)).ok().flatten().expect("the reader waits");
        assert_eq!(count.0.load(Ordering::SeqCst), 0);
        assert!(tx.put(batch(2)).ok().expect("room").is_none());
        assert!(tx.put(batch(3)).is_err(), "full");
        w.wake();
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert_eq!(len(rx.poll_next(&mut cx)), 1);
        assert_eq!(len(rx.poll_next(&mut cx)), 2);
        assert!(rx.poll_next(&mut cx).is_pending());
        // The last writer going away ends the stream, and wakes the reader.
        let tx2 = tx.clone();
        drop(tx);
        assert!(rx.poll_next(&mut cx).is_pending());
        assert!(tx2.send(batch(4)));
        assert_eq!(count.0.load(Ordering::SeqCst), 2, "send wakes");
        assert_eq!(len(rx.poll_next(&mut cx)), 4);
        assert!(rx.poll_next(&mut cx).is_pending());
        drop(tx2);
        assert_eq!(
            count.0.load(Ordering::SeqCst),
            3,
            "the last writer's drop wakes"
        );
        assert!(matches!(rx.poll_next(&mut cx), Poll::Ready(None)));
    }

    #[test]
    fn nothing_is_queued_once_the_reader_is_gone() {
        let (tx, rx) = outbox(8, None);
        drop(rx);
        assert!(tx.put(batch(1)).is_err());
        assert!(!tx.send(batch(1)));
    }
}
