//! Fabric benchmarks (`make bench`): a 702-node fat tree built and
//! swept with DR Get(NodeInfo) through the RTL, the cost of idle devices,
//! and the resident memory of the fabric; and `opensm -o` on
//! `vl15 serve` against the real ibsim on 351- and 702-node fat trees, with
//! a perf profile of the server thread.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{anyhow, ensure, Context, Result};

use crate::agents::node_sma::Net;
use crate::model::device::AddressHandle;
use crate::model::net::NetOptions;
use crate::model::twin::FidelityChoice;
use crate::proto::fattree::Tree;
use crate::proto::mad;
use crate::proto::packet::attr::NodeInfo;
use crate::proto::packet::consts::*;
use crate::proto::topology::{NodeKind, Topology};

/// Directed-route paths (InitialPath[1..]) from CA `from`'s port `port` to
/// every node, breadth first over the topology's cables; only switches are
/// crossed. `paths[n]` is the path to node n (`None`: unreachable; the SM's
/// own node has the empty path).
pub fn dr_paths(t: &Topology, from: usize, port: u8) -> Vec<Option<Vec<u8>>> {
    let mut paths: Vec<Option<Vec<u8>>> = vec![None; t.nodes.len()];
    paths[from] = Some(Vec::new());
    let mut q = VecDeque::new();
    if let Some((n, _)) = t.remote(from, port) {
        if paths[n].is_none() {
            paths[n] = Some(vec![port]);
            q.push_back(n);
        }
    }
    while let Some(n) = q.pop_front() {
        if t.nodes[n].kind != NodeKind::Switch {
            continue;
        }
        let base = paths[n].clone().expect("queued nodes have paths");
        for p in 1..=t.nodes[n].nports {
            let Some((m, _)) = t.remote(n, p) else {
                continue;
            };
            if paths[m].is_none() && base.len() < 63 {
                let mut v = base.clone();
                v.push(p);
                paths[m] = Some(v);
                q.push_back(m);
            }
        }
    }
    paths
}

/// Resident set size of this process in KiB (Linux /proc/self/status).
pub fn rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Result of [`nodeinfo_sweep`].
#[derive(Debug, Clone)]
pub struct Sweep {
    pub nodes: usize,
    pub build_s: f64,
    pub sweep_s: f64,
    /// Nodes asked (every node but the SM's).
    pub smps: u64,
    /// Requests sent again after a loss.
    pub retries: u64,
    /// VL15 packets the RTL dropped at full buffers (its counters).
    pub vl15_dropped: u64,
    pub cycles: u64,
    pub ticks: u64,
    pub rss_kib: Option<u64>,
}

/// Give up on a node after this many retries.
const MAX_RETRIES: u32 = 8;

/// Build the fabric of `text` and send DR Get(NodeInfo) from the first CA to
/// every other node, `window` SMPs outstanding; every response must carry
/// the NodeGUID the topology gives that node.
///
/// VL15 has no flow control: an SMP that finds a VL15 buffer full is
/// dropped (and counted), so with many SMPs outstanding some are lost, and
/// the sweep does what an SM does: it sends them again. A loss is known when
/// the fabric has nothing in flight and a request is still unanswered (in
/// this simulation, the exact form of an SM's transaction timeout).
pub fn nodeinfo_sweep(text: &str, window: usize) -> Result<Sweep> {
    let t0 = Instant::now();
    let topo = Topology::parse(text, Path::new("bench"))?;
    let mut net = Net::new(topo, NetOptions::default())?;
    let build_s = t0.elapsed().as_secs_f64();
    let rss = rss_kib();
    let sm = net
        .devs
        .iter()
        .position(|d| !d.is_switch)
        .ok_or_else(|| anyhow!("no CA"))?;
    net.attach_sm(sm, 1)?;
    let paths = dr_paths(&net.topo, sm, 1);
    // (node, path, retries so far)
    let mut todo: VecDeque<(usize, Vec<u8>, u32)> = paths
        .iter()
        .enumerate()
        .filter_map(|(n, p)| p.clone().filter(|p| !p.is_empty()).map(|p| (n, p, 0)))
        .collect();
    let total = todo.len();
    let mut outstanding: Vec<(u64, usize, Vec<u8>, u32)> = Vec::new();
    let mut done = 0usize;
    let mut retries = 0u64;
    let c0 = net.cycle;
    let k0 = net.stats.ticks;
    let t1 = Instant::now();
    while done < total {
        while outstanding.len() < window {
            let Some((n, path, tries)) = todo.pop_front() else {
                break;
            };
            let tid = net.devs[sm].sm.as_mut().expect("attached").tid();
            let req = mad::dr_request(METHOD_GET, ATTR_NODE_INFO, 0, tid, &path);
            net.sm_post(sm, AddressHandle::directed(), &req)?;
            outstanding.push((tid, n, path, tries));
        }
        net.run_until(2_000_000, |net| {
            let s = net.devs[sm].sm.as_ref().expect("attached");
            net.idle() || outstanding.iter().any(|(tid, ..)| s.has_response(*tid))
        })
        .context("NodeInfo sweep stalled")?;
        let s = net.devs[sm].sm.as_mut().expect("attached");
        let mut i = 0;
        let mut answered = 0;
        while i < outstanding.len() {
            let (tid, n) = (outstanding[i].0, outstanding[i].1);
            if let Some((m, _, _)) = s.take_response(tid) {
                ensure!(
                    mad::status(&m) == 0,
                    "node {n}: status {:#x}",
                    mad::status(&m)
                );
                let ni = NodeInfo::decode(mad::data(&m))
                    .with_context(|| format!("node {n}: NodeInfo"))?;
                ensure!(
                    ni.node_guid == net.topo.nodes[n].node_guid,
                    "node {}: NodeGUID {:#x}, topology says {:#x}",
                    net.topo.nodes[n].id,
                    ni.node_guid,
                    net.topo.nodes[n].node_guid
                );
                outstanding.swap_remove(i);
                done += 1;
                answered += 1;
            } else {
                i += 1;
            }
        }
        if answered == 0 && net.idle() {
            // Nothing in flight: every outstanding request was lost.
            for (_, n, path, tries) in outstanding.drain(..) {
                ensure!(
                    tries < MAX_RETRIES,
                    "node {}: no answer after {MAX_RETRIES} retries",
                    net.topo.nodes[n].id
                );
                retries += 1;
                todo.push_back((n, path, tries + 1));
            }
        }
    }
    let sweep_s = t1.elapsed().as_secs_f64();
    let cycles = net.cycle - c0;
    let ticks = net.stats.ticks - k0;
    let vl15_dropped = net.vl15_dropped()?;
    Ok(Sweep {
        nodes: net.devs.len(),
        build_s,
        sweep_s,
        smps: total as u64,
        retries,
        vl15_dropped,
        cycles,
        ticks,
        rss_kib: rss,
    })
}

/// Two CAs on one cable: the busy pair of the idle-cost measurement.
const PAIR: &str = "Hca 1 \"busy-a\"\n[1] \"busy-b\"[1]\n\nHca 1 \"busy-b\"\n[1] \"busy-a\"[1]\n";

/// Simulated cycles per second of `smps` DR Get(NodeInfo) from busy-a to
/// busy-b, `window` outstanding, in the fabric of `text` (which must
/// contain the pair).
fn pair_rate(text: &str, smps: usize, window: usize) -> Result<(f64, u64)> {
    let topo = Topology::parse(text, Path::new("bench"))?;
    let mut net = Net::new(topo, NetOptions::default())?;
    let a = net
        .dev_index("busy-a")
        .ok_or_else(|| anyhow!("no busy-a"))?;
    net.attach_sm(a, 1)?;
    let c0 = net.cycle;
    let t = Instant::now();
    let mut sent = 0;
    let mut got = 0;
    while got < smps {
        while sent < smps && sent - got < window {
            let tid = net.devs[a].sm.as_mut().expect("attached").tid();
            let req = mad::dr_request(METHOD_GET, ATTR_NODE_INFO, 0, tid, &[1]);
            net.sm_post(a, AddressHandle::directed(), &req)?;
            sent += 1;
        }
        net.run_until(1_000_000, |n| {
            n.devs[a].sm.as_ref().expect("attached").responses() > 0
        })?;
        let sm = net.devs[a].sm.as_mut().expect("attached");
        got += sm.responses();
        sm.cq.clear();
    }
    let cycles = net.cycle - c0;
    Ok((cycles as f64 / t.elapsed().as_secs_f64(), cycles))
}

/// The fabric benchmark report.
pub fn run() -> Result<String> {
    let mut r = String::new();
    let tree = crate::proto::fattree::two_level(36)?;
    let s = nodeinfo_sweep(&tree, 16)?;
    let _ = writeln!(
        r,
        "Fabric: two-level fat tree of 36-port switches ({} nodes)",
        s.nodes
    );
    let _ = writeln!(
        r,
        "  build {:.2} s; DR Get(NodeInfo) to all {} other nodes, 16 outstanding: {:.2} s = {:.0} SMPs/s, {} cycles, {} device evaluations",
        s.build_s,
        s.smps,
        s.sweep_s,
        s.smps as f64 / s.sweep_s,
        s.cycles,
        s.ticks
    );
    let _ = writeln!(
        r,
        "  {} SMPs dropped at full VL15 buffers (RTL counters), {} requests sent again",
        s.vl15_dropped, s.retries
    );
    match s.rss_kib {
        Some(k) => {
            let _ = writeln!(
                r,
                "  resident size after build: {:.1} MiB",
                k as f64 / 1024.0
            );
        }
        None => {
            let _ = writeln!(r, "  resident size: not available (/proc/self/status)");
        }
    }
    let _ = write!(r, "{}", bring_up_report(&tree, 36)?);
    // Idle cost: the same busy pair alone and beside the idle fat tree,
    // interleaved, three runs each.
    let beside = format!("{PAIR}\n{tree}");
    let mut alone = Vec::new();
    let mut crowd = Vec::new();
    for _ in 0..3 {
        alone.push(pair_rate(PAIR, 400, 4)?);
        crowd.push(pair_rate(&beside, 400, 4)?);
    }
    let med = |v: &mut Vec<(f64, u64)>| {
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v[1]
    };
    let (ra, ca) = med(&mut alone);
    let (rc, cc) = med(&mut crowd);
    ensure!(
        ca == cc,
        "the busy pair took {ca} cycles alone but {cc} beside the tree"
    );
    let _ = writeln!(
        r,
        "Idle cost: 400 DR Get(NodeInfo) between two CAs, {ca} cycles, median of 3 interleaved runs"
    );
    let _ = writeln!(r, "  alone: {ra:.0} cycles/s; beside {} idle devices: {rc:.0} cycles/s; ratio {:.2} (target >= 0.9)", s.nodes, rc / ra);
    Ok(r)
}

/// Wall time of `opensm -o` (one sweep, then exit) bringing up `topology`
/// on the real ibsim, OpenSM attached at the file's first CA.
pub fn opensm_on_ibsim(topology: &Path, first_ca: &str) -> Result<f64> {
    let server = crate::agents::ibsim::IbsimServer::start(topology)?;
    opensm_once(server.sockname(), first_ca)
}

/// [`opensm_on_ibsim`] with ibsim's table sizes raised to fit `topo`
/// (ibsim 0.10 holds at most 2,048 nodes unless told more with -N, -S, -P).
pub fn opensm_on_ibsim_sized(topology: &Path, topo: &Topology, first_ca: &str) -> Result<f64> {
    let nodes = topo.nodes.len();
    let switches = topo
        .nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Switch)
        .count();
    let ports: usize = topo.nodes.iter().map(|n| usize::from(n.nports) + 1).sum();
    let args = [
        "-N".to_string(),
        (nodes + 64).max(2048).to_string(),
        "-S".to_string(),
        (switches + 16).max(256).to_string(),
        "-P".to_string(),
        (2 * ports).max(8192).to_string(),
    ];
    let server = crate::agents::ibsim::IbsimServer::start_with_args(
        topology,
        Duration::from_secs(60),
        &args,
    )?;
    opensm_once(server.sockname(), first_ca)
}

/// Wall time of `opensm -o` against the ibsim-protocol server `sockname`
/// (the real ibsim or `vl15 serve`), attached at node `ca`; an error unless
/// it exits 0 with "SUBNET UP" in its log. Its files go in a temp dir.
pub fn opensm_once(sockname: &str, ca: &str) -> Result<f64> {
    let opensm = ["/usr/sbin/opensm", "/usr/bin/opensm"]
        .iter()
        .map(Path::new)
        .find(|p| p.exists())
        .ok_or_else(|| anyhow!("opensm not found (Debian package opensm)"))?;
    let scratch = tempfile::tempdir()?;
    let log = scratch.path().join("opensm.log");
    let mut cmd = crate::agents::ibsim::umad2sim_command(sockname, opensm, Some(ca))?;
    cmd.current_dir(scratch.path())
        .env("OSM_CACHE_DIR", scratch.path())
        .env("OSM_TMP_DIR", scratch.path())
        .arg("-o")
        .arg("-f")
        .arg(&log)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let t = Instant::now();
    let status = cmd.status().context("running opensm")?;
    let secs = t.elapsed().as_secs_f64();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    ensure!(
        status.success() && text.contains("SUBNET UP"),
        "opensm -o on @{sockname} did not reach SUBNET UP ({status}); log:\n{}",
        text.lines().rev().take(20).collect::<Vec<_>>().join("\n")
    );
    Ok(secs)
}

/// The built-in SM bringing up the fabric of `text` (a fat tree of
/// `k`-port switches), and OpenSM doing the same on ibsim, side by side.
pub fn bring_up_report(text: &str, k: u8) -> Result<String> {
    let mut r = String::new();
    let dir = tempfile::tempdir()?;
    let path = dir.path().join(format!("fattree{k}"));
    std::fs::write(&path, text)?;
    // At each width the fabric's models are built at, interleaved with
    // nothing else: the default width's run is the one set against ibsim.
    let mut at_default = None;
    for w in vl15_bindings::DEV_DATA_WIDTHS {
        let mut opts = crate::agents::simrun::SimOptions::default();
        opts.net.data_w = w;
        let (_net, _sm, s) = crate::agents::simrun::bring_up(&path, &opts)?;
        let _ = writeln!(
            r,
            "Bring-up by the built-in SM ({} outstanding), DataW {w}: {} nodes, {}/{} ports Active, {:.2} s wall, {} SMPs on the wire, {} simulated cycles, {} VL15 drops / {} retries",
            opts.sm.tx.max_outstanding,
            s.nodes,
            s.active_ports,
            s.linked_ports,
            s.bring_up_s,
            s.smps_sent,
            s.cycles,
            s.vl15_dropped,
            s.retries
        );
        if w == crate::model::net::DEFAULT_DATA_W {
            at_default = Some(s);
        }
    }
    let s = at_default.ok_or_else(|| anyhow!("the default width is not built"))?;
    let topo = Topology::parse(text, &path)?;
    let ca = topo
        .nodes
        .iter()
        .find(|n| n.kind == NodeKind::Ca)
        .ok_or_else(|| anyhow!("no CA"))?;
    match opensm_on_ibsim(&path, &ca.id) {
        Ok(o) => {
            let _ = writeln!(
                r,
                "  OpenSM -o on ibsim, same file: {o:.2} s wall; built-in SM on the RTL (DataW {}) / OpenSM on ibsim = {:.1}x (target <= 1.0)",
                crate::model::net::DEFAULT_DATA_W,
                s.bring_up_s / o
            );
        }
        Err(e) => {
            let _ = writeln!(r, "  OpenSM on ibsim: not measured: {e:#}");
        }
    }
    Ok(r)
}

/// One `opensm -o` run against `vl15 serve` (in this process, its own
/// thread) and what the server did meanwhile.
#[derive(Debug, Clone, Default)]
pub struct ServeRun {
    /// Wall time of `opensm -o`, start to exit, and of the server's stop
    /// after it (a recording finished).
    pub wall_s: f64,
    pub stop_s: f64,
    /// CPU time of the server thread over its whole life (bind, serve,
    /// stop; `/proc/thread-self/stat`), if readable.
    pub server_cpu_s: Option<f64>,
    /// Simulated cycles, device evaluations, MADs into the RTL.
    pub cycles: u64,
    pub evals: u64,
    pub to_rtl: u64,
    /// `perf` profile of the server thread during the run, if perf works.
    pub profile: Option<Profile>,
    /// Resident set of this process (the server's thread is in it) with
    /// the fabric up, after OpenSM's exit.
    pub rss_kib: Option<u64>,
}

/// Where the server thread's samples fell.
#[derive(Debug, Clone, Default)]
pub struct Profile {
    pub samples: u64,
    /// Share of the samples in the Verilated switch models (`Vsw*`), the CA
    /// models (`Vca*`), and the rest (testbench, runtime, kernel).
    pub switch_pct: f64,
    pub ca_pct: f64,
    /// Share in the twins (`vl15::model::twin`).
    pub twin_pct: f64,
    pub other_pct: f64,
    /// The hottest symbols, "pct symbol".
    pub top: Vec<(f64, String)>,
}

/// `perf` symbols by share: `perf report --stdio --sort symbol` lines
/// "  12.34%  [.] name".
fn parse_perf_report(text: &str, samples: u64) -> Profile {
    let mut p = Profile {
        samples,
        ..Profile::default()
    };
    let mut rows = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        let Some((pct, sym)) = l.split_once('%') else {
            continue;
        };
        let Ok(pct) = pct.trim().parse::<f64>() else {
            continue;
        };
        // "[.] name", then (some perf versions) padding columns.
        let sym = sym
            .trim()
            .trim_start_matches("[.]")
            .trim_start_matches("[k]")
            .split_whitespace()
            .next()
            .unwrap_or("");
        if sym.starts_with("Vsw") {
            p.switch_pct += pct;
        } else if sym.starts_with("Vca") {
            p.ca_pct += pct;
        } else if sym.contains("model::twin") {
            p.twin_pct += pct;
        } else {
            p.other_pct += pct;
        }
        rows.push((pct, sym.to_string()));
    }
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    rows.truncate(6);
    p.top = rows;
    p
}

/// Profile thread `tid` with `perf record` while `f` runs; `None` (and
/// `f` still runs) when perf is missing or not allowed here.
fn with_perf<T>(tid: Option<u32>, f: impl FnOnce() -> T) -> (T, Option<Profile>) {
    let dir = tempfile::tempdir().ok();
    let perf = ["/usr/bin/perf", "/usr/local/bin/perf"]
        .iter()
        .map(Path::new)
        .find(|p| p.exists());
    let (Some(tid), Some(perf), Some(dir)) = (tid, perf, dir) else {
        return (f(), None);
    };
    let data = dir.path().join("perf.data");
    let rec = std::process::Command::new(perf)
        .args(["record", "-q", "-F", "499", "-t", &tid.to_string(), "-o"])
        .arg(&data)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    let Ok(mut rec) = rec else {
        return (f(), None);
    };
    let out = f();
    // perf writes its file on SIGINT.
    let _ = std::process::Command::new("kill")
        .args(["-INT", &rec.id().to_string()])
        .status();
    let _ = rec.wait();
    let report = std::process::Command::new(perf)
        .args([
            "report",
            "--stdio",
            "--no-children",
            "--sort",
            "symbol",
            "-i",
        ])
        .arg(&data)
        .stderr(std::process::Stdio::null())
        .output();
    let profile = report.ok().filter(|o| o.status.success()).map(|o| {
        let text = String::from_utf8_lossy(&o.stdout);
        let samples = text
            .lines()
            .find_map(|l| l.strip_prefix("# Samples: "))
            .and_then(|s| s.split_whitespace().next())
            .and_then(|s| {
                let (n, k) = s.strip_suffix('K').map_or((s, 1), |n| (n, 1000));
                n.parse::<u64>().ok().map(|n| n * k)
            })
            .unwrap_or(0);
        parse_perf_report(&text, samples)
    });
    (out, profile.filter(|p| !p.top.is_empty()))
}

/// `opensm -o` attached at `ca` bringing up `topology` served by `vl15
/// serve` (in a thread of this process), with a perf profile of the server
/// thread when `profile` and perf is usable.
pub fn opensm_on_serve(
    topology: &Path,
    ca: &str,
    profile: bool,
    fidelity: &FidelityChoice,
) -> Result<ServeRun> {
    opensm_on_serve_with(
        topology,
        ca,
        profile,
        NetOptions {
            fidelity: fidelity.clone(),
            ..NetOptions::default()
        },
    )
}

/// [`opensm_on_serve`] on a fabric built with `net`.
pub fn opensm_on_serve_with(
    topology: &Path,
    ca: &str,
    profile: bool,
    net: NetOptions,
) -> Result<ServeRun> {
    let server = crate::agents::serve::Background::start_on(
        topology,
        net,
        crate::agents::serve::ServeOptions::default(),
    )?;
    let tid = if profile { server.tid } else { None };
    let (wall, prof) = with_perf(tid, || opensm_once(&server.sockname, ca));
    let rss_kib = rss_kib();
    let t1 = Instant::now();
    let done = server.stop()?;
    Ok(ServeRun {
        wall_s: wall?,
        stop_s: t1.elapsed().as_secs_f64(),
        server_cpu_s: done.cpu_s,
        cycles: done.cycles,
        evals: done.evals,
        to_rtl: done.stats.to_rtl,
        profile: prof,
        rss_kib,
    })
}

/// A fat tree written to a file in a directory of its own, and the CA
/// OpenSM runs at (the first).
struct TreeFile {
    dir: tempfile::TempDir,
    path: std::path::PathBuf,
    topo: Topology,
    ca: String,
}

fn tree_file(tree: Tree) -> Result<TreeFile> {
    let text = tree.text()?;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join(format!("fattree{}", tree.name()));
    std::fs::write(&path, &text)?;
    let topo = Topology::parse(&text, &path)?;
    let ca = topo
        .nodes
        .iter()
        .find(|n| n.kind == NodeKind::Ca)
        .ok_or_else(|| anyhow!("no CA"))?
        .id
        .clone();
    Ok(TreeFile {
        dir,
        path,
        topo,
        ca,
    })
}

/// `opensm -o` on each fat tree of `trees` (36×18: 351 nodes, 36×36: 702
/// nodes, 64×64: 96 switches and 2,048 CAs, 36L3: 13,284 nodes), on the
/// real ibsim and on `vl15 serve` with its devices as `fidelity` says,
/// side by side, with the server's profile and the process's peak RSS.
pub fn serve_report(trees: &[Tree], fidelity: &FidelityChoice) -> Result<String> {
    let mut r = String::new();
    for &tree in trees {
        let TreeFile {
            dir: _dir,
            path,
            topo,
            ca,
        } = tree_file(tree)?;
        let nodes = topo.nodes.len();
        let ibsim = opensm_on_ibsim_sized(&path, &topo, &ca)
            .with_context(|| format!("opensm -o on ibsim, {nodes}-node fat tree"))?;
        let ours = opensm_on_serve(&path, &ca, true, fidelity)
            .with_context(|| format!("opensm -o on vl15 serve, {nodes}-node fat tree"))?;
        let shape = match tree {
            Tree::Two { k, leaves } => format!(
                "{leaves} leaves, {} spine(s), {k}-port switches",
                leaves / 2
            ),
            Tree::Three { k } => format!("three levels of {k}-port switches"),
        };
        let _ = writeln!(
            r,
            "opensm -o, {nodes}-node fat tree ({shape}), OpenSM at {ca}, vl15 serve {}:",
            fidelity.describe()
        );
        let _ = writeln!(
            r,
            "  ibsim {:.2} s; vl15 serve {:.2} s; vl15/ibsim = {:.2}x; RSS with the fabric up {}",
            ibsim,
            ours.wall_s,
            ours.wall_s / ibsim,
            ours.rss_kib
                .map_or("not readable".into(), |k| format!("{} MiB", k / 1024))
        );
        let cpu = ours
            .server_cpu_s
            .map_or("not readable".to_string(), |c| format!("{c:.2} s"));
        let _ = writeln!(
            r,
            "  server: {} MADs into the RTL, {} cycles, {} device evaluations ({:.1} µs each over the run), thread CPU {cpu}",
            ours.to_rtl,
            ours.cycles,
            ours.evals,
            ours.wall_s * 1e6 / ours.evals.max(1) as f64
        );
        match &ours.profile {
            Some(p) => {
                let _ = writeln!(
                    r,
                    "  profile of the server thread (perf, {} samples): switch RTL models {:.1}%, CA RTL models {:.1}%, twins {:.1}%, testbench/runtime/kernel {:.1}%",
                    p.samples, p.switch_pct, p.ca_pct, p.twin_pct, p.other_pct
                );
                for (pct, sym) in &p.top {
                    let _ = writeln!(r, "    {pct:5.1}% {sym}");
                }
            }
            None => {
                let _ = writeln!(r, "  profile: perf not available here");
            }
        }
    }
    Ok(r)
}

fn cpu_text(c: Option<f64>) -> String {
    c.map_or("not readable".to_string(), |c| format!("{c:.2} s"))
}

/// The RTL check of a twin run, side by side with the all-RTL run, on
/// each fat tree of `trees`: `opensm -o` through `vl15 serve` with every
/// device RTL; the same through `vl15 serve --fidelity twin --check-rtl`
/// (the run recording, then `vl15 check-rtl` on every core); the check's
/// wall time at 1, 2, 4 … workers up to `max_jobs`, with its efficiency
/// (time at 1 / (N × time at N)) and the busiest device.
pub fn check_report(trees: &[Tree], max_jobs: usize) -> Result<String> {
    use crate::check::rtl_replay::{check, CheckOptions};
    use crate::model::twin::Fidelity;
    let mut r = String::new();
    for &tree in trees {
        let TreeFile {
            dir,
            path,
            topo,
            ca,
        } = tree_file(tree)?;
        let nodes = topo.nodes.len();
        let rtl = opensm_on_serve(&path, &ca, false, &FidelityChoice::all(Fidelity::Rtl))
            .with_context(|| format!("opensm -o on the RTL, {nodes}-node fat tree"))?;
        let twin_plain = opensm_on_serve(&path, &ca, false, &FidelityChoice::all(Fidelity::Twin))
            .with_context(|| format!("opensm -o on twins, {nodes}-node fat tree"))?;
        let rec_dir = dir.path().join("rec");
        let rec = crate::model::record::Recording::create(&rec_dir)?;
        let twin = opensm_on_serve_with(
            &path,
            &ca,
            false,
            NetOptions {
                fidelity: FidelityChoice::all(Fidelity::Twin),
                record: Some(rec),
                ..NetOptions::default()
            },
        )
        .with_context(|| format!("opensm -o on twins, recording, {nodes}-node fat tree"))?;
        let bytes =
            std::fs::metadata(rec_dir.join(crate::model::record::DATA)).map_or(0, |m| m.len());
        let jobs = max_jobs.max(1);
        // the check at 1, 2, 4 … workers and at `jobs`, each run once: the
        // last is the check of the run
        let mut counts: Vec<usize> = std::iter::successors(Some(1usize), |n| Some(n * 2))
            .take_while(|&n| n < jobs)
            .collect();
        counts.push(jobs);
        let mut runs = Vec::with_capacity(counts.len());
        for &n in &counts {
            let opts = CheckOptions {
                jobs: n,
                ..Default::default()
            };
            runs.push((n, check(&rec_dir, &opts)?));
        }
        let (_, all) = runs.last().ok_or_else(|| anyhow!("no check ran"))?;
        let run = |s: &ServeRun| s.wall_s + s.stop_s;
        let total = run(&twin) + all.wall;
        let _ = writeln!(
            r,
            "opensm -o, {nodes}-node fat tree, OpenSM at {ca}, DataW {}:",
            crate::model::net::DEFAULT_DATA_W
        );
        let _ = writeln!(
            r,
            "  all RTL {:.2} s; twins {:.2} s; twins recording {:.2} s ({:.2}x, {:.1} MiB) + check-rtl --jobs {jobs} {:.2} s = {:.2} s: {:.2}x the all-RTL run (target <= 0.6)",
            run(&rtl),
            run(&twin_plain),
            run(&twin),
            run(&twin) / run(&twin_plain),
            bytes as f64 / (1024.0 * 1024.0),
            all.wall,
            total,
            total / run(&rtl)
        );
        let _ = writeln!(
            r,
            "  (each run: opensm -o, then the server's stop; server thread CPU: all RTL {}, twins {}, twins recording {})",
            cpu_text(rtl.server_cpu_s),
            cpu_text(twin_plain.server_cpu_s),
            cpu_text(twin.server_cpu_s)
        );
        for l in all.content().lines() {
            let _ = writeln!(r, "  {l}");
        }
        let (_, one) = &runs[0];
        for (n, rep) in &runs {
            let _ = writeln!(
                r,
                "  check-rtl --jobs {n}: {:.2} s, efficiency {:.2}",
                rep.wall,
                one.wall / (*n as f64 * rep.wall)
            );
        }
        let total: f64 = one.devices.iter().map(|d| d.secs).sum();
        if let Some(b) = one.devices.iter().max_by(|a, b| a.secs.total_cmp(&b.secs)) {
            let _ = writeln!(
                r,
                "  the busiest device: {} {:.2} s of {:.2} s replaying ({:.0} %): no check is faster",
                b.id,
                b.secs,
                total,
                100.0 * b.secs / total.max(1e-9)
            );
        }
    }
    Ok(r)
}

/// Wall time of one `Dev::step` of `dev`, `cycles` cycles: port 1 gets V1
/// (a directed-route Get(NodeInfo) for the device's SMA) back to back when
/// `traffic`, the other ports nothing; every ready high, every link up.
/// After the first cycle the device is told only of port 1's changes, as
/// the fabric tells it of the ports with beats coming in.
fn step_ns(dev: &mut dyn crate::model::dut::Dut, traffic: bool, cycles: u64) -> Result<f64> {
    use vl15_bindings::{Changed, DevIn, PortIn};
    let n = dev.num_ports() as usize;
    let beats = crate::model::stream::to_beats(
        crate::check::scenario::vectors::V1,
        crate::model::stream::beat_bytes(dev.data_w()),
    );
    let mut pin = vec![
        PortIn {
            link_up: true,
            tx_tready: true,
            ..PortIn::default()
        };
        n
    ];
    let busy: &[u8] = if traffic { &[0] } else { &[] };
    let i = DevIn {
        sma_rx_tready: true,
        sm_rx_tready: true,
        ..DevIn::default()
    };
    let t = Instant::now();
    for c in 0..cycles as usize {
        if traffic {
            let b = beats[c % beats.len()];
            pin[0].rx_tdata = b.data;
            pin[0].rx_tkeep = b.keep;
            pin[0].rx_tlast = b.last;
            pin[0].rx_tvalid = true;
        }
        let changed = if c == 0 {
            Changed::All
        } else {
            Changed::Ports(busy)
        };
        dev.step(&i, &pin, changed)?;
    }
    Ok(t.elapsed().as_secs_f64() * 1e9 / cycles as f64)
}

/// The cost of a switch's cycle against a CA port's, side by side in one
/// run (median of 3 interleaved rounds), at both data path widths of the
/// fabric's models: a 64-port switch with one port receiving SMPs back to
/// back, the same switch with every port idle, and a one-port CA receiving
/// the same SMPs. What an SMP costs per hop is a cycle's cost times its
/// beats.
pub fn radix_report(cycles: u64) -> Result<String> {
    use crate::model::twin::{backend, DeviceSpec, Fidelity};
    use vl15_bindings::DEV_DATA_WIDTHS;
    struct Row {
        w: u32,
        /// The CA, the switch with a port receiving, the switch idle.
        devs: [Box<dyn crate::model::dut::Dut>; 3],
        ns: [Vec<f64>; 3],
    }
    let mut rows = Vec::new();
    for f in [Fidelity::Rtl, Fidelity::Twin] {
        for w in DEV_DATA_WIDTHS {
            let b = backend(f);
            let ca = DeviceSpec::CaMp {
                nports: 1,
                data_w: w,
            };
            let sw = DeviceSpec::Switch {
                nports: 64,
                data_w: w,
            };
            let mut devs = [
                b.build(ca).context("the 1-port CA")?,
                b.build(sw).context("the 64-port switch")?,
                b.build(sw).context("the 64-port switch")?,
            ];
            for d in &mut devs {
                d.reset(4)?;
            }
            rows.push((
                f,
                Row {
                    w,
                    devs,
                    ns: Default::default(),
                },
            ));
        }
    }
    for _ in 0..3 {
        for (_, row) in &mut rows {
            for (k, d) in row.devs.iter_mut().enumerate() {
                row.ns[k].push(step_ns(d.as_mut(), k != 2, cycles)?);
            }
        }
    }
    let med = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(|x, y| x.total_cmp(y));
        v[v.len() / 2]
    };
    let v1 = crate::check::scenario::vectors::V1.len();
    let mut r = String::new();
    let _ = writeln!(
        r,
        "cost of one cycle (Dut::step, {cycles} cycles, median of 3 interleaved rounds; V1, {v1} bytes, back to back into port 1):"
    );
    let base_w = rows[0].1.w;
    let base = med(&rows[0].1.ns[0]) * v1.div_ceil(base_w as usize / 8) as f64;
    let rtl_hop = |w: u32, k: usize| {
        rows.iter()
            .find(|(f, r)| *f == Fidelity::Rtl && r.w == w)
            .map(|(_, r)| med(&r.ns[k]))
    };
    for (f, row) in &rows {
        let [ca, one, idle] = [0, 1, 2].map(|k| med(&row.ns[k]));
        let beats = v1.div_ceil(row.w as usize / 8) as f64;
        let _ = writeln!(
            r,
            "  {} DataW {:3} ({beats} beats an SMP; an SMP's hop against a DataW {base_w} RTL CA port's):",
            f.name(),
            row.w
        );
        let _ = writeln!(
            r,
            "    1-port CA, port receiving:            {ca:6.0} ns  1.00          an SMP's hop {:6.0} ns  {:.3}",
            ca * beats,
            ca * beats / base
        );
        let _ = writeln!(
            r,
            "    64-port switch, one port receiving:  {one:6.0} ns  {:.2}{}  an SMP's hop {:6.0} ns  {:.3}",
            one / ca,
            if *f == Fidelity::Rtl { " (<= 1.5)" } else { "         " },
            one * beats,
            one * beats / base
        );
        let _ = writeln!(
            r,
            "    64-port switch, every port idle:     {idle:6.0} ns  {:.3}{}",
            idle / ca,
            if *f == Fidelity::Rtl {
                " (<= 0.05)"
            } else {
                ""
            }
        );
        if *f == Fidelity::Twin {
            if let (Some(c), Some(s)) = (rtl_hop(row.w, 0), rtl_hop(row.w, 1)) {
                let _ = writeln!(
                    r,
                    "    twin / RTL at DataW {}: CA port {:.3}, switch {:.3}",
                    row.w,
                    ca / c,
                    one / s
                );
            }
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_report_lines_are_classified_by_model() {
        // The shape of `perf report --stdio --no-children --sort symbol`.
        let text = "# Samples: 7K of event 'cpu-clock:ppp'\n\
                    #\n\
                    # Overhead  Symbol\n\
                    \n\
                    \x20   50.00%  [.] Vswtile___024root___nba_sequent__TOP__5   -   -\n\
                    \x20   30.00%  [.] Vcamp1___024root___eval\n\
                    \x20   15.00%  [.] vl15::agents::node_sma::Net::step\n\
                    \x20    5.00%  [k] __softirqentry_text_start\n";
        let p = parse_perf_report(text, 7000);
        assert_eq!(p.samples, 7000);
        assert_eq!((p.switch_pct, p.ca_pct, p.other_pct), (50.0, 30.0, 20.0));
        assert_eq!(p.twin_pct, 0.0);
        assert_eq!(
            p.top[0],
            (50.0, "Vswtile___024root___nba_sequent__TOP__5".to_string())
        );
        assert_eq!(p.top.len(), 4);
    }
}
