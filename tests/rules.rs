//! End to end: rulings a bot author can see through the public API (docs/RULES.md §4).
//!
//! - A seat's own open window (RULES.md §1.9): a seat whose own 8 gave it the next turn while its
//!   omission window was still open, and which then plays its last card without MAU_MAU, is
//!   pending-out, not the winner; the other seat takes the next turn and may challenge.
//! - Round results reveal each seat's final hand, and the scored points match those hands.
//! - Listed actions say which offence they open (romanian-32's jack finish after only MAU).
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs)]

mod common;
#[path = "common/feed.rs"]
mod feed;

use common::{Seat, TestServer, play_to_end, relaxed_clock};
use feed::flatten;
use maumau::pb;
use pb::event::Kind as Ev;
use pb::server_message::Kind;

/// The position of issue 15: S0 holds only the 8♠ with its own omission window open, and the
/// up-card is the 8♦.
const OWN_WINDOW: &str =
    "mm1 classic seats=2 turn=0 hands=8S/QC,6C,9C stock=6S,6H,AC,2D discard=8D offence=0:omission";

/// Creates a match at `position` with every seat played remotely; their joined streams.
async fn seats_at(server: &TestServer, position: &str) -> Vec<Seat> {
    let created = server
        .matches()
        .await
        .create_match(pb::CreateMatchRequest {
            start: Some(pb::create_match_request::Start::Position(position.into())),
            time_control: Some(relaxed_clock()),
            ..Default::default()
        })
        .await
        .expect("create the match")
        .into_inner();
    let mut client = server.play_client().await;
    let mut seats = Vec::new();
    for t in &created.seat_tokens {
        seats.push(Seat::join(&mut client, &t.token, None).await);
    }
    seats
}

/// Plays `action` for `seat` at its next required prompt, where it must be listed.
async fn play_listed(seat: &mut Seat, action: pb::Action) {
    let (_, prompt) = until_prompt(seat).await;
    let listed = prompt
        .legal_actions
        .iter()
        .find(|a| a.action.as_ref() == Some(&action))
        .unwrap_or_else(|| panic!("{action:?} is listed: {:?}", prompt.legal_actions));
    seat.send_action(prompt.state_id, listed.index, 1).await;
}

/// Reads `seat`'s stream until a required prompt, returning the events seen on the way.
async fn until_prompt(seat: &mut Seat) -> (Vec<Ev>, pb::DecisionPrompt) {
    let mut events = Vec::new();
    loop {
        let m = seat.next().await.expect("the stream goes on");
        for m in flatten(&m) {
            match m.kind {
                Some(Kind::Event(e)) => events.extend(e.event.and_then(|e| e.kind)),
                Some(Kind::Prompt(p)) if p.required => return (events, p),
                _ => {}
            }
        }
    }
}

fn card(rank: pb::Rank, suit: pb::Suit) -> pb::Card {
    pb::Card {
        rank: rank as i32,
        suit: suit as i32,
    }
}

fn play(card: pb::Card, call: pb::Call) -> pb::Action {
    pb::Action {
        kind: Some(pb::action::Kind::Play(pb::PlayAction {
            card: Some(card),
            call: call as i32,
            ..Default::default()
        })),
    }
}

async fn submit(seat: &Seat, state_id: u64, action: pb::Action, request_id: u64) {
    seat.tx
        .send(pb::PlayRequest {
            kind: Some(pb::play_request::Kind::Action(pb::ActionSubmission {
                state_id,
                choice: Some(pb::action_submission::Choice::Action(action)),
                request_id,
            })),
        })
        .await
        .expect("send the action");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_last_card_played_in_the_seats_own_window_is_the_next_offence() {
    let server = TestServer::start().await;
    let [mut s0, mut s1]: [Seat; 2] = seats_at(&server, OWN_WINDOW).await.try_into().ok().unwrap();
    let (_, prompt) = until_prompt(&mut s0).await;
    let eight = card(pb::Rank::Eight, pb::Suit::Spades);
    let listed = prompt
        .legal_actions
        .iter()
        .find(|a| a.action == Some(play(eight, pb::Call::MauMau)))
        .expect("the 8♠ is listed with its due call, MAU_MAU");
    assert_eq!(listed.opens_offence(), pb::OffenceKind::Unspecified);
    // S0 plays its last card with no call.
    submit(&s0, prompt.state_id, play(eight, pb::Call::Unspecified), 1).await;

    let (events, prompt) = until_prompt(&mut s1).await;
    let after_play: Vec<&Ev> = events
        .iter()
        .skip_while(|e| !matches!(e, Ev::CardPlayed(_)))
        .collect();
    assert!(
        !after_play.iter().any(|e| matches!(e, Ev::RoundEnded(_))),
        "S0 must not win at once: {after_play:?}"
    );
    let names: Vec<&str> = after_play
        .iter()
        .filter_map(|e| match e {
            Ev::OffenceExpired(o) if o.seat == 0 => Some("expired S0"),
            Ev::OffenceOpened(o) if o.seat == 0 => Some("opened S0"),
            Ev::PendingOut(p) if p.seat == 0 => Some("pending-out S0"),
            Ev::TurnStarted(t) if t.seat == 1 => Some("turn S1"),
            _ => None,
        })
        .collect();
    assert_eq!(
        names,
        ["expired S0", "opened S0", "pending-out S0", "turn S1"],
        "{after_play:?}"
    );
    let challenge = prompt
        .legal_actions
        .iter()
        .find(|a| {
            matches!(
                &a.action,
                Some(pb::Action {
                    kind: Some(pb::action::Kind::Challenge(_))
                })
            )
        })
        .expect("S1 may challenge");
    s1.send_action(prompt.state_id, challenge.index, 1).await;
    let (events, _) = until_prompt(&mut s1).await;
    assert!(
        events.iter().any(|e| matches!(e, Ev::Challenged(_))),
        "the challenge is accepted: {events:?}"
    );
    assert!(
        !events.iter().any(|e| matches!(e, Ev::RoundEnded(_))),
        "S0 draws its penalty and plays on: {events:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_results_reveal_the_final_hands_they_score() {
    let server = TestServer::start().await;
    let [s0, s1]: [Seat; 2] = seats_at(&server, OWN_WINDOW).await.try_into().ok().unwrap();
    let watcher = tokio::spawn(play_to_end(s1, 3));
    // S0 is recorded as it plays, so its log holds every round's result.
    let mut s0 = s0;
    let mut rng = 11u64;
    let mut request = 0;
    let mut results = Vec::new();
    'outer: loop {
        let m = s0.next().await.expect("the stream goes on");
        for m in flatten(&m) {
            match m.kind {
                Some(Kind::Event(e)) => {
                    if let Some(Ev::RoundEnded(r)) = e.event.and_then(|e| e.kind) {
                        results.push(r);
                    }
                }
                Some(Kind::Prompt(p)) if p.required => {
                    rng = rng
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let pick = &p.legal_actions[(rng >> 33) as usize % p.legal_actions.len()];
                    request += 1;
                    s0.send_action(p.state_id, pick.index, request).await;
                }
                Some(Kind::Finished(_)) => break 'outer,
                _ => {}
            }
        }
    }
    watcher.await.expect("the other seat's task");
    assert!(!results.is_empty(), "at least one round was scored");
    for r in &results {
        assert_eq!(r.final_hands.len(), 2, "one hand per seat: {r:?}");
        // Classic (RULES.md §2.1): the winner scores nothing, each other seat its cards' values.
        for (seat, hand) in r.final_hands.iter().enumerate() {
            let value: i32 = hand.cards.iter().map(classic_value).sum();
            assert_eq!(
                r.points[seat], value,
                "seat {seat}'s points match its hand: {r:?}"
            );
        }
    }
}

/// A card's value in classic scoring (RULES.md §2.1).
fn classic_value(c: &pb::Card) -> i32 {
    match c.rank() {
        pb::Rank::Jack | pb::Rank::Queen | pb::Rank::King | pb::Rank::Ace => 10,
        face => face as i32,
    }
}

/// RULES.md §2.4 (RO-07): after only MAU, a finish on a J is legal and listed, but it opens a
/// jack-finish offence, and the listing says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_romanian_jack_finish_after_only_mau_is_marked_as_an_offence() {
    let server = TestServer::start().await;
    let position = "mm1 romanian-32 seats=3 turn=0 \
         hands=QC,JD/AC,8H,10S,7D/10C,KD,7S,8S discard=QH stock=9D,10H";
    let [mut s0, mut s1, mut s2]: [Seat; 3] =
        seats_at(&server, position).await.try_into().ok().unwrap();
    use pb::{Call, Rank, Suit};
    play_listed(&mut s0, play(card(Rank::Queen, Suit::Clubs), Call::Mau)).await;
    play_listed(
        &mut s1,
        play(card(Rank::Ace, Suit::Clubs), Call::Unspecified),
    )
    .await;
    play_listed(
        &mut s2,
        play(card(Rank::Ten, Suit::Clubs), Call::Unspecified),
    )
    .await;
    let (_, prompt) = until_prompt(&mut s0).await;
    let jack = card(Rank::Jack, Suit::Diamonds);
    for a in &prompt.legal_actions {
        let is_jack = matches!(&a.action, Some(pb::Action { kind: Some(pb::action::Kind::Play(p)) }) if p.card == Some(jack));
        let expected = if is_jack {
            pb::OffenceKind::JackFinish
        } else {
            pb::OffenceKind::Unspecified
        };
        assert_eq!(a.opens_offence(), expected, "{a:?}");
    }
    assert!(
        prompt
            .legal_actions
            .iter()
            .any(|a| a.opens_offence() == pb::OffenceKind::JackFinish),
        "the J finish is listed: {:?}",
        prompt.legal_actions
    );
}
