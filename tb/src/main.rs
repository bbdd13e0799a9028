//! `vl15`: drive real SMP traffic through the Verilated vl15 RTL.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};

use vl15::pcap::LinkType;
use vl15::{bench, replay, scenario, trace};

/// Print to stdout; a closed pipe (`vl15 decode f | head`) ends the output
/// quietly instead of panicking.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let mut o = std::io::stdout().lock();
        if let Err(e) = write!(o, $($t)*) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
        }
    }};
}
macro_rules! outln {
    ($($t:tt)*) => {{
        out!($($t)*);
        out!("\n");
    }};
}

#[derive(Parser)]
#[command(
    name = "vl15",
    version,
    about = "Cycle-accurate InfiniBand SMI/VL15 RTL, driven from Rust",
    long_about = "Cycle-accurate InfiniBand SMI/VL15 RTL, driven from Rust.\n\n\
        Every packet crosses the Verilated SystemVerilog of a CA port (ib_ca_top): \
        link RX (VCRC), the VL15 RX buffer, the SMI receive engine (ICRC, SMP \
        validation, DLID/LMC, directed-route rules), a Rust SMA, the SMI send \
        engine (headers, DR send rules, ICRC), the VL15 TX buffer and link TX \
        (VCRC). Traces are pcap files of raw InfiniBand packets (LRH..VCRC) with \
        the simulation cycle as timestamp."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum)]
enum Lt {
    /// LINKTYPE_INFINIBAND (247), the registered type (Wireshark 4.0 cannot read it)
    Infiniband,
    /// LINKTYPE_USER0 (147): tshark reads it with -o 'uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""'
    User0,
}

impl From<Lt> for LinkType {
    fn from(l: Lt) -> Self {
        match l {
            Lt::Infiniband => LinkType::Infiniband,
            Lt::User0 => LinkType::User0,
        }
    }
}

/// Devices `vl15 soak` can run.
#[derive(Clone, Copy, ValueEnum)]
enum SoakDevice {
    /// One CA port, ib_ca_top, at each --width
    Ca,
    /// The 8-port switch (its tiles, as the fabric runs it) at DATA_W 64 and 128
    Switch,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run the RTL regression on the built-in topology (two CA ports on one link) and print a table
    Regress {
        /// Data path width in bits: 32, 64, 128, or all
        #[arg(long, default_value = "all")]
        width: String,
        /// Run only these scenarios (repeatable); see --list
        #[arg(long)]
        scenario: Vec<String>,
        /// List the scenarios and what each proves, then exit
        #[arg(long)]
        list: bool,
        /// Write each scenario's per-direction pcaps and text trace here
        #[arg(long)]
        trace_dir: Option<PathBuf>,
        /// Link type of the pcaps written with --trace-dir
        #[arg(long, value_enum, default_value = "infiniband")]
        linktype: Lt,
    },
    /// Feed every packet of a pcap into one CA port at line rate; write what it transmits.
    ///
    /// By default the port is the Verilated RTL, cycle by cycle. With --serial
    /// it is a board (or `make board-sim`'s simulated board behind a
    /// pseudo-terminal) speaking the UART framing of docs/uart.md: packets go
    /// one at a time, the same Rust SMA answers, and the output pcap's
    /// timestamps are packet positions, not cycles.
    Replay {
        /// Input pcap: raw IB packets, LRH..VCRC (link type 247 or 147)
        input: PathBuf,
        /// Output pcap of every packet the port transmits
        #[arg(short, long)]
        output: PathBuf,
        /// Data path width in bits (32, 64, 128)
        #[arg(long, default_value_t = 64)]
        width: u32,
        /// The port's base LID (0 = none: LID-routed SMPs are dropped)
        #[arg(long, default_value_t = 0)]
        lid: u16,
        /// The port's LMC (0..7): it owns LIDs lid..lid+2^lmc-1
        #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=7))]
        lmc: u8,
        /// VL15 receive buffer depth in SMPs (1..4; default: all 4 slots)
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4))]
        depth: Option<u32>,
        /// SMA service latency in cycles
        #[arg(long, default_value_t = 8)]
        sma_latency: u64,
        /// Link type of the output pcap
        #[arg(long, value_enum, default_value = "infiniband")]
        linktype: Lt,
        /// Serial port of a vl15 board (e.g. /dev/ttyUSB1); --width, --depth
        /// and --sma-latency do not apply
        #[arg(long)]
        serial: Option<String>,
        /// Bit rate of --serial (the boards run 3 Mbaud, 8N1)
        #[arg(long, default_value_t = 3_000_000)]
        baud: u32,
        /// With --serial: the replay ends after the board is silent this long (ms)
        #[arg(long, default_value_t = 500)]
        quiet_ms: u64,
    },
    /// Print a pcap as text, one line per packet (the form the snapshots use)
    Decode {
        /// pcap file of raw IB packets
        input: PathBuf,
    },
    /// Walk a fabric of RTL switches and CAs with directed-route SMPs and print it as ibnetdiscover does.
    ///
    /// The topology file (ibnetdiscover / ibsim format; ibsim's net-examples
    /// load unchanged) becomes a fabric of Verilated devices: ib_switch_top for
    /// every switch, ib_ca_mp_top for every CA, each with the Rust SMA. An SM on
    /// one CA port walks it breadth first with DR Get(NodeInfo),
    /// Get(NodeDescription) and Get(PortInfo), every SMP processed hop by hop in
    /// the RTL, and prints the topology text ibnetdiscover prints, so the two can
    /// be diffed (run ibnetdiscover against ibsim on the same file).
    Discover {
        /// Topology file
        #[arg(long)]
        topology: PathBuf,
        /// Node id of the CA the SM runs on (default: the file's first CA)
        #[arg(long)]
        from: Option<String>,
        /// Port of that CA (default 1)
        #[arg(long)]
        port: Option<u8>,
        /// Write the topology text here instead of stdout
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Link latency in cycles
        #[arg(long, default_value_t = 4)]
        link_latency: u64,
        /// ibsim console command run on the fabric before the walk, e.g.
        /// 'Unlink "sw"[3]' (Link, Unlink, ReLink; repeatable, in order)
        #[arg(long, value_name = "COMMAND")]
        console: Vec<String>,
        /// Threads that evaluate the devices with work in a cycle (default:
        /// the machine's cores); any count gives the same run
        #[arg(long, default_value_t = default_threads(), value_parser = clap::value_parser!(u16).range(1..=256))]
        threads: u16,
        /// Data path width of every switch and CA in the fabric, in bits (64
        /// or 128): fewer beats a packet at 128
        #[arg(long, default_value_t = vl15::net::DEFAULT_DATA_W, value_parser = parse_fabric_width)]
        width: u32,
    },
    /// Serve a fabric of RTL devices over ibsim's wire protocol.
    ///
    /// Binds ibsim's abstract unix sockets (`<base>:ctl`, `<base>:out0..9`),
    /// so unmodified OpenSM and infiniband-diags run against the RTL with
    /// `LD_PRELOAD=libumad2sim.so IBSIM_SOCKNAME=<base> SIM_HOST=<node>`:
    /// every SMP they send crosses the Verilated devices hop by hop. Clients
    /// attach by node id or NodeDescription, as on ibsim: to a CA at port 1,
    /// to a switch at port 0 (its SMI's SM interface and its GMP path);
    /// SIM_HOST unset: the file's first node. QP1 GMPs cross the RTL on a
    /// data VL: PerfMgt (perfquery) is answered by each CA's and switch's
    /// PMA from its RTL counters, SA and other classes by the destination
    /// node's SM client (saquery against a running OpenSM). Runs until
    /// killed.
    Serve {
        /// Topology file (ibsim / ibnetdiscover format)
        #[arg(long)]
        topology: PathBuf,
        /// Socket base name (default: $IBSIM_SOCKNAME, else "sim")
        #[arg(long)]
        sockname: Option<String>,
        /// Link latency in cycles
        #[arg(long, default_value_t = 4)]
        link_latency: u64,
        /// Simulated cycles before a request with no response is returned
        /// to its client with status 110 (ETIMEDOUT)
        #[arg(long, default_value_t = 2_000_000)]
        timeout_cycles: u64,
        /// Threads that evaluate the devices with work in a cycle (default:
        /// the machine's cores); any count gives the same run
        #[arg(long, default_value_t = default_threads(), value_parser = clap::value_parser!(u16).range(1..=256))]
        threads: u16,
        /// Data path width of every switch and CA in the fabric, in bits (64
        /// or 128): fewer beats a packet at 128
        #[arg(long, default_value_t = vl15::net::DEFAULT_DATA_W, value_parser = parse_fabric_width)]
        width: u32,
    },
    /// Bring a fabric of RTL switches and CAs up with the built-in SM.
    ///
    /// The SM runs on one CA port and talks only through that CA's QP0 in the
    /// RTL: directed-route discovery, LIDs (respecting --lmc), min-hop routes
    /// written block by block into the switches' LFTs, then every linked port
    /// to Armed and Active. Prints a summary: nodes, ports Active, LIDs, SMPs,
    /// simulated cycles, wall time.
    Sim {
        /// Topology file (ibnetdiscover / ibsim format)
        #[arg(long, required_unless_present = "scenario")]
        topology: Option<PathBuf>,
        /// Scenario file (TOML: topology, SM, timed events such as
        /// 'Unlink "sw"[3]'); see tests/scenarios/ and tb/src/simscenario.rs
        #[arg(long, conflicts_with = "topology")]
        scenario: Option<PathBuf>,
        /// Node id of the CA the SM runs on (default: the file's first CA)
        #[arg(long)]
        sm: Option<String>,
        /// Port of that CA
        #[arg(long, default_value_t = 1)]
        sm_port: u8,
        /// LMC of every CA port (0..7)
        #[arg(long, default_value_t = 0)]
        lmc: u8,
        /// M_Key the SM uses in every SMP and sets on every port it brings
        /// up (decimal or 0x-hex)
        #[arg(long, value_parser = vl15::simrun::parse_key, default_value = "0")]
        m_key: u64,
        /// M_KeyProtectBits the SM sets (0..3)
        #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=3))]
        m_key_protect: u8,
        /// M_KeyLeasePeriod the SM sets (seconds; 0 = never expires)
        #[arg(long, default_value_t = 0)]
        m_key_lease: u16,
        /// The SM's SMInfo.SM_Key (decimal or 0x-hex)
        #[arg(long, value_parser = vl15::simrun::parse_key, default_value = "0")]
        sm_key: u64,
        /// SMPs outstanding at once (OpenSM --maxsmps)
        #[arg(long, default_value_t = 4)]
        max_smps: usize,
        /// Transaction timeout in cycles
        #[arg(long, default_value_t = 200_000)]
        timeout: u64,
        /// Link latency in cycles
        #[arg(long, default_value_t = 4)]
        link_latency: u64,
        /// Threads that evaluate the devices with work in a cycle (default:
        /// the machine's cores); any count gives the same run
        #[arg(long, default_value_t = default_threads(), value_parser = clap::value_parser!(u16).range(1..=256))]
        threads: u16,
        /// Data path width of every switch and CA in the fabric, in bits (64
        /// or 128): fewer beats a packet at 128
        #[arg(long, default_value_t = vl15::net::DEFAULT_DATA_W, value_parser = parse_fabric_width)]
        width: u32,
        /// Write every node's GUID, description, type, ports (LID, LMC,
        /// PortState, neighbour) and every switch's LFT, read from the RTL, as JSON
        #[arg(long, value_name = "OUT.json")]
        dump_state: Option<PathBuf>,
        /// Print the SM's log (errors, traps, sweeps) to stderr
        #[arg(long)]
        verbose: bool,
    },
    /// Write a two-level fat tree of k-port switches as a topology file (k = 36: 702 nodes)
    Fattree {
        /// Ports per switch (even, 2..64)
        #[arg(long, default_value_t = 36)]
        ports: u8,
        /// Leaf switches (even, dividing --ports; default --ports): fewer
        /// leaves, leaves/2 spines joined by --ports/leaves parallel links
        /// (36 ports, 18 leaves: 351 nodes)
        #[arg(long)]
        leaves: Option<u8>,
        /// Output file (default: stdout)
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Good and faulted packets at line rate through the RTL, checked against the reference model.
    ///
    /// A seeded generator mixes good SMPs/GMPs with every fault class
    /// that applies to the device (bad CRCs, malformed headers, wrong
    /// DLIDs, directed-route errors, PortState Down, VL15 overflow, wire
    /// backpressure storms, reset and link down in the middle of a packet),
    /// back to back, with idle and backpressure patterns on every stream. A
    /// scoreboard checks every output packet byte for byte against the
    /// reference model (tb/src/refmodel) and, at each checkpoint, the
    /// drain time and every counter. Exit status 1 on any mismatch.
    Soak {
        /// The device under test
        #[arg(long, value_enum, default_value = "ca")]
        device: SoakDevice,
        /// Data path width in bits: 32, 64, 128, or all (the switch: 64,
        /// 128 or all)
        #[arg(long, default_value = "all")]
        width: String,
        /// Packets handed to the device per width
        #[arg(long, default_value_t = 1_000_000)]
        packets: u64,
        /// Seed of the generator and of every stream pattern
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Percent of packets that are faults
        #[arg(long, default_value_t = 25, value_parser = clap::value_parser!(u32).range(0..=100))]
        fault_percent: u32,
        /// Only these fault classes (repeatable; default all); see --list
        #[arg(long)]
        class: Vec<String>,
        /// List the fault classes with their expected disposition, then exit
        #[arg(long)]
        list: bool,
        /// Drain and check the counters every this many packets
        #[arg(long, default_value_t = 2000)]
        checkpoint: u64,
    },
    /// Fuzz the parsers of untrusted input for a time bound (see tb/src/fuzz.rs).
    ///
    /// Each target runs for --seconds: structure-aware mutations of valid
    /// inputs, checked for panics, hangs, errors without context and broken
    /// round trips. Prints cases per target and the seed; a failing case
    /// prints its case seed (replay it with --case-seed) and input. Exit 1
    /// on any failure.
    Fuzz {
        /// decode, pcap, topology, ibsim, console, sma, serve (a hostile
        /// client storm against vl15 serve, then a well-behaved client),
        /// or all (repeatable)
        #[arg(long, default_value = "all")]
        target: Vec<String>,
        /// Seconds per target
        #[arg(long, default_value_t = 10)]
        seconds: u64,
        /// Seed of the run, decimal or 0x hex (default: from the clock;
        /// printed either way)
        #[arg(long, value_parser = parse_u64)]
        seed: Option<u64>,
        /// At most this many cases per target
        #[arg(long, default_value_t = u64::MAX)]
        max_cases: u64,
        /// A case running longer than this many seconds is a hang
        #[arg(long, default_value_t = 10)]
        hang_seconds: u64,
        /// Replay one case of one --target by its case seed and print its input
        #[arg(long, value_parser = parse_u64)]
        case_seed: Option<u64>,
    },
    /// Latency, throughput and cxx-vs-C++ simulation speed, side by side
    Bench {
        /// Cycles for the simulation-speed comparison
        #[arg(long, default_value_t = 2_000_000)]
        cycles: u64,
        /// Leave out the fabric benchmarks (702-node fat tree, idle cost, memory)
        #[arg(long)]
        skip_fabric: bool,
        /// Leave out `opensm -o` on vl15 serve vs ibsim (351- and 702-node
        /// fat trees, minutes)
        #[arg(long)]
        skip_serve: bool,
        /// Fat trees of the serve benchmark, as PORTSxLEAVES (36x18: 351
        /// nodes, 36x36: 702 nodes, 64x64: 96 switches and 2,048 CAs)
        #[arg(long, value_delimiter = ',', default_value = "36x18,36x36,64x64", value_parser = parse_tree)]
        serve_trees: Vec<(u8, u8)>,
    },
}

/// `--width` of the fabric verbs: a width the fabric's models are built at.
fn parse_fabric_width(s: &str) -> std::result::Result<u32, String> {
    match s.parse::<u32>() {
        Ok(w) if vl15_bindings::DEV_DATA_WIDTHS.contains(&w) => Ok(w),
        _ => Err(format!(
            "the fabric's models are built at DataW 64 and 128, not {s:?}"
        )),
    }
}

/// The machine's cores (the default of --threads).
fn default_threads() -> u16 {
    std::thread::available_parallelism()
        .map_or(1, |n| u16::try_from(n.get()).unwrap_or(256).min(256))
}

/// A fat tree as PORTSxLEAVES, e.g. 36x18.
fn parse_tree(s: &str) -> Result<(u8, u8), String> {
    let (k, l) = s
        .split_once('x')
        .ok_or_else(|| format!("{s:?}: want PORTSxLEAVES, e.g. 36x18"))?;
    let num = |v: &str| v.parse::<u8>().map_err(|e| format!("{s:?}: {v:?}: {e}"));
    Ok((num(k)?, num(l)?))
}

/// A number in decimal or 0x hex (seeds are printed in hex).
fn parse_u64(s: &str) -> Result<u64, String> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    }
    .map_err(|e| format!("{s:?}: {e}"))
}

fn fuzz(
    targets: &[String],
    seconds: u64,
    seed: Option<u64>,
    max_cases: u64,
    hang_seconds: u64,
    case_seed: Option<u64>,
) -> Result<bool> {
    use vl15::fuzz::{self, Target};
    let mut list: Vec<String> = Vec::new();
    for t in targets {
        if t == "all" {
            list.extend(Target::ALL.iter().map(|t| t.name().to_string()));
            list.push("serve".into());
        } else if t == "serve" || t.parse::<Target>().is_ok() {
            list.push(t.clone());
        } else {
            let names: Vec<_> = Target::ALL.iter().map(|t| t.name()).collect();
            bail!(
                "unknown fuzz target {t:?} (targets: {}, serve, all)",
                names.join(", ")
            );
        }
    }
    if let Some(cs) = case_seed {
        let [t] = list.as_slice() else {
            bail!("--case-seed replays one case of one --target");
        };
        let input = fuzz::replay(t.parse()?, cs)?;
        outln!(
            "case {cs:#x} of {t} passes; input: {}",
            fuzz::hex(&input, 4096)
        );
        return Ok(true);
    }
    let seed = seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    outln!("fuzz: seed {seed:#018x}, {seconds} s per target");
    let limits = fuzz::Limits {
        time: std::time::Duration::from_secs(seconds),
        max_cases,
        hang: std::time::Duration::from_secs(hang_seconds),
        stop_on_failure: false,
    };
    let mut ok = true;
    let mut total = 0u64;
    for t in &list {
        if t == "serve" {
            let r = vl15::hostile::storm_run(seed, std::time::Duration::from_secs(seconds))?;
            outln!("{}", r.summary());
            ok &= r.ok();
            total += r.sent;
            continue;
        }
        let target: Target = t.parse()?;
        let r = fuzz::run(target, seed, limits)?;
        outln!("{}", r.summary());
        total += r.cases;
        for f in r.failures.iter().take(10) {
            outln!(
                "  FAIL case seed {:#018x}: {}\n    input: {}\n    replay: vl15 fuzz --target {} --case-seed {:#x}",
                f.case_seed,
                f.what,
                fuzz::hex(&f.input, 512),
                target,
                f.case_seed
            );
        }
        ok &= r.failures.is_empty();
    }
    outln!(
        "fuzz: {} targets, {total} cases/datagrams, {}",
        list.len(),
        if ok { "no failures" } else { "FAILURES" }
    );
    Ok(ok)
}

fn widths(s: &str) -> Result<Vec<u32>> {
    match s {
        "all" => Ok(vec![32, 64, 128]),
        "32" | "64" | "128" => Ok(vec![s.parse()?]),
        _ => bail!("--width must be 32, 64, 128 or all, not {s:?}"),
    }
}

/// `vl15 soak --device switch`: the switch's own generator and scoreboard
/// (`refmodel::switch`), which has its own classes, at DATA_W 64 and 128.
fn soak_switch(
    width: &str,
    packets: u64,
    seed: u64,
    fault_percent: u32,
    class: &[String],
    checkpoint: u64,
) -> Result<bool> {
    use vl15::refmodel::switch;
    let ws: Vec<u32> = match width {
        "all" => vl15_bindings::DEV_DATA_WIDTHS.to_vec(),
        "64" | "128" => vec![width.parse()?],
        _ => bail!(
            "the switch is built at DATA_W 64 and 128 (--width 64, 128 or all), not {width:?}"
        ),
    };
    if !class.is_empty() {
        bail!("--class selects CA fault classes; the switch soak runs every switch class");
    }
    let mut pass = true;
    for w in ws {
        let opt = switch::SoakOptions {
            phase_packets: checkpoint.max(1),
            fault_percent,
            data_w: w,
            ..switch::SoakOptions::default()
        };
        let r = switch::soak(seed, packets, &opt)
            .with_context(|| format!("switch soak at DATA_W {w}"))?;
        out!("{r}");
        pass &= r.mismatches == 0;
    }
    Ok(pass)
}

fn soak(
    device: SoakDevice,
    width: &str,
    packets: u64,
    seed: u64,
    fault_percent: u32,
    class: &[String],
    checkpoint: u64,
) -> Result<bool> {
    use vl15::faults::{self, FaultClass};
    if let SoakDevice::Switch = device {
        return soak_switch(width, packets, seed, fault_percent, class, checkpoint);
    }
    let classes = class
        .iter()
        .map(|n| {
            FaultClass::from_name(n)
                .with_context(|| format!("no fault class {n:?} (vl15 soak --list)"))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut pass = true;
    for w in widths(width)? {
        let mut o = faults::SoakOpts::new(w, packets, seed);
        o.fault_percent = fault_percent;
        o.classes = classes.clone();
        o.checkpoint = checkpoint.max(1);
        let r = match faults::soak(&o) {
            Ok(r) => r,
            Err(e) => {
                outln!("soak ca DATA_W {w}: FAIL: {e:#}");
                pass = false;
                continue;
            }
        };
        let faulted: u64 = r.faults.values().sum();
        outln!(
            "soak ca DATA_W {w} seed {seed}: {} packets ({} good, {faulted} faults), {} mismatches, max drain {} cycles (bound {}), {} cycles, {:.1} s wall ({:.0} cycles/s)",
            r.packets,
            r.good,
            r.mismatches,
            r.max_drain,
            r.drain_bound,
            r.cycles,
            r.wall_s,
            r.cycles as f64 / r.wall_s.max(1e-9)
        );
        let s = &r.stats;
        outln!(
            "  delivered: {} to SMA, {} to SM, {} to data RX, {} on the wire; VL15 buffer full for the whole arrival {}, full or not depending on the cycle {}; {} wire packets lost to link down, {} expectations to resets",
            s.to_sma, s.to_sm, s.to_drx, s.wire_tx, s.certain_full, s.ambiguous_full, s.tx_gated, s.lost_to_reset
        );
        outln!("  faults by class:");
        for (k, v) in &r.faults {
            outln!("    {k:<28} {v}");
        }
        outln!("  receive verdicts (the check that rejected, or accept):");
        for (k, v) in &s.by_verdict {
            outln!("    {k:<28} {v}");
        }
        for e in &r.errors {
            outln!("  MISMATCH {e}");
        }
        pass &= r.mismatches == 0;
    }
    Ok(pass)
}

fn regress(
    width: &str,
    names: &[String],
    trace_dir: Option<PathBuf>,
    lt: LinkType,
) -> Result<bool> {
    let out = scenario::regress(names, &widths(width)?)?;
    outln!(
        "{:<18} {:>5} {:<6} {:>8} {:>5} {:>8} {:>10} {:>10}  detail",
        "scenario",
        "width",
        "result",
        "cycles",
        "SMPs",
        "rx->SMA",
        "SMA->SQbuf",
        "SMA->wire"
    );
    let fmt = |v: Option<u64>| v.map_or("-".to_string(), |x| x.to_string());
    let mut ok = true;
    for o in &out {
        ok &= o.pass;
        outln!(
            "{:<18} {:>5} {:<6} {:>8} {:>5} {:>8} {:>10} {:>10}  {}",
            o.scenario,
            o.width,
            if o.pass { "PASS" } else { "FAIL" },
            o.cycles,
            o.smps,
            fmt(o.rx_latency),
            fmt(o.sq_latency),
            fmt(o.tx_latency),
            o.detail
        );
        if let Some(dir) = &trace_dir {
            let stem = format!("{}_w{}", o.scenario, o.width);
            trace::write_pcaps(&o.trace, dir, &stem, lt)?;
            std::fs::write(dir.join(format!("{stem}.txt")), trace::text(&o.trace))?;
        }
    }
    let passed = out.iter().filter(|o| o.pass).count();
    outln!("{passed} passed, {} failed", out.len() - passed);
    Ok(ok)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let res: Result<bool> =
        match cli.cmd {
            Cmd::Regress {
                width,
                scenario: names,
                list,
                trace_dir,
                linktype,
            } => {
                if list {
                    for s in scenario::SCENARIOS {
                        outln!("{:<18} {}", s.name, s.proves);
                    }
                    Ok(true)
                } else {
                    regress(&width, &names, trace_dir, linktype.into())
                }
            }
            Cmd::Replay {
                input,
                output,
                width,
                lid,
                lmc,
                depth,
                sma_latency,
                linktype,
                serial,
                baud,
                quiet_ms,
            } => {
                if let Some(path) = serial {
                    let o = vl15::board::SerialOptions {
                        lid,
                        lmc,
                        quiet: std::time::Duration::from_millis(quiet_ms),
                        linktype: linktype.into(),
                    };
                    let run = vl15::board::open_serial(&path, baud).and_then(|line| {
                        let mut port = vl15::board::BoardPort::new(line);
                        vl15::board::replay_serial(&mut port, &input, &output, &o)
                    });
                    return match run {
                        Ok(report) => {
                            print!("{report}");
                            ExitCode::SUCCESS
                        }
                        Err(e) if e.is::<replay::InputError>() => {
                            eprintln!("vl15 replay: {e:#}");
                            ExitCode::from(2)
                        }
                        Err(e) => {
                            eprintln!("vl15 replay --serial: {e:#}");
                            ExitCode::FAILURE
                        }
                    };
                }
                let opts = replay::Options {
                    width,
                    lid,
                    lmc,
                    depth,
                    sma_latency,
                    linktype: linktype.into(),
                };
                match replay::replay(&input, &output, &opts) {
                    Ok(report) => {
                        out!("{report}");
                        Ok(true)
                    }
                    Err(e) if e.is::<replay::InputError>() => {
                        eprintln!("vl15 replay: {e:#}");
                        return ExitCode::from(2);
                    }
                    Err(e) => Err(e),
                }
            }
            Cmd::Serve {
                topology,
                sockname,
                link_latency,
                timeout_cycles,
                threads,
                width,
            } => vl15::serve::serve_file(
                &topology,
                sockname,
                vl15::net::NetOptions {
                    link_latency,
                    threads: usize::from(threads),
                    data_w: width,
                    ..Default::default()
                },
                timeout_cycles,
            )
            .map(|()| true),
            Cmd::Discover {
                topology,
                from,
                port,
                output,
                link_latency,
                console,
                threads,
                width,
            } => {
                let opts = vl15::net::NetOptions {
                    link_latency,
                    threads: usize::from(threads),
                    data_w: width,
                    ..Default::default()
                };
                vl15::net::discover_topology(&topology, from.as_deref(), port, &console, opts)
                    .and_then(|(text, net)| {
                        match output {
                            Some(p) => std::fs::write(&p, &text)
                                .with_context(|| format!("writing {}", p.display()))?,
                            None => out!("{text}"),
                        }
                        eprintln!(
                            "discover: {} nodes, {} cycles, {} device evaluations",
                            net.devs.len(),
                            net.cycle,
                            net.stats.ticks
                        );
                        Ok(true)
                    })
            }
            Cmd::Sim {
                scenario: Some(sc), ..
            } => vl15::simscenario::run(&sc).map(|(r, all_active)| {
                out!("{r}");
                all_active
            }),
            Cmd::Sim {
                topology: Some(topology),
                sm,
                sm_port,
                lmc,
                m_key,
                m_key_protect,
                m_key_lease,
                sm_key,
                max_smps,
                timeout,
                link_latency,
                threads,
                width,
                dump_state,
                verbose,
                scenario: None,
            } => {
                let mut opts = vl15::simrun::SimOptions {
                    sm_node: sm,
                    sm_port,
                    ..Default::default()
                };
                opts.sm.lmc = lmc;
                opts.sm.tx.m_key = m_key;
                opts.sm.m_key_protect = m_key_protect;
                opts.sm.m_key_lease = m_key_lease;
                opts.sm.sm_key = sm_key;
                opts.sm.tx.max_outstanding = max_smps;
                opts.sm.tx.timeout = timeout;
                opts.net.link_latency = link_latency;
                opts.net.threads = usize::from(threads);
                opts.net.data_w = width;
                vl15::simrun::bring_up(&topology, &opts).and_then(|(mut net, sm, summary)| {
                    if verbose {
                        for l in &sm.log {
                            eprintln!("sm: {l}");
                        }
                    }
                    out!("{}", summary.text());
                    if let Some(p) = dump_state {
                        let dump = vl15::simrun::dump_state(&mut net)?;
                        let text = serde_json::to_string_pretty(&dump)?;
                        std::fs::write(&p, text + "\n")
                            .with_context(|| format!("writing {}", p.display()))?;
                    }
                    Ok(summary.active_ports == summary.linked_ports)
                })
            }
            Cmd::Sim { .. } => Err(anyhow::anyhow!("give --topology or --scenario")),
            Cmd::Fattree {
                ports,
                leaves,
                output,
            } => vl15::fattree::two_level_leaves(ports, leaves.unwrap_or(ports)).and_then(|t| {
                match output {
                    Some(p) => std::fs::write(&p, &t)
                        .with_context(|| format!("writing {}", p.display()))?,
                    None => out!("{t}"),
                }
                Ok(true)
            }),
            Cmd::Decode { input } => vl15::decode::decode_pcap(&input)
                .with_context(|| format!("decoding {}", input.display()))
                .map(|lines| {
                    for l in lines {
                        outln!("{l}");
                    }
                    true
                }),
            Cmd::Soak {
                device,
                width,
                packets,
                seed,
                fault_percent,
                class,
                list,
                checkpoint,
            } => {
                if list {
                    match device {
                        SoakDevice::Ca => {
                            for c in vl15::faults::FaultClass::ALL {
                                outln!("{:<28} {:?}", c.name(), c.expect());
                            }
                        }
                        SoakDevice::Switch => {
                            use vl15::refmodel::switch::FaultClass;
                            for c in FaultClass::GOOD.iter().chain(&FaultClass::FAULTS) {
                                outln!(
                                    "{:<28} {}",
                                    c.name(),
                                    if c.is_good() { "good" } else { "fault" }
                                );
                            }
                        }
                    }
                    Ok(true)
                } else {
                    soak(
                        device,
                        &width,
                        packets,
                        seed,
                        fault_percent,
                        &class,
                        checkpoint,
                    )
                }
            }
            Cmd::Fuzz {
                target,
                seconds,
                seed,
                max_cases,
                hang_seconds,
                case_seed,
            } => fuzz(&target, seconds, seed, max_cases, hang_seconds, case_seed),
            Cmd::Bench {
                cycles,
                skip_fabric,
                skip_serve,
                serve_trees,
            } => bench::run(cycles).and_then(|r| {
                out!("{r}");
                if !skip_fabric {
                    out!(
                        "\n== switch radix ==\n{}",
                        vl15::netbench::radix_report(cycles.min(200_000))?
                    );
                    out!("\n== fabric ==\n{}", vl15::netbench::run()?);
                }
                if !skip_serve {
                    out!(
                        "\n== opensm -o on vl15 serve vs ibsim ==\n{}",
                        vl15::netbench::serve_report(&serve_trees)?
                    );
                }
                Ok(true)
            }),
        };
    match res {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("vl15: {e:#}");
            // Bad input: a pcap or topology file that cannot be used.
            ExitCode::from(
                if e.is::<vl15::pcap::PcapError>() || e.is::<vl15::topology::TopologyError>() {
                    2
                } else {
                    1
                },
            )
        }
    }
}
