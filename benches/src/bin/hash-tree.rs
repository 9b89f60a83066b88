//! `hash-tree DIR`: reads every file under DIR (skipping `.git`) and
//! blake3-hashes it; prints the file count, bytes and the time taken. The
//! floor a no-op render with the render cache is compared with
//! (`benches/cache-bench.sh`).

use std::time::Instant;

fn main() {
    let dir = std::env::args().nth(1).expect("usage: hash-tree DIR");
    let start = Instant::now();
    let (mut files, mut bytes) = (0u64, 0u64);
    let mut hasher = blake3::Hasher::new();
    let mut stack = vec![std::path::PathBuf::from(dir)];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("readable directory") {
            let entry = entry.expect("readable entry");
            let path = entry.path();
            let kind = entry.file_type().expect("file type");
            if kind.is_dir() {
                if entry.file_name() != ".git" {
                    stack.push(path);
                }
            } else if kind.is_file() {
                let content = std::fs::read(&path).expect("readable file");
                hasher.update(&content);
                files += 1;
                bytes += content.len() as u64;
            }
        }
    }
    let digest = hasher.finalize();
    println!(
        "{files} files, {bytes} bytes, read and hashed in {:.4} s ({})",
        start.elapsed().as_secs_f64(),
        &digest.to_hex()[..12]
    );
}
