//! Kubernetes label selectors (`k8s.io/apimachinery/pkg/labels.Parse`), as
//! kustomize matches `labelSelector` and `annotationSelector` against a
//! resource's labels and annotations: comma-separated requirements
//! `key`, `!key`, `key=v`, `key==v`, `key!=v`, `key in (a,b)`,
//! `key notin (a,b)`, `key>n`, `key<n`. An empty selector matches
//! everything.

use std::collections::BTreeMap;

#[derive(Debug, PartialEq)]
enum Op {
    Exists,
    NotExists,
    Equals,
    NotEquals,
    In,
    NotIn,
    Greater,
    Less,
}

#[derive(Debug)]
struct Requirement {
    key: String,
    op: Op,
    values: Vec<String>,
}

impl Requirement {
    fn matches(&self, set: &BTreeMap<String, String>) -> bool {
        let value = set.get(&self.key);
        match self.op {
            Op::Exists => value.is_some(),
            Op::NotExists => value.is_none(),
            Op::Equals | Op::In => value.is_some_and(|v| self.values.contains(v)),
            Op::NotEquals | Op::NotIn => value.is_none_or(|v| !self.values.contains(v)),
            Op::Greater | Op::Less => {
                let (Some(v), Some(bound)) = (
                    value.and_then(|v| v.parse::<i64>().ok()),
                    self.values.first().and_then(|b| b.parse::<i64>().ok()),
                ) else {
                    return false;
                };
                if self.op == Op::Greater {
                    v > bound
                } else {
                    v < bound
                }
            }
        }
    }
}

/// Splits at commas outside parentheses.
fn split_requirements(selector: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in selector.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&selector[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&selector[start..]);
    out
}

fn parse_requirement(text: &str) -> Result<Requirement, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("unable to parse requirement: found '', expected: identifier".into());
    }
    if let Some(key) = t.strip_prefix('!') {
        return Ok(Requirement {
            key: key.trim().to_string(),
            op: Op::NotExists,
            values: Vec::new(),
        });
    }
    for (token, op) in [
        ("!=", Op::NotEquals),
        ("==", Op::Equals),
        ("=", Op::Equals),
        (">", Op::Greater),
        ("<", Op::Less),
    ] {
        if let Some((key, value)) = t.split_once(token) {
            if !key.trim().contains(char::is_whitespace) {
                return Ok(Requirement {
                    key: key.trim().to_string(),
                    op,
                    values: vec![value.trim().to_string()],
                });
            }
        }
    }
    let words: Vec<&str> = t.splitn(2, char::is_whitespace).collect();
    if words.len() == 2 {
        let rest = words[1].trim_start();
        for (token, op) in [("notin", Op::NotIn), ("in", Op::In)] {
            if let Some(set) = rest.strip_prefix(token) {
                let set = set.trim();
                let Some(inner) = set.strip_prefix('(').and_then(|s| s.strip_suffix(')')) else {
                    return Err(format!(
                        "unable to parse requirement: found '{set}', expected: '('"
                    ));
                };
                return Ok(Requirement {
                    key: words[0].to_string(),
                    op,
                    values: inner.split(',').map(|v| v.trim().to_string()).collect(),
                });
            }
        }
        return Err(format!(
            "unable to parse requirement: found '{rest}', expected: in, notin, =, ==, !=, gt, lt"
        ));
    }
    Ok(Requirement {
        key: t.to_string(),
        op: Op::Exists,
        values: Vec::new(),
    })
}

/// Whether `selector` selects `set`.
pub fn matches(selector: &str, set: &BTreeMap<String, String>) -> Result<bool, String> {
    if selector.trim().is_empty() {
        return Ok(true);
    }
    for r in split_requirements(selector) {
        if !parse_requirement(r)?.matches(set) {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selects() {
        let set: BTreeMap<String, String> = [
            ("app".to_string(), "web".to_string()),
            ("tier".to_string(), "3".to_string()),
        ]
        .into();
        for (selector, want) in [
            ("", true),
            ("app", true),
            ("!app", false),
            ("!x", true),
            ("app=web", true),
            ("app==web", true),
            ("app!=web", false),
            ("x!=web", true),
            ("app in (web, db)", true),
            ("app notin (web,db)", false),
            ("app=web,tier=3", true),
            ("app=web,tier=4", false),
            ("tier>2", true),
            ("tier<2", false),
        ] {
            assert_eq!(matches(selector, &set).unwrap(), want, "{selector}");
        }
    }
}
