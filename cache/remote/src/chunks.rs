//! Content-defined chunks: how a large blob is split so that the remote
//! stores each distinct run of bytes once.
//!
//! A render's records repeat each other's bytes: a subtree's resources are
//! its children's resources and its own, so every resource appears once
//! per ancestor level, and a render's files repeat what its subtrees hold
//! in another form. A record's blob stored whole would put each resource
//! on the server once per level. Cut at points chosen by the bytes
//! themselves (a gear hash over the last 64 bytes, as FastCDC does), the
//! same run of resources gives the same chunks wherever it sits, so only
//! the chunks at the edges of each run are new. The engine's encodings
//! are a node after another, each node's bytes its own, which is what
//! makes the runs line up.
//!
//! A chunked blob goes up as its chunks plus a [`Manifest`] naming them
//! in order; the action result names the manifest.

use crate::mapping::DigestFn;
use crate::proto;

/// No cut before this many bytes of a chunk.
const MIN: usize = 512;
/// A cut where the hash has zeros under these 11 bits: chunks of about
/// `MIN + 2 KiB`, small enough that the chunks cut at the edges of a run
/// (the bytes stored again per level) stay few. The bits are spread over
/// the word (FastCDC's mask) so that each cut depends on the last ~48
/// bytes; the top bits alone are far from uniform over the engine's
/// binary encodings (320 KiB of them never cut).
const MASK: u64 = 0x0000_d900_0353_0000;
/// A cut at this many bytes whatever the hash says.
const MAX: usize = 8 << 10;

/// The gear table: 256 fixed pseudo-random words (splitmix64 from 0).
/// It is part of the chunk layout: changing it changes every chunk.
const GEAR: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut state = 0u64;
    let mut i = 0;
    while i < 256 {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        table[i] = z ^ (z >> 31);
        i += 1;
    }
    table
};

/// The length of the chunk `data` starts with.
fn next_cut(data: &[u8]) -> usize {
    let end = data.len().min(MAX);
    if end <= MIN {
        return end;
    }
    let mut hash = 0u64;
    for (i, &byte) in data.iter().enumerate().take(end).skip(MIN) {
        hash = (hash << 1).wrapping_add(GEAR[byte as usize]);
        if hash & MASK == 0 {
            return i + 1;
        }
    }
    end
}

/// `data` cut into chunks, in order; one chunk when it is small.
pub fn split(data: &[u8]) -> Vec<&[u8]> {
    let mut chunks = Vec::with_capacity(data.len() / (MIN << 2) + 1);
    let mut rest = data;
    while !rest.is_empty() {
        let (chunk, tail) = rest.split_at(next_cut(rest));
        chunks.push(chunk);
        rest = tail;
    }
    chunks
}

/// The first bytes of a manifest; a change of layout changes them.
const MANIFEST_MAGIC: &[u8] = b"krmgraph chunks 1\n";

/// A manifest names each chunk of a blob, in order, by its digest: after
/// [`MANIFEST_MAGIC`], per chunk its 32-byte hash then its size (u32
/// little-endian). Both digest functions krmgraph uses give 32 bytes.
/// Binary, not protobuf: hex hashes would double a manifest, and the
/// manifests of a render are several percent of what it stores.
fn encode(chunks: &[proto::Digest]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(MANIFEST_MAGIC.len() + 36 * chunks.len());
    out.extend_from_slice(MANIFEST_MAGIC);
    for d in chunks {
        out.extend(unhex(&d.hash)?);
        out.extend(u32::try_from(d.size_bytes).ok()?.to_le_bytes());
    }
    Some(out)
}

/// The chunk digests a manifest names; `None` when `bytes` is not one.
pub fn decode(bytes: &[u8]) -> Option<Vec<proto::Digest>> {
    let body = bytes.strip_prefix(MANIFEST_MAGIC)?;
    if body.len() % 36 != 0 {
        return None;
    }
    let chunks = body.chunks_exact(36).map(|entry| {
        let (hash, size) = entry.split_at(32);
        proto::Digest {
            hash: hash.iter().map(|b| format!("{b:02x}")).collect(),
            size_bytes: i64::from(u32::from_le_bytes(size.try_into().unwrap_or_default())),
        }
    });
    Some(chunks.collect())
}

/// The 32 bytes of a 64-digit hex hash.
fn unhex(hex: &str) -> Option<Vec<u8>> {
    if hex.len() != 64 {
        return None;
    }
    (0..32)
        .map(|i| u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok())
        .collect()
}

/// A blob cut into chunks.
pub type Chunked<'a> = (Vec<u8>, Vec<(proto::Digest, &'a [u8])>);

/// `data` as chunks: the manifest's bytes, and each chunk with its digest
/// (`None` for a digest function of other than 32 bytes).
pub fn manifest(f: DigestFn, data: &[u8]) -> Option<Chunked<'_>> {
    let chunks: Vec<(proto::Digest, &[u8])> =
        split(data).into_iter().map(|c| (f.digest(c), c)).collect();
    let digests: Vec<proto::Digest> = chunks.iter().map(|(d, _)| d.clone()).collect();
    Some((encode(&digests)?, chunks))
}

/// Whether `data` is worth chunking: more than one chunk comes of it.
pub fn worth_it(data: &[u8]) -> bool {
    data.len() > MIN * 2
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic bytes that look like a run of resources.
    fn resources(seed: u64, n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for i in 0..n {
            out.extend(
                format!("kind: ConfigMap\nmetadata:\n  name: cm-{seed}-{i}\ndata:\n  k: v{i}\n")
                    .as_bytes(),
            );
        }
        out
    }

    #[test]
    fn chunks_cover_the_bytes_within_their_bounds() {
        let data = resources(1, 2000);
        let chunks = split(&data);
        assert_eq!(chunks.concat(), data);
        assert!(chunks.len() > 10);
        let last = chunks.len() - 1;
        let at_max = chunks.iter().filter(|c| c.len() == MAX).count();
        assert!(
            at_max * 10 < chunks.len(),
            "{at_max} of {} cut at MAX",
            chunks.len()
        );
        for (i, c) in chunks.iter().enumerate() {
            assert!(c.len() <= MAX);
            assert!(i == last || c.len() > MIN, "{}", c.len());
        }
        assert!(split(b"").is_empty());
    }

    #[test]
    fn a_run_embedded_elsewhere_gives_mostly_the_same_chunks() {
        let child = resources(2, 4000);
        let parent = [
            b"header".as_slice(),
            &resources(3, 300),
            &child,
            &resources(4, 300),
        ]
        .concat();
        let mine: std::collections::HashSet<&[u8]> = split(&child).into_iter().collect();
        let shared: usize = split(&parent)
            .into_iter()
            .filter(|c| mine.contains(c))
            .map(<[u8]>::len)
            .sum();
        assert!(shared * 10 > child.len() * 9, "{shared} of {}", child.len());
    }

    #[test]
    fn manifests_read_back_and_garbage_is_none() {
        for f in [DigestFn::Sha256, DigestFn::Blake3] {
            let data = resources(5, 500);
            let (manifest, chunks) = manifest(f, &data).unwrap();
            let named: Vec<proto::Digest> = chunks.into_iter().map(|(d, _)| d).collect();
            assert_eq!(decode(&manifest), Some(named));
        }
        assert_eq!(decode(b"krmgraph chunks 1\nshort"), None);
        assert_eq!(decode(b"not a manifest"), None);
    }

    #[test]
    fn the_gear_table_is_fixed() {
        // Changing it changes every chunk on every server.
        assert_eq!(GEAR[0], 0xe220_a839_7b1d_cdaf);
    }
}
