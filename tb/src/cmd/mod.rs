//! One module per verb of the `vl15` CLI: each holds the verb's arguments
//! (`Args`, flattened into `Cmd` in main.rs) and runs it. What the verbs
//! share is here.

use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::ValueEnum;
use vl15::proto::pcap::LinkType;

pub mod bench;
pub mod check_rtl;
pub mod completions;
pub mod coverage;
pub mod decode;
pub mod discover;
pub mod fattree;
pub mod fuzz;
pub mod regress;
pub mod replay;
pub mod routes;
pub mod serve;
pub mod sim;
pub mod soak;

/// Link type of the pcaps a verb writes.
#[derive(Clone, Copy, ValueEnum)]
pub enum Lt {
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

/// `--width` of the fabric verbs: a width the fabric's models are built at.
pub fn parse_fabric_width(s: &str) -> std::result::Result<u32, String> {
    match s.parse::<u32>() {
        Ok(w) if vl15_bindings::DEV_DATA_WIDTHS.contains(&w) => Ok(w),
        _ => Err(format!(
            "the fabric's models are built at DataW 64 and 128, not {s:?}"
        )),
    }
}

/// The machine's cores (the default of --threads).
pub fn default_threads() -> u16 {
    std::thread::available_parallelism()
        .map_or(1, |n| u16::try_from(n.get()).unwrap_or(256).min(256))
}

/// A fat tree as PORTSxLEAVES, e.g. 36x18.
pub fn parse_tree(s: &str) -> Result<vl15::proto::fattree::Tree, String> {
    use vl15::proto::fattree::Tree;
    let num = |v: &str| v.parse::<u8>().map_err(|e| format!("{s:?}: {v:?}: {e}"));
    if let Some(k) = s.strip_suffix("L3") {
        return Ok(Tree::Three { k: num(k)? });
    }
    let (k, l) = s
        .split_once('x')
        .ok_or_else(|| format!("{s:?}: want PORTSxLEAVES (36x18) or PORTSL3 (36L3)"))?;
    Ok(Tree::Two {
        k: num(k)?,
        leaves: num(l)?,
    })
}

/// A number in decimal or 0x hex (seeds are printed in hex).
pub fn parse_u64(s: &str) -> Result<u64, String> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    }
    .map_err(|e| format!("{s:?}: {e}"))
}

/// `--width` of `replay`: a width the CA port is built at.
pub fn parse_ca_width(s: &str) -> std::result::Result<u32, String> {
    match s {
        "32" | "64" | "128" => Ok(s.parse().unwrap_or_default()),
        _ => Err(format!(
            "the CA port is built at DataW 32, 64 and 128, not {s:?}"
        )),
    }
}

/// `--width` of the CA-port verbs: 32, 64, 128 or all.
pub fn widths(s: &str) -> Result<Vec<u32>> {
    match s {
        "all" => Ok(vec![32, 64, 128]),
        "32" | "64" | "128" => Ok(vec![s.parse()?]),
        _ => usage(&format!("--width {s}: give 32, 64, 128 or all")),
    }
}

/// Report a usage error found after parsing, as [`failed`] reports bad
/// input: one line `vl15: <msg>`, exit status 2.
pub fn usage(msg: &str) -> ! {
    eprintln!("vl15: {}", one_line(msg));
    std::process::exit(i32::from(EXIT_BAD_INPUT))
}

/// `--width` (32, 64, 128 or all) of a verb that runs CA port `model`,
/// named `name` in messages: "all" is every width the model is built at;
/// one it is not built at is a usage error.
pub fn model_widths(
    width: &str,
    name: &str,
    model: vl15::model::device::CaPortModel,
) -> Result<Vec<u32>> {
    let mut ws = widths(width)?;
    if width == "all" {
        ws.retain(|w| model.widths().contains(w));
    } else if let Some(w) = ws.iter().find(|w| !model.widths().contains(w)) {
        usage(&format!(
            "--width {w}: {name} is built at DATA_W {:?}",
            model.widths()
        ));
    }
    Ok(ws)
}

/// The fabric options of `sim`, `discover` and `serve`.
#[derive(clap::Args)]
pub struct FabricArgs {
    /// Link latency in cycles
    #[arg(long, default_value_t = 4)]
    link_latency: u64,
    /// Threads that evaluate the devices with work in a cycle (default:
    /// the machine's cores); any count gives the same run
    #[arg(long, default_value_t = default_threads(), value_parser = clap::value_parser!(u16).range(1..=256))]
    threads: u16,
    /// Data path width of every switch and CA in the fabric, in bits (64
    /// or 128): fewer beats a packet at 128
    #[arg(long, default_value_t = vl15::model::net::DEFAULT_DATA_W, value_parser = parse_fabric_width)]
    width: u32,
    /// One-port CAs are ib_ca_top, the CA port itself, instead of
    /// ib_ca_mp_top with one port (the same port behind the port-tag mux
    /// and demux)
    #[arg(long)]
    ca_top: bool,
    /// The model every device runs as: rtl (the Verilated RTL), twin (its
    /// Rust twin, cycle-exact against the RTL and far cheaper), or
    /// lockstep (both, every output compared in every cycle: the run fails
    /// at the first difference)
    #[arg(long, default_value = "rtl", value_name = "rtl|twin|lockstep")]
    fidelity: vl15::model::twin::Fidelity,
    /// Devices that run as RTL whatever --fidelity says: node ids or
    /// NodeDescriptions, comma-separated, `*` standing for any run of
    /// characters ("sw-leaf-3,H-1*")
    #[arg(long, value_name = "NODES", value_delimiter = ',')]
    rtl: Vec<String>,
    /// Devices that run as twins whatever --fidelity says (as --rtl)
    #[arg(long, value_name = "NODES", value_delimiter = ',')]
    twin: Vec<String>,
    /// Step every twin in every cycle it has work, as the RTL is, instead
    /// of letting it sleep through the cycles in which it only streams
    /// and putting whole packets on its cables ahead: the same run, at
    /// the per-cycle cost (to compare against)
    #[arg(long)]
    every_cycle: bool,
    /// Record what the fabric gave each twin and what it gave back into
    /// DIR (manifest.json, record.bin), for `vl15 check-rtl DIR` to replay
    /// through the RTL
    #[arg(long, value_name = "DIR")]
    record: Option<std::path::PathBuf>,
    /// At the end of the run (for serve: when it stops, on `quit`, SIGINT
    /// or SIGTERM), replay every twin through its RTL on all cores and
    /// compare (`vl15 check-rtl`); exit 1 on a mismatch. Records to a
    /// temporary directory unless --record names one
    #[arg(long)]
    check_rtl: bool,
    #[command(flatten)]
    pub pcap: CaptureArgs,
}

/// The recording of `--record` / `--check-rtl` of a run.
pub struct RecordRun {
    rec: Option<std::sync::Arc<vl15::model::record::Recording>>,
    /// The temporary directory of --check-rtl without --record, removed
    /// when the run is done.
    tmp: Option<tempfile::TempDir>,
    check: bool,
}

impl RecordRun {
    /// Fabric options that record, where the run records.
    pub fn options(&self, mut o: vl15::model::net::NetOptions) -> vl15::model::net::NetOptions {
        o.record = self.rec.clone();
        o
    }

    /// After the run of `net`: the recording finished, and checked with
    /// --check-rtl. False: a mismatch.
    pub fn finish(&self, net: &mut vl15::agents::node_sma::Net) -> Result<bool> {
        match net.finish_record()? {
            Some(dir) => self.done(&dir),
            None => Ok(true),
        }
    }

    /// The recording in `dir` written: say so, and check it with
    /// --check-rtl.
    pub fn done(&self, dir: &std::path::Path) -> Result<bool> {
        let m = vl15::check::rtl_replay::open(dir)?;
        if self.tmp.is_none() {
            eprintln!(
                "record: {} twin(s) recorded into {} ({} bytes); check with: vl15 check-rtl {}",
                m.devices.len(),
                dir.display(),
                m.data_bytes,
                dir.display()
            );
        }
        if m.devices.is_empty() {
            eprintln!("record: no device runs as a twin: nothing to check against the RTL");
        }
        if !self.check {
            return Ok(true);
        }
        let opts = vl15::check::rtl_replay::CheckOptions {
            jobs: usize::from(default_threads()),
            ..Default::default()
        };
        let r = vl15::check::rtl_replay::check(dir, &opts)?;
        for l in r.text().lines() {
            eprintln!("check-rtl: {l}");
        }
        Ok(r.ok())
    }
}

impl FabricArgs {
    /// The recording of --record and --check-rtl, started.
    pub fn recording(&self) -> Result<RecordRun> {
        let (dir, tmp) = match (&self.record, self.check_rtl) {
            (Some(d), _) => (Some(d.clone()), None),
            (None, true) => {
                let t = tempfile::Builder::new()
                    .prefix("vl15-record-")
                    .tempdir()
                    .context("--check-rtl: a temporary directory for the recording")?;
                (Some(t.path().to_path_buf()), Some(t))
            }
            (None, false) => (None, None),
        };
        let rec = match &dir {
            Some(d) => Some(
                vl15::model::record::Recording::create(d)
                    .map_err(|e| vl15::proto::InputError(format!("{e:#}")))?,
            ),
            None => None,
        };
        Ok(RecordRun {
            rec,
            tmp,
            check: self.check_rtl,
        })
    }

    pub fn net_options(&self) -> vl15::model::net::NetOptions {
        vl15::model::net::NetOptions {
            link_latency: self.link_latency,
            threads: usize::from(self.threads),
            data_w: self.width,
            ca_top: self.ca_top,
            pcap: self.pcap.target(),
            wave: self.pcap.wave.clone(),
            fidelity: vl15::model::twin::FidelityChoice {
                default: self.fidelity,
                rtl: self.rtl.clone(),
                twin: self.twin.clone(),
            },
            every_cycle: self.every_cycle,
            ..Default::default()
        }
    }
}

/// `--pcap` and `--wave` of every verb that runs RTL.
#[derive(clap::Args)]
pub struct CaptureArgs {
    /// Write every packet on every link to FILE as pcapng, as the run goes:
    /// one interface per device port ("node[port]"), inbound and outbound
    /// in each packet's flags, the cycle as the timestamp (1 cycle = 1 µs)
    #[arg(long, value_name = "FILE")]
    pub pcap: Option<std::path::PathBuf>,
    /// Link type of the --pcap file: user0 is what the tshark of Debian 12
    /// reads (with the user-DLT setting printed after the run)
    #[arg(long, value_enum, default_value = "user0", requires = "pcap")]
    pub pcap_linktype: Lt,
    /// Dump every signal of every device into DIR, one FST file per device
    /// named after it (GTKWave, Surfer), listed at the end
    #[arg(long, value_name = "DIR")]
    pub wave: Option<std::path::PathBuf>,
}

impl CaptureArgs {
    pub fn target(&self) -> Option<(std::path::PathBuf, LinkType)> {
        self.pcap.clone().map(|p| (p, self.pcap_linktype.into()))
    }

    /// The --pcap file, created.
    pub fn trace_file(&self) -> Result<Option<vl15::proto::pcap::TraceFile>> {
        Ok(match self.target() {
            Some((p, lt)) => Some(vl15::proto::pcap::TraceFile::create(p, lt)?),
            None => None,
        })
    }

    /// The --wave directory, created.
    pub fn waves(&self) -> Result<Option<vl15::model::trace::Waves>> {
        self.wave
            .as_deref()
            .map(vl15::model::trace::Waves::new)
            .transpose()
    }
}

/// Say on stderr which waveform files a run wrote.
pub fn waves_done(w: Option<&vl15::model::trace::Waves>) {
    if let Some(w) = w {
        eprintln!("{}", w.summary());
    }
}

/// Say on stderr what went into a --pcap trace and how to read it.
pub fn pcap_done(log: Option<vl15::proto::pcap::TraceFile>) {
    if let Some(log) = log {
        eprintln!("{}", log.summary());
    }
}

/// Exit status of a run that ran and failed its check (a mismatch, a
/// fabric that did not come up, a simulation that went wrong).
pub const EXIT_FAILED: u8 = 1;
/// Exit status of input that cannot be used: an argument, a file named by
/// one (missing, unreadable, malformed), an output path that cannot be
/// written.
pub const EXIT_BAD_INPUT: u8 = 2;

/// The exit codes, as `vl15 --help` ends.
pub const EXIT_CODES_HELP: &str = "Exit status: 0 success; 1 a run that failed its check \
    (a mismatch, a fabric that did not come up, a failure in the simulation); 2 bad \
    input or usage (an argument, a file that cannot be read or parsed, an output that \
    cannot be written). Errors are one line on stderr, starting with \"vl15: \"; an error \
    about a file names it, and the line where there is one. See docs/cli.md.";

/// Whether `e` is about input the user gave (exit status 2): a pcap or
/// topology file, an [`InputError`](vl15::proto::InputError) (a scenario
/// file, an argument checked at run time), anywhere in its chain.
pub fn is_bad_input(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.is::<vl15::proto::pcap::PcapError>()
            || c.is::<vl15::proto::topology::TopologyError>()
            || c.is::<vl15::proto::state::StateError>()
            || c.is::<vl15::proto::InputError>()
    })
}

/// `msg` on one line: line breaks and the indentation after them become
/// one space (a safety net; messages are written as one line).
pub fn one_line(msg: &str) -> String {
    msg.split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The exit status of a verb that failed with `e`, reported on stderr as
/// one line `vl15: …`: 2 for input that cannot be used, else 1.
pub fn failed(e: &anyhow::Error) -> ExitCode {
    eprintln!("vl15: {}", one_line(&format!("{e:#}")));
    ExitCode::from(if is_bad_input(e) {
        EXIT_BAD_INPUT
    } else {
        EXIT_FAILED
    })
}

/// A clap error (bad arguments) as one line `vl15: …`, exit status 2;
/// `--help` and `--version` print as clap prints them, exit status 0.
pub fn clap_failed(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        // `vl15` or `vl15 <verb>` with nothing to do: the help, status 2.
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            return ExitCode::from(EXIT_BAD_INPUT);
        }
        _ => {}
    }
    // clap's text: "error: <what>", maybe a list of arguments and a
    // "tip:", then "Usage: …" and "For more information, try '--help'.".
    let text = e.render().to_string();
    let mut parts: Vec<String> = Vec::new();
    for para in text.split("\n\n") {
        let p = para.trim();
        if p.starts_with("Usage:") || p.starts_with("For more information") {
            continue;
        }
        parts.push(one_line(p.strip_prefix("error: ").unwrap_or(p)));
    }
    eprintln!("vl15: {} (see --help)", parts.join("; "));
    ExitCode::from(EXIT_BAD_INPUT)
}

/// A LID argument: a unicast LID, 1..=0xBFFF (decimal or 0x hex), or 0
/// (each argument's help says what 0 means there). Multicast LIDs (0xC000..=0xFFFE) and
/// the permissive LID 0xFFFF address no port.
pub fn parse_lid(s: &str) -> Result<u16, String> {
    let v = parse_u64(s)?;
    match v {
        0..=0xBFFF => Ok(v as u16),
        0xC000..=0xFFFE => Err(format!(
            "{v:#06x} is a multicast LID (0xc000..0xfffe); a port's LID is unicast, 1..0xbfff"
        )),
        0xFFFF => {
            Err("0xffff is the permissive LID; a port's LID is unicast, 1..0xbfff".to_string())
        }
        _ => Err(format!(
            "{v} does not fit a 16-bit LID; a port's LID is 1..0xbfff"
        )),
    }
}

/// `parse_count` for a `usize` argument.
pub fn parse_count_usize(s: &str) -> Result<usize, String> {
    usize::try_from(parse_count(s)?).map_err(|e| format!("{s:?}: {e}"))
}

/// The least transaction timeout (cycles) `sim --timeout` and `serve
/// --timeout-cycles` take at the default link latency: an SMP's round
/// trip on the longest directed route, 63 links out and back at DataW 64.
/// Measured on chains of switches, a link costs about 260 cycles there and
/// back at DataW 64 (115 at 128): 63 links are about 16,500 cycles. Below
/// the round trip a far node's answer arrives after its request was given
/// up, every retry too, and the SM keeps sweeping a fabric it cannot reach.
pub const MIN_SM_TIMEOUT: u64 = 20_000;

/// [`MIN_SM_TIMEOUT`] at link latency `link_latency`: each of the 63
/// links adds its latency twice beyond the default 4.
pub fn min_sm_timeout(link_latency: u64) -> u64 {
    MIN_SM_TIMEOUT.saturating_add(126u64.saturating_mul(link_latency.saturating_sub(4)))
}

impl FabricArgs {
    /// Refuse a transaction timeout (`arg` = its value) shorter than the
    /// round trip at this link latency.
    pub fn check_timeout(&self, name: &str, timeout: u64) {
        let min = min_sm_timeout(self.link_latency);
        if timeout < min {
            usage(&format!(
                "{name} {timeout}: at --link-latency {} an SMP's round trip on the longest \
                 directed route (63 links out and back) takes up to {min} cycles; give at least that",
                self.link_latency
            ));
        }
    }
}

/// A transaction timeout in cycles: at least [`MIN_SM_TIMEOUT`].
pub fn parse_sm_timeout(s: &str) -> Result<u64, String> {
    let v = parse_u64(s)?;
    if v < MIN_SM_TIMEOUT {
        return Err(format!(
            "{v} cycles is less than an SMP's round trip on the longest directed route \
             (63 links out and back, about 16,500 cycles at DataW 64); give at least \
             {MIN_SM_TIMEOUT}"
        ));
    }
    Ok(v)
}

/// A count that must be at least 1 (`--max-smps`, `--packets`, …).
pub fn parse_count(s: &str) -> Result<u64, String> {
    match parse_u64(s)? {
        0 => Err("must be at least 1".to_string()),
        v => Ok(v),
    }
}

/// A progress bar on stderr, drawn only when stderr is a terminal (a
/// hidden bar draws nothing, so piped output and the final summaries are
/// the same with or without it). `len`: a bar of that many steps; `None`:
/// a spinner with the elapsed time. Clear it before printing the summary.
pub fn progress(len: Option<u64>, prefix: &str) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let (bar, template) = match len {
        Some(n) => (
            indicatif::ProgressBar::new(n),
            "{prefix} [{bar:30}] {pos}/{len} {msg} ({elapsed}, {eta} left)",
        ),
        None => (
            indicatif::ProgressBar::new_spinner(),
            "{spinner} {prefix} {msg} ({elapsed})",
        ),
    };
    if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_prefix(prefix.to_string());
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}
