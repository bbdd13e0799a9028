//! `--record`, `--check-rtl` and `vl15 check-rtl`: a twin run of a small
//! fabric replayed device by device through the RTL with no mismatch; the
//! same report whatever the workers and the shards; a changed byte of a
//! recorded packet caught and named by device, port and cycle; a damaged
//! recording refused with exit 2.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use vl15::model::record::{DeviceEntry, Manifest, Op, OpReader, DATA, MANIFEST};

mod common;

fn vl15() -> Command {
    Command::new(env!("CARGO_BIN_EXE_vl15"))
}

fn run(mut c: Command) -> Output {
    let o = c.output().expect("running vl15");
    eprintln!(
        "{:?}: {}\n{}{}",
        c.get_args().collect::<Vec<_>>(),
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The built-in SM's bring-up of `topo` with every device a twin,
/// recorded into `dir`.
fn record(topo: &str, dir: &Path) {
    let mut c = vl15();
    c.args(["sim", "--fidelity", "twin", "--threads", "1", "--topology"])
        .arg(common::topo(topo))
        .arg("--record")
        .arg(dir);
    let o = run(c);
    assert!(o.status.success());
    assert!(
        stderr(&o).contains("twin(s) recorded into"),
        "{}",
        stderr(&o)
    );
}

fn check(dir: &Path, args: &[&str]) -> Output {
    let mut c = vl15();
    c.arg("check-rtl").arg(dir).args(args);
    run(c)
}

/// The lines of a report that do not depend on how it ran.
fn content(out: &str) -> String {
    out.lines()
        .filter(|l| !l.starts_with("wall "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn check_rtl_of_a_twin_run_has_no_mismatch() {
    let o = {
        let mut c = vl15();
        c.args([
            "sim",
            "--fidelity",
            "twin",
            "--threads",
            "1",
            "--check-rtl",
            "--topology",
        ])
        .arg(common::topo("net.2sw2path4hca2port"));
        run(c)
    };
    assert!(o.status.success());
    let e = stderr(&o);
    // 2 switches and 2 two-port CAs: every one a twin, every one checked
    assert!(
        e.contains("check-rtl: 4 of 4 recorded devices checked"),
        "{e}"
    );
    assert!(e.contains(", 0 mismatching"), "{e}");
    let packets: u64 = e
        .split("checked: ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(packets > 50, "{e}");
}

#[test]
fn report_is_the_same_for_any_workers_and_shards() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("rec");
    record("net.2sw2path4hca", &dir);
    let one = check(&dir, &["--jobs", "1"]);
    let two = check(&dir, &["--jobs", "2"]);
    assert!(one.status.success() && two.status.success());
    assert_eq!(content(&stdout(&one)), content(&stdout(&two)));
    assert!(stdout(&one).contains("6 of 6 recorded devices checked"));
    // three shards, each with its report, merged
    let mut reports = Vec::new();
    let mut devices = 0;
    for k in 1..=3 {
        let r = tmp.path().join(format!("shard-{k}.json"));
        let o = check(
            &dir,
            &[
                "--jobs",
                "1",
                "--shard",
                &format!("{k}/3"),
                "--report",
                r.to_str().unwrap(),
            ],
        );
        assert!(o.status.success());
        devices += stdout(&o)
            .split(" of 6 recorded")
            .next()
            .and_then(|n| n.trim().parse::<usize>().ok())
            .unwrap();
        reports.push(r);
    }
    assert_eq!(devices, 6, "every device in exactly one shard");
    let mut c = vl15();
    c.args(["check-rtl", "--merge"]).args(&reports);
    let merged = run(c);
    assert!(merged.status.success());
    assert_eq!(content(&stdout(&merged)), content(&stdout(&one)));
    // a Slurm array of the shards: one task per shard, each with a report
    let job = tmp.path().join("check.sbatch");
    let o = check(
        &dir,
        &["--emit-slurm", job.to_str().unwrap(), "--shards", "3"],
    );
    assert!(o.status.success());
    let text = std::fs::read_to_string(&job).unwrap();
    assert!(text.starts_with("#!/bin/bash\n"));
    assert!(text.contains("#SBATCH --array=1-3\n"), "{text}");
    assert!(
        text.contains("--shard \"$SLURM_ARRAY_TASK_ID/3\""),
        "{text}"
    );
}

/// Device `name` of the recording in `dir`, and its stream.
fn stream(dir: &Path, name: &str) -> (DeviceEntry, Vec<u8>) {
    let m: Manifest =
        serde_json::from_str(&std::fs::read_to_string(dir.join(MANIFEST)).unwrap()).unwrap();
    let d = m.devices.iter().find(|d| d.id == name).unwrap().clone();
    let data = std::fs::read(dir.join(DATA)).unwrap();
    let mut b = Vec::new();
    for &(o, l) in &d.chunks {
        b.extend_from_slice(&data[o as usize..(o + l) as usize]);
    }
    (d, b)
}

fn ops(b: &[u8], nports: u8) -> Option<Vec<(usize, Op)>> {
    let mut r = OpReader::new(b, usize::from(nports), "t");
    let mut v = Vec::new();
    loop {
        let at = r.pos();
        match r.next_op() {
            Ok(Some(op)) => v.push((at, op)),
            Ok(None) => return Some(v),
            Err(_) => return None,
        }
    }
}

/// The file offset of byte `k` of device `d`'s stream.
fn file_offset(d: &DeviceEntry, mut k: usize) -> u64 {
    for &(o, l) in &d.chunks {
        if k < l as usize {
            return o + k as u64;
        }
        k -= l as usize;
    }
    panic!("past the stream");
}

#[test]
fn a_changed_byte_of_a_recorded_packet_is_caught() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("rec");
    record("net.2sw2path4hca", &dir);
    let (d, b) = stream(&dir, "Hca2");
    let good = ops(&b, d.nports).unwrap();
    // The last packet Hca2 receives before its last answer: flip one byte
    // of it such that the stream still reads, with that packet one byte
    // different.
    let rx: Vec<usize> = good
        .iter()
        .enumerate()
        .filter(|(_, (_, op))| matches!(op, Op::RxBurst { .. }))
        .map(|(k, _)| k)
        .collect();
    assert!(rx.len() > 3, "Hca2 receives packets");
    let k = rx[rx.len() / 2];
    let (start, end) = (good[k].0, good[k + 1].0);
    let mut hit = None;
    for at in (start..end).rev() {
        let mut m = b.clone();
        m[at] ^= 0x10;
        let Some(bad) = ops(&m, d.nports) else {
            continue;
        };
        if bad.len() != good.len() {
            continue;
        }
        let diff: Vec<usize> = (0..good.len())
            .filter(|&j| format!("{:?}", good[j].1) != format!("{:?}", bad[j].1))
            .collect();
        if diff == [k] {
            hit = Some(at);
            break;
        }
    }
    let at = hit.expect("a byte of the packet's data in the stream");
    let path = dir.join(DATA);
    let mut data = std::fs::read(&path).unwrap();
    data[file_offset(&d, at) as usize] ^= 0x10;
    std::fs::write(&path, data).unwrap();
    let o = check(&dir, &[]);
    assert_eq!(o.status.code(), Some(1), "a mismatch exits 1");
    let out = stdout(&o);
    let line = out
        .lines()
        .find(|l| l.starts_with("MISMATCH "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.starts_with("MISMATCH Hca2 (ca-mp 2 ports, DataW 128): "),
        "{line}"
    );
    assert!(
        line.contains("port 1, cycle ") || line.contains("port 2, cycle "),
        "{line}"
    );
    assert!(out.contains(" 1 mismatching"), "{out}");
}

#[test]
fn damaged_recordings_are_refused_with_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("rec");
    record("net.2sw2path4hca", &dir);
    let copy = |name: &str| -> PathBuf {
        let d = tmp.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        for f in [MANIFEST, DATA] {
            std::fs::copy(dir.join(f), d.join(f)).unwrap();
        }
        d
    };
    let refused = |d: &Path, file: &str, what: &str| {
        let o = check(d, &[]);
        assert_eq!(o.status.code(), Some(2), "{what}");
        let e = stderr(&o);
        assert_eq!(e.trim_end().lines().count(), 1, "one line: {e}");
        assert!(
            e.contains(&d.join(file).display().to_string()),
            "{what}: {e}"
        );
        assert!(e.contains(what), "{e}");
    };
    // truncated
    let t = copy("truncated");
    let len = std::fs::metadata(t.join(DATA)).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(t.join(DATA))
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    refused(&t, DATA, "truncated");
    // another build
    let a = copy("build");
    let m = std::fs::read_to_string(a.join(MANIFEST)).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&m).unwrap();
    v["build"] = serde_json::Value::String("0123456789abcdef".into());
    std::fs::write(a.join(MANIFEST), v.to_string()).unwrap();
    refused(&a, MANIFEST, "another build");
    // another width: the manifest says DataW 64 of streams recorded at 128
    let w = copy("width");
    let m = std::fs::read_to_string(w.join(MANIFEST)).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&m).unwrap();
    for d in v["devices"].as_array_mut().unwrap() {
        d["data_w"] = 64.into();
    }
    std::fs::write(w.join(MANIFEST), v.to_string()).unwrap();
    refused(&w, DATA, "DataW 128");
    // not a recording at all
    let n = tmp.path().join("none");
    std::fs::create_dir_all(&n).unwrap();
    refused(&n, MANIFEST, "not a recording");
}
