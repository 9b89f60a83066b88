//! YAML → Starlark values, the way the catalog function gets them: kyaml's
//! starlark filter `yaml.Unmarshal`s the ResourceList into Go values
//! (go-yaml v3 rules for an `interface{}`) and converts those to Starlark
//! (`util.Marshal`).
//!
//! - Scalars by their resolved tag: `null` → `None`, bools, ints (`0x1F`,
//!   `0755`, `1_000` included), floats; everything else (strings, custom
//!   tags, timestamps) is a string. go-yaml turns timestamps into a
//!   `time.Time`, which the forked converter does not know; a string is
//!   the useful reading and the one a script can compare.
//! - Mappings → dicts, sequences → lists, aliases → their anchor's value,
//!   `<<` merge keys → the merged mapping's keys the mapping lacks.
//!
//! Go iterates its maps in random order, so dict order is not part of the
//! contract; keeping the document order makes runs reproducible.

use std::collections::HashMap;

use starlark::values::dict::AllocDict;
use starlark::values::list::AllocList;
use starlark::values::{Heap, Value};

use krmgraph_yaml::aliasing::AliasBudget;
use krmgraph_yaml::node::{short_tag, tag};
use krmgraph_yaml::resolve::{resolve_plain, Resolved};
use krmgraph_yaml::{Kind, Node};

/// Converts YAML nodes to Starlark values on one heap.
pub struct ToStarlark<'a, 'v> {
    heap: Heap<'v>,
    anchors: HashMap<&'a str, &'a Node>,
    /// Alias depth, to stop a self-referencing anchor.
    depth: usize,
    /// Stops an alias bomb as go-yaml's `yaml.Unmarshal` does.
    budget: AliasBudget,
}

/// The deepest alias nesting followed before giving up (a self-referencing
/// anchor would recurse forever; go-yaml reports it as an error).
const MAX_ALIAS_DEPTH: usize = 64;

impl<'a, 'v> ToStarlark<'a, 'v> {
    /// A converter allocating on `heap`.
    pub fn new(heap: Heap<'v>) -> Self {
        ToStarlark {
            heap,
            anchors: HashMap::new(),
            depth: 0,
            budget: AliasBudget::default(),
        }
    }

    /// The value of one document or node (anchors are per node tree); the
    /// error when its aliases expand too far
    /// ([`EXCESSIVE_ALIASING`](krmgraph_yaml::aliasing::EXCESSIVE_ALIASING)).
    pub fn value(&mut self, node: &'a Node) -> Result<Value<'v>, &'static str> {
        self.anchors.clear();
        collect_anchors(node, &mut self.anchors);
        self.convert(node)
    }

    fn convert(&mut self, node: &'a Node) -> Result<Value<'v>, &'static str> {
        self.budget.decode()?;
        self.budget.descend()?;
        let value = self.convert_node(node);
        self.budget.ascend();
        value
    }

    fn convert_node(&mut self, node: &'a Node) -> Result<Value<'v>, &'static str> {
        Ok(match node.kind {
            Kind::Document => match node.content.first() {
                Some(root) => self.convert(root)?,
                None => Value::new_none(),
            },
            Kind::Alias => self.alias(node)?,
            Kind::Scalar => self.scalar(node),
            Kind::Sequence => {
                let items = node.content.iter().map(|n| self.convert(n));
                let items = items.collect::<Result<Vec<Value<'v>>, _>>()?;
                self.heap.alloc(AllocList(items))
            }
            Kind::Mapping => {
                let pairs = self.pairs(node)?;
                self.heap.alloc(AllocDict(pairs))
            }
        })
    }

    fn alias(&mut self, node: &'a Node) -> Result<Value<'v>, &'static str> {
        let Some(target) = self.anchors.get(node.value.as_str()).copied() else {
            return Ok(Value::new_none());
        };
        if self.depth >= MAX_ALIAS_DEPTH {
            return Ok(Value::new_none());
        }
        self.depth += 1;
        self.budget.enter();
        let v = self.convert(target);
        self.budget.leave();
        self.depth -= 1;
        v
    }

    /// The key/value pairs of a mapping, merge keys expanded after the
    /// mapping's own keys (go-yaml lets explicit keys win).
    fn pairs(&mut self, node: &'a Node) -> Result<Vec<(Value<'v>, Value<'v>)>, &'static str> {
        let mut pairs = Vec::with_capacity(node.content.len() / 2);
        let mut merges = Vec::new();
        for kv in node.content.chunks_exact(2) {
            if is_merge(&kv[0]) {
                merges.push(&kv[1]);
                continue;
            }
            pairs.push((self.convert(&kv[0])?, self.convert(&kv[1])?));
        }
        for merge in merges {
            self.merge_into(merge, &mut pairs)?;
        }
        Ok(pairs)
    }

    fn merge_into(
        &mut self,
        merge: &'a Node,
        pairs: &mut Vec<(Value<'v>, Value<'v>)>,
    ) -> Result<(), &'static str> {
        self.budget.decode()?;
        if merge.kind != Kind::Alias {
            return self.merge_source_into(merge, pairs);
        }
        let Some(target) = self.anchors.get(merge.value.as_str()).copied() else {
            return Ok(());
        };
        self.budget.enter();
        let merged = self.merge_source_into(target, pairs);
        self.budget.leave();
        merged
    }

    fn merge_source_into(
        &mut self,
        source: &'a Node,
        pairs: &mut Vec<(Value<'v>, Value<'v>)>,
    ) -> Result<(), &'static str> {
        match source.kind {
            Kind::Mapping => {
                for (k, v) in self.pairs(source)? {
                    if !pairs
                        .iter()
                        .any(|(have, _)| have.equals(k).unwrap_or(false))
                    {
                        pairs.push((k, v));
                    }
                }
            }
            Kind::Sequence => {
                for item in &source.content {
                    self.merge_into(item, pairs)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn scalar(&mut self, node: &Node) -> Value<'v> {
        let short = short_tag(&node.tag);
        let resolvable = matches!(
            short.as_ref(),
            "" | "!" | tag::BOOL | tag::INT | tag::FLOAT | tag::NULL
        );
        if !resolvable || node.indicated_string() {
            return self.heap.alloc(node.value.as_str());
        }
        match resolve_plain(&node.value) {
            Resolved::Null => Value::new_none(),
            Resolved::Bool(b) => Value::new_bool(b),
            Resolved::Int(i) if short == tag::FLOAT => self.heap.alloc(i as f64),
            Resolved::Int(i) => self.heap.alloc(i),
            Resolved::Uint(u) => self.heap.alloc(u),
            Resolved::Float(f) => self.heap.alloc(f),
            Resolved::Timestamp | Resolved::Str => self.heap.alloc(node.value.as_str()),
        }
    }
}

/// go-yaml's `isMerge`: a `<<` key, untagged or tagged `!!merge`.
fn is_merge(n: &Node) -> bool {
    n.kind == Kind::Scalar
        && n.value == "<<"
        && (n.tag.is_empty() || n.tag == "!" || short_tag(&n.tag) == tag::MERGE)
}

fn collect_anchors<'a>(node: &'a Node, anchors: &mut HashMap<&'a str, &'a Node>) {
    if !node.anchor().is_empty() {
        anchors.insert(node.anchor().as_str(), node);
    }
    for c in &node.content {
        collect_anchors(c, anchors);
    }
}
