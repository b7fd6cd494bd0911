//! Who plays: built-in bots, described by a short spec.
//!
//! | spec | bot |
//! |---|---|
//! | `random` | a uniformly random legal action |
//! | `heuristic` | the heuristic bot |
//! | `heuristic~0.2` | the heuristic bot that plays a random legal action with probability 0.2 |
//! | `search` | the search bot at its default budget |
//! | `search:100` | the search bot with 100 samples per decision |
//!
//! A spec may carry a display name: `name=spec` (`strong=search:800`).

use std::fmt;

use maumau_bot_sdk::Bot;
use maumau_bot_sdk::bots::{BotKind, SearchBot, SplitMix};
use maumau_bot_sdk::engine::{Action, Observation};

/// One participant of a tournament.
#[derive(Clone, Debug, PartialEq)]
pub struct Entrant {
    /// Unique display name.
    pub name: String,
    /// The bot.
    pub kind: BotKind,
    /// Probability of playing a random legal action instead (0 = never).
    pub noise: f64,
    /// Search samples per decision (search only).
    pub iterations: Option<u32>,
}

impl Entrant {
    /// Parses `[name=]kind[~noise][:iterations]`.
    pub fn parse(spec: &str) -> Result<Entrant, String> {
        let (name, rest) = match spec.split_once('=') {
            Some((n, r)) if !n.is_empty() => (Some(n.to_string()), r),
            _ => (None, spec),
        };
        let (rest, iterations) = match rest.split_once(':') {
            Some((r, n)) => {
                let n: u32 = n.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                    format!("`{spec}`: the number after `:` is the search budget (samples per decision, > 0)")
                })?;
                (r, Some(n))
            }
            None => (rest, None),
        };
        let (kind, noise) = match rest.split_once('~') {
            Some((k, p)) => {
                let p: f64 = p
                    .parse()
                    .ok()
                    .filter(|p: &f64| (0.0..=1.0).contains(p))
                    .ok_or_else(|| {
                        format!("`{spec}`: the number after `~` is a probability from 0 to 1")
                    })?;
                (k, p)
            }
            None => (rest, 0.0),
        };
        let kind: BotKind = kind.parse().map_err(|e: String| format!("`{spec}`: {e}"))?;
        if iterations.is_some() && kind != BotKind::Search {
            return Err(format!(
                "`{spec}`: only the search bot takes a budget (`search:N`)"
            ));
        }
        Ok(Entrant {
            name: name.unwrap_or_else(|| spec.to_string()),
            kind,
            noise,
            iterations,
        })
    }

    /// Parses a comma-separated list and makes the names unique (`heuristic`, `heuristic#2`).
    pub fn parse_list(specs: &str) -> Result<Vec<Entrant>, String> {
        let mut out: Vec<Entrant> = Vec::new();
        for spec in specs.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let mut e = Entrant::parse(spec)?;
            let base = e.name.clone();
            let mut k = 2;
            while out.iter().any(|o| o.name == e.name) {
                e.name = format!("{base}#{k}");
                k += 1;
            }
            out.push(e);
        }
        if out.len() < 2 {
            return Err("a tournament needs at least two entrants".into());
        }
        Ok(out)
    }

    /// A fresh bot for one game.
    pub fn bot(&self, seed: u64) -> Box<dyn Bot> {
        let inner: Box<dyn Bot> = match (self.kind, self.iterations) {
            (BotKind::Search, Some(n)) => Box::new(SearchBot::with_iterations(seed, n)),
            (kind, _) => kind.build(seed),
        };
        if self.noise > 0.0 {
            Box::new(Noisy {
                inner,
                noise: self.noise,
                rng: SplitMix::new(seed ^ 0x004E_015E),
            })
        } else {
            inner
        }
    }
}

impl fmt::Display for Entrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// Plays a random legal action with probability `noise`, else asks the inner bot.
struct Noisy {
    inner: Box<dyn Bot>,
    noise: f64,
    rng: SplitMix,
}

impl Bot for Noisy {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn decide(&mut self, obs: &Observation) -> Action {
        let draw = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        if draw < self.noise {
            obs.legal[self.rng.below(obs.legal.len())]
        } else {
            self.inner.decide(obs)
        }
    }

    fn react(&mut self, obs: &Observation) -> Option<Action> {
        self.inner.react(obs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_with_clear_errors() {
        let e = Entrant::parse("strong=search:800").unwrap();
        assert_eq!(
            (e.name.as_str(), e.kind, e.iterations),
            ("strong", BotKind::Search, Some(800))
        );
        let e = Entrant::parse("heuristic~0.4").unwrap();
        assert_eq!((e.kind, e.noise), (BotKind::Heuristic, 0.4));
        assert!(
            Entrant::parse("alphazero")
                .unwrap_err()
                .contains("unknown bot `alphazero`")
        );
        assert!(
            Entrant::parse("heuristic:5")
                .unwrap_err()
                .contains("only the search bot")
        );
        assert!(
            Entrant::parse("random~2")
                .unwrap_err()
                .contains("probability")
        );
        let list = Entrant::parse_list("heuristic,heuristic,random").unwrap();
        assert_eq!(list[1].name, "heuristic#2");
        assert!(Entrant::parse_list("random").is_err());
    }
}
