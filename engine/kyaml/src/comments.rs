//! kyaml's `comments.CopyComments`: after a function ran, fill the
//! comments the function dropped from the input resource with the same id.
//!
//! Every node the walker pairs up (fields by name, list items by position
//! when their scalar values are equal, and items of merge-keyed lists by
//! key) gets the input's head, line and foot comment wherever its own is
//! empty. Pairing a `from` that is a document reads the document node's
//! comments. Every folded (`>`) scalar the walk reaches on the output side
//! is switched to double-quoted style (kyaml's workaround for kpt#766).

use super::walk::{Dest, Visitor, Walker};
use super::Result;
use krmgraph_yaml::{Node, Style};

/// `CopyComments(from, to)`: copies comments of `from` into `to` where `to`
/// has none. `from` is not modified.
pub fn copy_comments(from: &Node, to: &mut Node) -> Result<()> {
    copy_field_comments(Some(from), Some(to));
    Walker::new(&Copier, true).walk(Some(Dest::Shared(from)), Some(to), None)?;
    Ok(())
}

/// kyaml's `copier` visitor: the destination is the input's copy, the
/// origin the function's output.
struct Copier;

impl Visitor for Copier {
    fn visit_map(&self, dest: Option<&Node>, origin: Option<&mut Node>) -> Result<()> {
        copy_field_comments(dest, origin);
        Ok(())
    }

    fn visit_scalar(&self, dest: Option<&Node>, mut origin: Option<&mut Node>) -> Result<()> {
        if let Some(to) = origin.as_deref_mut() {
            if to.style == Style::FOLDED {
                to.style = Style::DOUBLE_QUOTED;
            }
        }
        copy_field_comments(dest, origin);
        Ok(())
    }

    fn visit_list(&self, dest: Option<&Node>, mut origin: Option<&mut Node>) -> Result<()> {
        copy_field_comments(dest, origin.as_deref_mut());
        let (Some(dest), Some(origin)) = (dest, origin) else {
            return Ok(());
        };
        let dest_items = &super::rnode::y_node(dest).content;
        let origin_items = &mut super::rnode::y_node_mut(origin).content;
        for (d, o) in dest_items.iter().zip(origin_items.iter_mut()) {
            if d.value == o.value {
                copy_comments(d, o)?;
            }
        }
        Ok(())
    }
}

/// `copyFieldComments`: fills `to`'s empty line, head and foot comments.
fn copy_field_comments(from: Option<&Node>, to: Option<&mut Node>) {
    let (Some(from), Some(to)) = (from, to) else {
        return;
    };
    if !from.has_extras() {
        // No comment to copy (the walk reaches every node of most items).
        return;
    }
    if to.line_comment().is_empty() && !from.line_comment().is_empty() {
        to.set_line_comment(from.line_comment().clone());
    }
    if to.head_comment().is_empty() && !from.head_comment().is_empty() {
        to.set_head_comment(from.head_comment().clone());
    }
    if to.foot_comment().is_empty() && !from.foot_comment().is_empty() {
        to.set_foot_comment(from.foot_comment().clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rnode::tests::{emit, parse};
    use crate::rnode::y_node;

    /// (from, to, to after `copy_comments`).
    const CASES: &[(&str, &str, &str)] = &[
        (
            "# head\na: 1 # one\nb:\n  c: x # cx\n# foot\n",
            "b:\n  c: y\na: 1\n",
            "b:\n  c: y # cx\n# foot\n\n# head\na: 1 # one\n",
        ),
        ("a: 1 # old\n", "a: 2 # new\n", "a: 2 # new\n"),
        (
            "l:\n- x # x\n- y # y\n- {k: v} # map\n",
            "l:\n- x\n- z\n- {k: w}\n",
            "l:\n- x # x\n- z\n- {k: w} # map\n",
        ),
        (
            "a: >\n  folded\nb: 1\nl:\n- >\n  item\n",
            "a: >\n  folded\nb: >\n  two\nc: >\n  new\nl:\n- >\n  other\n",
            "a: \"folded\\n\"\nb: \"two\\n\"\nc: \"new\\n\"\nl:\n- >\n  other\n\n",
        ),
        (
            "a: ~ # null\nb: {x: 1} # map\n",
            "a: ~\nb: {x: 1}\n",
            "a: ~ # null\nb: {x: 1} # map\n",
        ),
        ("a:\n  b: 1 # b\n", "x:\n  b: 2\n", "x:\n  b: 2\n"),
    ];

    #[test]
    fn copies_like_kyaml() {
        for (from, to, want) in CASES {
            let from = parse(from);
            let mut to = y_node(&parse(to)).clone();
            copy_comments(&from, &mut to).unwrap();
            assert_eq!(emit(&to), *want, "from {from:?}");
        }
    }

    #[test]
    fn document_comments_go_to_the_root() {
        let from = parse("# doc head\n\napiVersion: v1\nkind: A\n");
        let mut to = y_node(&parse("kind: A\napiVersion: v1\n")).clone();
        copy_comments(&from, &mut to).unwrap();
        assert_eq!(to.head_comment(), "# doc head");
    }

    #[test]
    fn merge_keyed_lists_are_also_paired_by_key() {
        let deployment = "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - name: a # a\n";
        let custom = deployment.replace("apps/v1", "example.com/v1");
        let output = "spec:\n  template:\n    spec:\n      containers:\n      - name: new\n      - name: a\n";
        let copy = |from: &str| {
            let mut to = y_node(&parse(output)).clone();
            copy_comments(&parse(from), &mut to).unwrap();
            emit(&to)
        };
        assert!(copy(deployment).contains("- name: new # a\n      - name: a # a\n"));
        assert!(copy(&custom).contains("- name: new # a\n      - name: a\n"));
    }

    #[test]
    fn a_changed_kind_fails_like_kpt() {
        let mut to = y_node(&parse("data: x\n")).clone();
        let err = copy_comments(&parse("data:\n  k: v\n"), &mut to).unwrap_err();
        assert_eq!(
            err.to_string(),
            "wrong node kind: expected MappingNode but got ScalarNode: node contents:\nx\n"
        );
    }

    /// kyaml's `CopyComments` as it was ported first: the whole input
    /// copied and edited by the walk, and every list item paired by value
    /// copied again. The borrowed walk must give the same result.
    fn copy_comments_on_a_copy(from: &Node, to: &mut Node) -> Result<()> {
        let mut from_copy = from.clone();
        copy_field_comments(Some(&from_copy), Some(to));
        Walker::new(&CopierOnCopies, true).walk(
            Some(Dest::Owned(&mut from_copy)),
            Some(to),
            None,
        )?;
        Ok(())
    }

    struct CopierOnCopies;

    impl Visitor for CopierOnCopies {
        fn visit_map(&self, dest: Option<&Node>, origin: Option<&mut Node>) -> Result<()> {
            Copier.visit_map(dest, origin)
        }

        fn visit_scalar(&self, dest: Option<&Node>, origin: Option<&mut Node>) -> Result<()> {
            Copier.visit_scalar(dest, origin)
        }

        fn visit_list(&self, dest: Option<&Node>, mut origin: Option<&mut Node>) -> Result<()> {
            copy_field_comments(dest, origin.as_deref_mut());
            let (Some(dest), Some(origin)) = (dest, origin) else {
                return Ok(());
            };
            let origin_items = &mut crate::rnode::y_node_mut(origin).content;
            for (d, o) in y_node(dest).content.iter().zip(origin_items.iter_mut()) {
                if d.value == o.value {
                    copy_comments_on_a_copy(d, o)?;
                }
            }
            Ok(())
        }
    }

    /// A Deployment whose merge-keyed lists (containers by name, ports by
    /// port and protocol, env by name) hold the values `picks` chooses:
    /// duplicates, missing and null keys, empty and null items, comments.
    fn deployment(picks: &[u8]) -> String {
        let mut picks = picks.iter().copied().cycle();
        let mut pick = |n: u8| picks.next().unwrap_or(0) % n;
        let comment = |p: u8, text: &str| match p {
            0 => format!(" # {text}"),
            _ => String::new(),
        };
        let mut y = String::from("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n");
        for c in 0..pick(4) {
            match pick(8) {
                0 => y.push_str("      - null\n"),
                1 => y.push_str("      - {}\n"),
                _ => {
                    let name = ["a", "b", "a", "~", ""][pick(5) as usize];
                    let name_line = match name {
                        "" => "      - image: x\n".to_string(),
                        n => format!("      - name: {n}{}\n", comment(pick(3), &format!("c{c}"))),
                    };
                    y.push_str(&name_line);
                    y.push_str(&format!(
                        "        image: img{}{}\n",
                        pick(2),
                        comment(pick(3), "img")
                    ));
                    if pick(2) == 0 {
                        y.push_str("        ports:\n");
                        for _ in 0..pick(4) {
                            let port = ["80", "443", "80"][pick(3) as usize];
                            y.push_str(&format!(
                                "        - containerPort: {port}{}\n",
                                comment(pick(3), "p")
                            ));
                            match pick(3) {
                                0 => y.push_str("          protocol: TCP\n"),
                                1 => y.push_str("          protocol: UDP\n"),
                                _ => {}
                            }
                        }
                    }
                    if pick(2) == 0 {
                        y.push_str("        env:\n");
                        for _ in 0..pick(3) {
                            let name = ["X", "Y", "X"][pick(3) as usize];
                            y.push_str(&format!(
                                "        - name: {name}\n          value: v{}{}\n",
                                pick(3),
                                comment(pick(2), "e")
                            ));
                        }
                    }
                    if pick(3) == 0 {
                        y.push_str("        args: [a, b] # args\n        dropped: null\n");
                    }
                }
            }
        }
        y
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(2000))]
        #[test]
        fn the_borrowed_walk_copies_what_kyamls_copy_walk_copies(
            from_picks in proptest::collection::vec(proptest::num::u8::ANY, 1..40),
            to_picks in proptest::collection::vec(proptest::num::u8::ANY, 1..40),
            same in proptest::bool::ANY,
        ) {
            let from = parse(&deployment(&from_picks));
            // Half the cases give the function's output the input's shape
            // (its comments dropped), so most items pair up.
            let to_text = if same { deployment(&from_picks) } else { deployment(&to_picks) };
            let mut to = parse(&to_text.lines().map(|l| l.split(" # ").next().unwrap_or(l)).collect::<Vec<_>>().join("\n"));
            let mut want = to.clone();
            let got = copy_comments(&from, &mut to).map_err(|e| e.to_string());
            let expected = copy_comments_on_a_copy(&from, &mut want).map_err(|e| e.to_string());
            proptest::prop_assert_eq!(got, expected);
            proptest::prop_assert_eq!(emit(&to), emit(&want));
        }
    }
}
