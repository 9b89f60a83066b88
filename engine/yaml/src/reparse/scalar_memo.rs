//! [`super::scalar`]'s recent answers, per thread.
//!
//! Restyling reads every scalar of a resource, and the built-ins' boundary
//! restyles each resource up to three times per step; most scalars are
//! keys and values that repeat from resource to resource (`apiVersion`,
//! `metadata`, `name`, label values), and the analysis reads every
//! character of each. A scalar's answer depends only on its value, tag,
//! style and place, so a small direct-mapped table keyed by all four
//! answers the repeats; a collision just replaces the slot.

use std::cell::RefCell;

use super::Place;
use crate::node::Style;

/// The table's size (a power of two).
const SLOTS: usize = 4096;

/// Longer values are not kept: their analysis is rarely repeated, and a
/// slot's copy would cost as much.
const MAX_LEN: usize = 64;

/// What [`super::scalar`] answers.
pub type Answer = Option<(Style, &'static str)>;

struct Slot {
    value: Box<str>,
    tag: Box<str>,
    style: Style,
    place: Place,
    answer: Answer,
}

thread_local! {
    // Filled on first use: a `const` initializer keeps each access to a
    // pointer, without a check that it was initialized.
    static TABLE: RefCell<Vec<Option<Slot>>> = const { RefCell::new(Vec::new()) };
}

/// The answer for a scalar with this `value`, `tag`, `style` and `place`:
/// from the table, or from `compute` (then kept).
pub fn answer(
    value: &str,
    tag: &str,
    style: Style,
    place: Place,
    compute: impl FnOnce() -> Answer,
) -> Answer {
    if value.len() > MAX_LEN {
        return compute();
    }
    let index = slot(value, tag, style, place);
    let known = TABLE.with(|t| {
        t.borrow().get(index)?.as_ref().and_then(|s| {
            (s.style == style && s.place == place && *s.value == *value && *s.tag == *tag)
                .then_some(s.answer)
        })
    });
    if let Some(answer) = known {
        return answer;
    }
    let answer = compute();
    TABLE.with(|t| {
        let mut table = t.borrow_mut();
        if table.is_empty() {
            table.resize_with(SLOTS, || None);
        }
        table[index] = Some(Slot {
            value: value.into(),
            tag: tag.into(),
            style,
            place,
            answer,
        });
    });
    answer
}

/// The slot of a key: an FxHash-style mix of its parts.
fn slot(value: &str, tag: &str, style: Style, place: Place) -> usize {
    const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    let mut h: u64 = u64::from(style.0) << 8 | place as u64;
    for part in [value.as_bytes(), tag.as_bytes()] {
        let mut chunks = part.chunks_exact(8);
        for chunk in &mut chunks {
            let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
            h = (h.rotate_left(5) ^ word).wrapping_mul(K);
        }
        // The last bytes as one word (most values and tags are shorter
        // than eight bytes), with the length.
        let word = tail_word(chunks.remainder()) ^ (part.len() as u64).rotate_right(8);
        h = (h.rotate_left(5) ^ word).wrapping_mul(K);
    }
    (h >> 32) as usize & (SLOTS - 1)
}

/// Up to seven bytes read as one word, without a loop or a copy (wyhash's
/// way: two overlapping halves, or three bytes).
fn tail_word(rest: &[u8]) -> u64 {
    let n = rest.len();
    let u32_at = |i: usize| {
        u64::from(u32::from_le_bytes([
            rest[i],
            rest[i + 1],
            rest[i + 2],
            rest[i + 3],
        ]))
    };
    match n {
        0 => 0,
        1..=3 => u64::from(rest[0]) | u64::from(rest[n / 2]) << 8 | u64::from(rest[n - 1]) << 16,
        _ => u32_at(0) | u32_at(n - 4) << 32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_kept_by_every_part_of_the_key() {
        let calls = std::cell::Cell::new(0);
        let ask = |value: &str, tag: &str, style: Style, place: Place, answer: Answer| {
            super::answer(value, tag, style, place, || {
                calls.set(calls.get() + 1);
                answer
            })
        };
        let plain = Some((Style::NONE, "!!str"));
        assert_eq!(
            ask("memo-test", "!!str", Style::NONE, Place::BlockValue, plain),
            plain
        );
        assert_eq!(
            ask("memo-test", "!!str", Style::NONE, Place::BlockValue, None),
            plain
        );
        assert_eq!(calls.get(), 1, "the second is answered from the table");
        // Any other part makes another key.
        assert_eq!(
            ask("memo-test", "!!str", Style::NONE, Place::BlockKey, None),
            None
        );
        assert_eq!(
            ask("memo-test", "!!int", Style::NONE, Place::BlockValue, None),
            None
        );
        assert_eq!(
            ask(
                "memo-test",
                "!!str",
                Style::DOUBLE_QUOTED,
                Place::BlockValue,
                None
            ),
            None
        );
        assert_eq!(
            ask("memo-tesT", "!!str", Style::NONE, Place::BlockValue, None),
            None
        );
        assert_eq!(calls.get(), 5);
        // Long values are always computed.
        let long = "x".repeat(MAX_LEN + 1);
        ask(&long, "!!str", Style::NONE, Place::BlockValue, plain);
        ask(&long, "!!str", Style::NONE, Place::BlockValue, plain);
        assert_eq!(calls.get(), 7);
    }
}
