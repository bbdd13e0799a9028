//! `vl15 bench` (`make bench`): latency and line-rate checks of the RTL, and
//! the simulation speed through cxx against a pure C++ Verilator harness of
//! the same top with the same flags, measured side by side in one run.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{ensure, Context, Result};
use vl15_bindings::{Ca, CaIn, CaOut};

use crate::check::scenario::{self, vectors};
use crate::model::stream::to_beats;

/// The speed workload, identical on both sides (see sim/bench/ca_bench.cpp):
/// V1 back to back on the wire RX, one beat per cycle, every ready high.
pub fn workload(width: u32, cycles: u64) -> Vec<CaIn> {
    let beats = to_beats(vectors::V1, (width / 8) as usize);
    (0..cycles as usize)
        .map(|c| {
            let b = beats[c % beats.len()];
            CaIn {
                rx_tdata: b.data,
                rx_tkeep: b.keep,
                rx_tvalid: true,
                rx_tlast: b.last,
                tx_tready: true,
                sma_rx_tready: true,
                sm_rx_tready: true,
                link_up: true,
                ..CaIn::default()
            }
        })
        .collect()
}

/// Cycles per second through cxx, one `step` call per cycle.
fn rust_step(width: u32, ins: &[CaIn]) -> Result<f64> {
    let mut ca = Ca::new(width)?;
    ca.reset(4)?;
    let t = Instant::now();
    let mut sink = 0u64;
    for i in ins {
        let o = ca.step(i)?;
        sink = sink.wrapping_add(u64::from(o.sma_rx_tvalid));
    }
    let s = t.elapsed().as_secs_f64();
    std::hint::black_box(sink);
    Ok(ins.len() as f64 / s)
}

/// Cycles per second through cxx, one `step_batch` call per 4096 cycles.
fn rust_batch(width: u32, ins: &[CaIn]) -> Result<f64> {
    let mut ca = Ca::new(width)?;
    ca.reset(4)?;
    let mut outs = vec![CaOut::default(); 4096];
    let t = Instant::now();
    for chunk in ins.chunks(4096) {
        ca.step_batch(chunk, &mut outs[..chunk.len()])?;
    }
    let s = t.elapsed().as_secs_f64();
    std::hint::black_box(&outs);
    Ok(ins.len() as f64 / s)
}

/// Cycles per second of the pure C++ harness (built by sim/bench/run.sh).
fn cpp(width: u32, cycles: u64) -> Result<f64> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new("bash")
        .arg(root.join("sim/bench/run.sh"))
        .arg(width.to_string())
        .arg(cycles.to_string())
        .current_dir(&root)
        .output()
        .context("running sim/bench/run.sh")?;
    let text = String::from_utf8_lossy(&out.stdout);
    ensure!(
        out.status.success(),
        "sim/bench/run.sh failed: {}{}",
        text,
        String::from_utf8_lossy(&out.stderr)
    );
    let cps = text
        .split_whitespace()
        .find_map(|w| w.strip_prefix("cps="))
        .with_context(|| format!("no cps= in the C++ harness output: {text}"))?;
    Ok(cps.parse()?)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

pub fn run(cycles: u64) -> Result<String> {
    let mut s = String::new();
    writeln!(
        s,
        "== latency and line rate (cycles; targets: rx->SMA <= 4, SMA->TX buffer <= 2) =="
    )?;
    writeln!(
        s,
        "{:>5} {:>10} {:>10} {:>12} {:>10} {:>8} {:>6}",
        "width", "rx->SMA", "SMA->SQbuf", "SMA->wire", "answered", "dropped", "gaps"
    )?;
    for w in [32u32, 64, 128] {
        let sc = scenario::find("back_to_back").expect("scenario");
        let mut r = scenario::Run::new(w)?;
        sc.execute(&mut r)
            .with_context(|| format!("back_to_back at {w}"))?;
        r.measure();
        let dropped = r.counters(scenario::CA)?.get("vl15_dropped");
        let port = &r.port(scenario::CA);
        let gaps: u64 = port.wire_tx.packets.iter().map(|p| p.gaps).sum();
        let smps = port.wire_tx.packets.len();
        writeln!(
            s,
            "{:>5} {:>10} {:>10} {:>12} {:>10} {:>8} {:>6}",
            w,
            r.rx_latency.map_or("-".into(), |v| v.to_string()),
            r.sq_latency.map_or("-".into(), |v| v.to_string()),
            r.tx_latency.map_or("-".into(), |v| v.to_string()),
            smps,
            dropped,
            gaps
        )?;
    }
    writeln!(
        s,
        "(SMA->wire includes the store-and-forward VL15 TX buffer: a whole SMP is \
         written before its first beat leaves; see docs/arch.md)"
    )?;

    writeln!(
        s,
        "\n== simulation speed, DATA_W 64, {cycles} cycles, median of 3 interleaved runs =="
    )?;
    let w = 64;
    let ins = workload(w, cycles);
    let (mut c, mut st, mut ba) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..3 {
        c.push(cpp(w, cycles)?);
        st.push(rust_step(w, &ins)?);
        ba.push(rust_batch(w, &ins)?);
    }
    let (c, st, ba) = (median(c), median(st), median(ba));
    writeln!(s, "pure C++ harness      {:>12.0} cycles/s   1.00", c)?;
    writeln!(
        s,
        "cxx, step per cycle   {:>12.0} cycles/s   {:.2}",
        st,
        st / c
    )?;
    writeln!(
        s,
        "cxx, step_batch 4096  {:>12.0} cycles/s   {:.2}   (target >= 0.90)",
        ba,
        ba / c
    )?;
    Ok(s)
}
