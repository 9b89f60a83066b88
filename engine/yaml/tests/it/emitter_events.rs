//! The emitter driven by events directly: the paths go-yaml's Node encoder
//! never takes (%YAML/%TAG directives, explicit `---`/`...`, open-ended
//! documents, canonical mode, a finite line width and its folding, ASCII
//! output, CRLF breaks) and every emitter error. The expected text
//! `tests/data/yaml_emit/emitter_scenarios.txt` is go-yaml's output for the
//! same scenarios (`tools/yamlv3-oracle/emitter_scenarios.go.txt`).

use krmgraph_yaml::emitter::{Emitter, LineBreak};
use krmgraph_yaml::event::{
    collection_style, scalar_style, Event, EventType, TagDirective, VersionDirective,
};

fn ev(typ: EventType) -> Event {
    Event {
        typ,
        ..Event::default()
    }
}

fn ss() -> Event {
    ev(EventType::StreamStart)
}

fn se() -> Event {
    ev(EventType::StreamEnd)
}

fn ds(implicit: bool, vd: Option<(i8, i8)>, td: &[(&str, &str)]) -> Event {
    Event {
        implicit,
        version_directive: vd.map(|(major, minor)| VersionDirective { major, minor }),
        tag_directives: td
            .iter()
            .map(|(h, p)| TagDirective {
                handle: h.as_bytes().to_vec(),
                prefix: p.as_bytes().to_vec(),
            })
            .collect(),
        ..ev(EventType::DocumentStart)
    }
}

fn de(implicit: bool) -> Event {
    Event {
        implicit,
        ..ev(EventType::DocumentEnd)
    }
}

fn sc(anchor: &str, tag: &str, value: &str, pi: bool, qi: bool, style: u8) -> Event {
    Event {
        anchor: anchor.as_bytes().to_vec(),
        tag: tag.as_bytes().to_vec(),
        value: value.as_bytes().to_vec(),
        implicit: pi,
        quoted_implicit: qi,
        style,
        ..ev(EventType::Scalar)
    }
}

fn ms(tag: &str, implicit: bool, style: u8) -> Event {
    Event {
        tag: tag.as_bytes().to_vec(),
        implicit,
        style,
        ..ev(EventType::MappingStart)
    }
}

fn me() -> Event {
    ev(EventType::MappingEnd)
}

fn qs(tag: &str, implicit: bool, style: u8) -> Event {
    Event {
        tag: tag.as_bytes().to_vec(),
        implicit,
        style,
        ..ev(EventType::SequenceStart)
    }
}

fn qe() -> Event {
    ev(EventType::SequenceEnd)
}

fn run(out: &mut String, name: &str, setup: impl FnOnce(&mut Emitter), events: Vec<Event>) {
    let mut em = Emitter::new();
    setup(&mut em);
    out.push_str(&format!("=== {name}\n"));
    for e in events {
        if let Err(err) = em.emit(e) {
            out.push_str(&String::from_utf8_lossy(em.output()));
            out.push_str(&format!("ERROR: {}\n", err.problem));
            return;
        }
    }
    out.push_str(&String::from_utf8_lossy(em.output()));
}

#[test]
fn event_scenarios_match_go_yaml() {
    use collection_style::{BLOCK, FLOW};
    use scalar_style::SINGLE_QUOTED as S;
    use scalar_style::{DOUBLE_QUOTED as D, FOLDED as F, LITERAL as L, PLAIN as P};
    let none = |_: &mut Emitter| {};
    let vd = Some((1, 1));
    let td = [("!e!", "tag:example.com,2000:")];
    let x = || sc("", "", "x", true, true, P);
    let mut out = String::new();
    let o = &mut out;

    run(
        o,
        "directives",
        none,
        vec![
            ss(),
            ds(false, vd, &td),
            ms("tag:example.com,2000:foo", false, BLOCK),
            sc("", "tag:example.com,2000:bar", "a", false, false, P),
            sc("", "", "b", true, true, P),
            sc("", "tag:other:x", "c", false, false, P),
            sc("", "!local", "d", false, false, D),
            me(),
            de(false),
            se(),
        ],
    );
    run(
        o,
        "explicit_docs",
        none,
        vec![
            ss(),
            ds(false, None, &[]),
            x(),
            de(false),
            ds(true, None, &[]),
            sc("", "", "y", true, true, P),
            de(true),
            se(),
        ],
    );
    run(
        o,
        "open_ended",
        none,
        vec![
            ss(),
            ds(true, None, &[]),
            sc("", "", "plain", true, true, P),
            de(true),
            ds(true, vd, &[]),
            sc("", "", "z", true, true, P),
            de(true),
            se(),
        ],
    );
    run(
        o,
        "keep_open_ended",
        none,
        vec![
            ss(),
            ds(true, None, &[]),
            sc("", "", "a\n\n", true, true, L),
            de(true),
            se(),
        ],
    );
    run(
        o,
        "canonical",
        |e| e.set_canonical(true),
        vec![
            ss(),
            ds(true, None, &[]),
            ms("tag:yaml.org,2002:map", true, BLOCK),
            sc("", "tag:yaml.org,2002:str", "k", true, true, P),
            qs("tag:yaml.org,2002:seq", true, BLOCK),
            sc("", "tag:yaml.org,2002:int", "1", true, true, P),
            sc("", "tag:yaml.org,2002:str", "two", true, true, P),
            qe(),
            me(),
            de(true),
            se(),
        ],
    );
    let long = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu";
    let p = |v: &str| sc("", "", v, true, true, P);
    run(
        o,
        "width",
        |e| e.set_width(20),
        vec![
            ss(),
            ds(true, None, &[]),
            ms("", true, BLOCK),
            p("p"),
            p(long),
            p("s"),
            sc("", "", long, true, true, S),
            p("d"),
            sc("", "", &format!("{long}  two  spaces"), true, true, D),
            p("f"),
            sc("", "", &format!("{long}\n{long}\n"), true, true, F),
            p("q"),
            qs("", true, FLOW),
            p("one"),
            p("two"),
            p("three"),
            p("four"),
            p("five"),
            p("six"),
            qe(),
            me(),
            de(true),
            se(),
        ],
    );
    run(
        o,
        "ascii",
        none,
        vec![
            ss(),
            ds(true, None, &[]),
            qs("", true, BLOCK),
            p("grüße ✓ 😀"),
            sc("", "", "grüße", true, true, D),
            qe(),
            de(true),
            se(),
        ],
    );
    run(
        o,
        "crln",
        |e| {
            e.set_break(LineBreak::CrLn);
            e.set_unicode(true);
        },
        vec![
            ss(),
            ds(true, None, &[]),
            ms("", true, BLOCK),
            p("a"),
            sc("", "", "x\ny\n", true, true, L),
            me(),
            de(true),
            se(),
        ],
    );
    run(
        o,
        "err_no_stream_start",
        none,
        vec![ds(true, None, &[]), x()],
    );
    run(o, "err_no_doc", none, vec![ss(), x()]);
    run(
        o,
        "err_no_doc_end",
        none,
        vec![ss(), ds(true, None, &[]), x(), se()],
    );
    run(o, "err_after_end", none, vec![ss(), se(), ss()]);
    run(
        o,
        "err_no_tag_no_implicit",
        none,
        vec![ss(), ds(true, None, &[]), sc("", "", "x", false, false, P)],
    );
    run(
        o,
        "err_version",
        none,
        vec![ss(), ds(true, Some((1, 2)), &[]), x()],
    );
    run(
        o,
        "err_handle_empty",
        none,
        vec![ss(), ds(true, None, &[("", "p")]), x()],
    );
    run(
        o,
        "err_handle_start",
        none,
        vec![ss(), ds(true, None, &[("e!", "p")]), x()],
    );
    run(
        o,
        "err_handle_end",
        none,
        vec![ss(), ds(true, None, &[("!e", "p")]), x()],
    );
    run(
        o,
        "err_handle_alpha",
        none,
        vec![ss(), ds(true, None, &[("!e.x!", "p")]), x()],
    );
    run(
        o,
        "err_prefix_empty",
        none,
        vec![ss(), ds(true, None, &[("!e!", "")]), x()],
    );
    run(
        o,
        "err_duplicate",
        none,
        vec![ss(), ds(true, None, &[("!e!", "p"), ("!e!", "q")]), x()],
    );
    run(
        o,
        "err_anchor_empty_alias",
        none,
        vec![ss(), ds(true, None, &[]), ev(EventType::Alias)],
    );
    run(
        o,
        "err_tag_empty_ok",
        none,
        vec![ss(), ds(true, None, &[]), x(), de(true), se()],
    );
    run(
        o,
        "nonplain_notag",
        none,
        vec![
            ss(),
            ds(true, None, &[]),
            qs("", true, BLOCK),
            sc("", "", "x", true, false, D),
            sc("", "", "y", false, true, P),
            sc("", "tag:yaml.org,2002:str", "z", false, true, S),
            qe(),
            de(true),
            se(),
        ],
    );

    let want = include_str!("../data/yaml_emit/emitter_scenarios.txt");
    if out != want {
        for (g, w) in out.lines().zip(want.lines()) {
            assert_eq!(g, w, "first differing line");
        }
        assert_eq!(out, want);
    }
}

#[test]
fn errors_stick() {
    let mut em = Emitter::new();
    let err = em
        .emit(ds(true, None, &[]))
        .and_then(|_| em.emit(sc("", "", "x", true, true, scalar_style::PLAIN)));
    assert_eq!(err.unwrap_err().problem, "expected STREAM-START");
    assert_eq!(
        em.emit(ss()).unwrap_err().to_string(),
        "yaml: expected STREAM-START"
    );
}

#[test]
fn emitter_never_panics_on_odd_events() {
    // Events go-yaml's encoder never produces: unknown scalar style, a
    // stray continuation byte, a lone NUL, a value that is only a BOM.
    for value in [
        &b"\x80abc"[..],
        b"\0",
        b"\xEF\xBB\xBF",
        b"a\xE2\x80",
        b"\xF0",
    ] {
        for style in [0u8, 2, 4, 8, 16, 32, 3, 64] {
            let mut em = Emitter::new();
            let mut events = vec![
                ss(),
                ds(true, None, &[]),
                ms("", true, collection_style::BLOCK),
            ];
            for _ in 0..2 {
                let mut e = sc("", "", "", true, true, style);
                e.value = value.to_vec();
                events.push(e);
            }
            events.extend([me(), de(true), se()]);
            for e in events {
                if em.emit(e).is_err() {
                    break;
                }
            }
        }
    }
    // Random bytes (valid UTF-8 or not) in every style, with a finite width
    // so the folding branches run too.
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    const BYTES: &[u8] = b" \n\t\r#:-'\"a\x80\xC2\x85\xE2\x80\xA8\xEF\xBB\xBF\xF0\x9F\x98\x80\0";
    for round in 0..3000 {
        let len = (next() % 12) as usize;
        let value: Vec<u8> = (0..len)
            .map(|_| BYTES[(next() % BYTES.len() as u64) as usize])
            .collect();
        let style = [0u8, 2, 4, 8, 16, 32][(next() % 6) as usize];
        let mut em = Emitter::new();
        em.set_width(if round % 2 == 0 { 5 } else { -1 });
        em.set_unicode(round % 3 == 0);
        let mut key = sc("", "", "", true, true, style);
        key.value = value.clone();
        let mut val = sc("", "", "", true, true, style);
        val.value = value;
        for e in [
            ss(),
            ds(true, None, &[]),
            ms("", true, collection_style::BLOCK),
            key,
            val,
            me(),
            de(true),
            se(),
        ] {
            if em.emit(e).is_err() {
                break;
            }
        }
    }
}
