//! Rate limits: a token bucket per seat, per stream, per connection and per network address
//! (the calls a client may make, the resumes a seat may ask for, the ladder's registrations).

use tokio::time::Instant;

/// A token bucket: `rate` calls per second, bursts of twice that (or, [`RateLimit::per_minute`],
/// `n` calls per minute, `n` at once).
pub struct RateLimit {
    rate: f64,
    burst: f64,
    tokens: f64,
    at: Instant,
}

impl RateLimit {
    /// `rate` calls per second, bursts of twice that.
    pub fn new(rate: u32) -> RateLimit {
        RateLimit::with(rate as f64, 2.0 * rate as f64)
    }

    /// `n` calls per minute, at most `n` at once.
    pub fn per_minute(n: u32) -> RateLimit {
        RateLimit::with(n as f64 / 60.0, n as f64)
    }

    fn with(rate: f64, burst: f64) -> RateLimit {
        RateLimit {
            rate,
            burst,
            tokens: burst,
            at: Instant::now(),
        }
    }

    /// Whether the bucket has refilled to its burst (it then holds no memory of past calls).
    pub fn is_full(&self) -> bool {
        let dt = Instant::now().duration_since(self.at).as_secs_f64();
        self.tokens + dt * self.rate >= self.burst
    }

    /// Takes one call from the bucket; false when it is empty (the call is refused).
    pub fn allow(&mut self) -> bool {
        let now = Instant::now();
        let dt = now.duration_since(self.at).as_secs_f64();
        self.at = now;
        self.tokens = (self.tokens + dt * self.rate).min(self.burst);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}
