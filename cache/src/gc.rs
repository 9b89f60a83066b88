//! gc planning: which records and blobs to remove to fit a size limit.
//!
//! A pure function of the store's listing, so both stores share it and it
//! can be tested without files.

use std::collections::HashMap;

use crate::{BlobInfo, Digest, StepRecord};

/// What a gc removes, and the sizes before and after.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Plan {
    pub(crate) steps: Vec<Digest>,
    pub(crate) blobs: Vec<Digest>,
    pub(crate) bytes_before: u64,
    pub(crate) bytes_after: u64,
}

/// The size a record counts for: its key and its encoding.
pub(crate) fn record_size(record: &StepRecord) -> u64 {
    (Digest::LEN + record.encode().len()) as u64
}

/// Plans a gc of `steps` and `blobs` down to `max_bytes`: see `Store::gc`.
pub(crate) fn plan(steps: &[(Digest, StepRecord)], blobs: &[BlobInfo], max_bytes: u64) -> Plan {
    let sizes: HashMap<Digest, u64> = blobs.iter().map(|b| (b.digest, b.size)).collect();
    let mut refs: HashMap<Digest, u64> = HashMap::new();
    for (_, record) in steps {
        for output in &record.outputs {
            *refs.entry(output.digest).or_default() += 1;
        }
    }
    let mut plan = Plan::default();
    let mut total: u64 = sizes.values().sum();
    total += steps.iter().map(|(_, r)| record_size(r)).sum::<u64>();
    plan.bytes_before = total;

    let mut live = Vec::new();
    for (key, record) in steps {
        if record.outputs.iter().all(|o| sizes.contains_key(&o.digest)) {
            live.push((key, record));
        } else {
            drop_record(&mut plan, &mut total, &mut refs, key, record);
        }
    }
    for blob in blobs {
        if refs.get(&blob.digest).copied().unwrap_or(0) == 0 {
            plan.blobs.push(blob.digest);
            total -= blob.size;
        }
    }
    // Oldest use first; ties by creation, then key, so the order is total.
    live.sort_by_key(|(key, r)| (r.last_used_ms, r.created_ms, **key));
    for (key, record) in live {
        if total <= max_bytes {
            break;
        }
        drop_record(&mut plan, &mut total, &mut refs, key, record);
        for output in &record.outputs {
            if refs.get(&output.digest) == Some(&0) {
                refs.remove(&output.digest);
                plan.blobs.push(output.digest);
                total -= sizes[&output.digest];
            }
        }
    }
    plan.bytes_after = total;
    plan
}

fn drop_record(
    plan: &mut Plan,
    total: &mut u64,
    refs: &mut HashMap<Digest, u64>,
    key: &Digest,
    record: &StepRecord,
) {
    plan.steps.push(*key);
    *total -= record_size(record);
    for output in &record.outputs {
        if let Some(n) = refs.get_mut(&output.digest) {
            *n -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Output;

    fn blob(content: &[u8]) -> BlobInfo {
        BlobInfo {
            digest: Digest::of(content),
            size: content.len() as u64,
        }
    }

    fn step(n: u8, used: u64, outputs: &[&BlobInfo]) -> (Digest, StepRecord) {
        let outputs = outputs
            .iter()
            .map(|b| Output {
                name: "out".into(),
                digest: b.digest,
                size: b.size,
            })
            .collect();
        let record = StepRecord {
            kind: crate::RecordKind::new("test", 1),
            outputs,
            meta: Vec::new(),
            created_ms: 0,
            last_used_ms: used,
        };
        (Digest::from_bytes([n; 32]), record)
    }

    #[test]
    fn shared_blob_stays_while_referenced() {
        let shared = blob(&[1; 100]);
        let own = blob(&[2; 100]);
        let old = step(1, 10, &[&shared, &own]);
        let new = step(2, 20, &[&shared]);
        let steps = [old.clone(), new.clone()];
        let blobs = [shared, own];
        let full = plan(&steps, &blobs, u64::MAX);
        assert_eq!(full.steps, vec![]);
        let limit = full.bytes_before - 1;
        let p = plan(&steps, &blobs, limit);
        assert_eq!(p.steps, vec![old.0]);
        assert_eq!(p.blobs, vec![own.digest]);
        assert_eq!(p.bytes_after, 100 + record_size(&new.1));
    }

    #[test]
    fn unreferenced_blobs_and_dangling_records_go_first() {
        let orphan = blob(b"orphan");
        let gone = blob(b"gone");
        let kept = blob(b"kept");
        let dangling = step(1, 99, &[&kept, &gone]);
        let fine = step(2, 1, &[&kept]);
        let p = plan(&[dangling.clone(), fine], &[orphan, kept], u64::MAX);
        assert_eq!(p.steps, vec![dangling.0]);
        assert_eq!(p.blobs, vec![orphan.digest]);
    }

    #[test]
    fn zero_limit_empties_everything() {
        let a = blob(b"a");
        let p = plan(&[step(1, 1, &[&a]), step(2, 2, &[&a])], &[a], 0);
        assert_eq!(p.steps.len(), 2);
        assert_eq!(p.blobs, vec![a.digest]);
        assert_eq!(p.bytes_after, 0);
    }
}
