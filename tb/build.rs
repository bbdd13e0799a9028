//! The build's identity for recordings (`model::record::build_id`): a
//! CRC-64 of every source a replay depends on, the RTL, its simulation
//! shims and bindings, and the testbench with its twins. A recording made
//! by a build of other sources is refused by `vl15 check-rtl`.

use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dirs = ["rtl", "sim", "bindings/src", "tb/src"];
    let mut all = Vec::new();
    for d in dirs {
        let p = root.join(d);
        println!("cargo:rerun-if-changed={}", p.display());
        files(&p, &mut all);
    }
    for f in ["bindings/build.rs", "Cargo.lock"] {
        let p = root.join(f);
        println!("cargo:rerun-if-changed={}", p.display());
        all.push(p);
    }
    all.sort();
    // CRC-64/XZ, bitwise: a build script has no dependencies to lean on.
    let mut crc: u64 = !0;
    let mut feed = |b: &[u8]| {
        for &x in b {
            crc ^= u64::from(x);
            for _ in 0..8 {
                crc = if crc & 1 != 0 {
                    (crc >> 1) ^ 0xC96C_5795_D787_0F42
                } else {
                    crc >> 1
                };
            }
        }
    };
    for p in &all {
        let rel = p.strip_prefix(&root).unwrap_or(p);
        feed(rel.to_string_lossy().as_bytes());
        if let Ok(b) = std::fs::read(p) {
            feed(&b);
        }
    }
    println!("cargo:rustc-env=VL15_SOURCE_CRC={:016x}", !crc);
}
