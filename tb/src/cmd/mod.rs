//! One module per verb of the `vl15` CLI: each holds the verb's arguments
//! (`Args`, flattened into `Cmd` in main.rs) and runs it. What the verbs
//! share is here.

use std::process::ExitCode;

use anyhow::{bail, Result};
use clap::ValueEnum;
use vl15::proto::pcap::LinkType;

pub mod bench;
pub mod completions;
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
pub fn parse_tree(s: &str) -> Result<(u8, u8), String> {
    let (k, l) = s
        .split_once('x')
        .ok_or_else(|| format!("{s:?}: want PORTSxLEAVES, e.g. 36x18"))?;
    let num = |v: &str| v.parse::<u8>().map_err(|e| format!("{s:?}: {v:?}: {e}"));
    Ok((num(k)?, num(l)?))
}

/// A number in decimal or 0x hex (seeds are printed in hex).
pub fn parse_u64(s: &str) -> Result<u64, String> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    }
    .map_err(|e| format!("{s:?}: {e}"))
}

/// `--width` of the CA-port verbs: 32, 64, 128 or all.
pub fn widths(s: &str) -> Result<Vec<u32>> {
    match s {
        "all" => Ok(vec![32, 64, 128]),
        "32" | "64" | "128" => Ok(vec![s.parse()?]),
        _ => bail!("--width must be 32, 64, 128 or all, not {s:?}"),
    }
}

/// Report a usage error as clap reports its own (exit status 2).
pub fn usage(msg: &str) -> ! {
    clap::Error::raw(clap::error::ErrorKind::ArgumentConflict, format!("{msg}\n")).exit()
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
}

impl FabricArgs {
    pub fn net_options(&self) -> vl15::model::net::NetOptions {
        vl15::model::net::NetOptions {
            link_latency: self.link_latency,
            threads: usize::from(self.threads),
            data_w: self.width,
            ca_top: self.ca_top,
            ..Default::default()
        }
    }
}

/// The exit status of a verb that failed with `e`, reported on stderr: 2
/// for input that cannot be used (a pcap, topology or state file, a switch
/// the state file does not have), else 1.
pub fn failed(e: &anyhow::Error) -> ExitCode {
    eprintln!("vl15: {e:#}");
    let bad_input = e.is::<vl15::proto::pcap::PcapError>()
        || e.is::<vl15::proto::topology::TopologyError>()
        || e.is::<vl15::proto::state::StateError>();
    ExitCode::from(if bad_input { 2 } else { 1 })
}
