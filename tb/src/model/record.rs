//! Recording what each twin of a fabric was given and gave, so that its
//! RTL can be replayed alone afterwards (`vl15 check-rtl`).
//!
//! Links decouple devices: given every call the fabric made on a device's
//! model ([`Dut`]) with its inputs, and what the model answered, that
//! device's RTL can be driven alone with the same inputs, cycle for cycle,
//! and its outputs compared with what the twin gave the fabric.
//!
//! A [`Recorder`] wraps a twin: it forwards every call and appends it,
//! with its inputs and results, to the device's stream of [`Op`]s. A
//! struct is written as the fields that differ from the same struct
//! written before (a mask, then those fields), so a step whose inputs are
//! as in the step before costs a few bytes; a packet's bytes are
//! run-length coded. The streams of all devices go to one file,
//! `record.bin`, in chunks; `manifest.json` names the devices (id,
//! NodeDescription, kind, ports, width), where each one's chunks lie, and
//! the build that wrote it (a CRC-64 of its sources: a replay must run
//! the same twins and the same RTL).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use vl15_bindings::{Changed, DevIn, DevOut, PortIn, PortOut};

use crate::model::dut::{
    show_host, shows_host_beat, shows_tx_beat, Dut, HostBurst, HostIn, HostOut, HostTaken,
    PortsHint, TxBurst,
};
use crate::model::stream::Beat;
use crate::model::twin::DeviceSpec;
use crate::proto::InputError;

/// The format a manifest names.
pub const FORMAT: &str = "vl15-record 1";
/// The manifest's file name in a recording directory.
pub const MANIFEST: &str = "manifest.json";
/// The file of the devices' streams.
pub const DATA: &str = "record.bin";
/// A device's buffer goes to the file when it holds this much.
const CHUNK: usize = 16 * 1024;

/// A struct written field by field, little-endian (bools as one byte).
pub trait Fields: Sized + Copy + Default + PartialEq {
    /// Its size written.
    const N: usize;
    fn put(&self, out: &mut Vec<u8>);
    fn take(b: &[u8]) -> Self;
    /// Against `prev`: a mask of the fields that differ (bit k: field k),
    /// then those fields.
    fn put_diff(&self, prev: &Self, out: &mut Vec<u8>);
    /// What [`Fields::put_diff`] wrote with `mask`, from `b`: the struct
    /// and the bytes read; None where `b` is short or `mask` names a field
    /// past the last.
    fn take_diff(prev: &Self, mask: u64, b: &[u8]) -> Option<(Self, usize)>;
}

trait Field: Sized {
    const N: usize;
    fn put(&self, out: &mut Vec<u8>);
    fn take(b: &[u8]) -> Self;
}

impl Field for bool {
    const N: usize = 1;
    fn put(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self));
    }
    fn take(b: &[u8]) -> Self {
        b[0] != 0
    }
}

macro_rules! int_field {
    ($($t:ty),*) => {$(
        impl Field for $t {
            const N: usize = std::mem::size_of::<$t>();
            fn put(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn take(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(&b[..Self::N]);
                <$t>::from_le_bytes(a)
            }
        }
    )*};
}
int_field!(u8, u16, u32, u64);

impl Field for [u64; 2] {
    const N: usize = 16;
    fn put(&self, out: &mut Vec<u8>) {
        self[0].put(out);
        self[1].put(out);
    }
    fn take(b: &[u8]) -> Self {
        [u64::take(b), u64::take(&b[8..])]
    }
}

macro_rules! fields {
    ($t:ty { $($f:ident: $ft:ty),* $(,)? }) => {
        impl Fields for $t {
            const N: usize = 0 $(+ <$ft as Field>::N)*;
            fn put(&self, out: &mut Vec<u8>) {
                $( <$ft as Field>::put(&self.$f, out); )*
            }
            fn take(b: &[u8]) -> Self {
                let mut at = 0;
                $(
                    let $f = <$ft as Field>::take(&b[at..]);
                    at += <$ft as Field>::N;
                )*
                let _ = at;
                Self { $($f),* }
            }
            fn put_diff(&self, prev: &Self, out: &mut Vec<u8>) {
                let mut mask = 0u64;
                let mut k = 0;
                $(
                    if self.$f != prev.$f {
                        mask |= 1 << k;
                    }
                    k += 1;
                )*
                let _ = k;
                put_var(out, mask);
                if mask != 0 {
                    $(
                        if self.$f != prev.$f {
                            <$ft as Field>::put(&self.$f, out);
                        }
                    )*
                }
            }
            fn take_diff(prev: &Self, mask: u64, b: &[u8]) -> Option<(Self, usize)> {
                let mut v = *prev;
                let mut at = 0;
                let mut k = 0;
                $(
                    if mask & (1 << k) != 0 {
                        let n = <$ft as Field>::N;
                        v.$f = <$ft as Field>::take(b.get(at..at + n)?);
                        at += n;
                    }
                    k += 1;
                )*
                // a bit past the last field
                if mask >> k != 0 {
                    return None;
                }
                Some((v, at))
            }
        }
    };
}

fields!(PortIn {
    rx_tdata: [u64; 2],
    rx_tkeep: u16,
    rx_tvalid: bool,
    rx_tlast: bool,
    tx_tready: bool,
    link_up: bool,
    dtx_tdata: [u64; 2],
    dtx_tkeep: u16,
    dtx_tvalid: bool,
    dtx_tlast: bool,
});

fields!(PortOut {
    tx_tdata: [u64; 2],
    tx_tkeep: u16,
    tx_tvalid: bool,
    tx_tlast: bool,
    drx_tdata: [u64; 2],
    drx_tkeep: u16,
    drx_tvalid: bool,
    drx_tlast: bool,
    drx_tuser: bool,
    drx_reason: u8,
    dtx_tready: bool,
    port_state: u8,
    mkey_prot: u8,
    mkey_viols: u16,
    sq_tx_beat: bool,
});

fields!(DevIn {
    sma_rx_tready: bool,
    sm_rx_tready: bool,
    sm_rq_post: bool,
    sm_rq_post_n: u8,
    sm_rq_clr: bool,
    sm_rq_port: u8,
    sma_tx_tdata: [u64; 2],
    sma_tx_tvalid: bool,
    sma_tx_tlast: bool,
    sma_tx_slid: u16,
    sma_tx_dlid: u16,
    sma_tx_sl: u8,
    sma_tx_port: u8,
    sm_tx_tdata: [u64; 2],
    sm_tx_tvalid: bool,
    sm_tx_tlast: bool,
    sm_tx_dlid: u16,
    sm_tx_sl: u8,
    sm_tx_path_bits: u8,
    sm_tx_port: u8,
    trap_tx_tdata: [u64; 2],
    trap_tx_tvalid: bool,
    trap_tx_tlast: bool,
    trap_tx_port: u8,
    gmp_tx_tdata: [u64; 2],
    gmp_tx_tkeep: u16,
    gmp_tx_tvalid: bool,
    gmp_tx_tlast: bool,
    reg_we: bool,
    reg_addr: u16,
    reg_wdata: u32,
});

fields!(DevOut {
    sma_rx_tdata: [u64; 2],
    sma_rx_tvalid: bool,
    sma_rx_tlast: bool,
    sma_rx_slid: u16,
    sma_rx_dlid: u16,
    sma_rx_sl: u8,
    sma_rx_port: u8,
    sma_rx_mgmt_class: u8,
    sma_rx_hop_ptr: u8,
    sma_rx_hop_cnt: u8,
    sma_rx_mkey_viol: bool,
    sma_rx_mkey_mask: bool,
    sm_rx_tdata: [u64; 2],
    sm_rx_tvalid: bool,
    sm_rx_tlast: bool,
    sm_rx_slid: u16,
    sm_rx_dlid: u16,
    sm_rx_sl: u8,
    sm_rx_port: u8,
    sm_rx_mgmt_class: u8,
    sm_rx_hop_ptr: u8,
    sm_rx_hop_cnt: u8,
    sma_tx_tready: bool,
    sm_tx_tready: bool,
    trap_tx_tready: bool,
    gmp_rx_tdata: [u64; 2],
    gmp_rx_tkeep: u16,
    gmp_rx_tvalid: bool,
    gmp_rx_tlast: bool,
    gmp_rx_tuser: bool,
    gmp_rx_reason: u8,
    gmp_tx_tready: bool,
    reg_rdata: u32,
    idle: bool,
    port_state_change: bool,
    port0_state: u8,
    port0_mkey_prot: u8,
    port0_mkey_viols: u16,
});

fields!(Beat {
    data: [u64; 2],
    keep: u16,
    last: bool,
});

fn put_var(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// `x` as (zero run, literal run, literals)…; a literal run goes on
/// through a single zero byte.
fn put_rle(out: &mut Vec<u8>, x: &[u8]) {
    let mut i = 0;
    while i < x.len() {
        let z = x[i..].iter().take_while(|&&b| b == 0).count();
        i += z;
        let mut l = 0;
        while i + l < x.len() {
            if x[i + l] != 0 {
                l += 1;
            } else if x.get(i + l + 1).is_some_and(|&b| b != 0) {
                l += 2;
            } else {
                break;
            }
        }
        put_var(out, z as u64);
        put_var(out, l as u64);
        out.extend_from_slice(&x[i..i + l]);
        i += l;
    }
}

/// Beats as their count, their `keep`s and `last`s (one pair for a packet
/// whose beats are full but the last), and their kept bytes run-length
/// coded.
fn put_beats(out: &mut Vec<u8>, beats: &[Beat], scratch: &mut Vec<u8>) {
    put_var(out, beats.len() as u64);
    let Some((end, body)) = beats.split_last() else {
        return;
    };
    let k0 = body.first().map_or(end.keep, |b| b.keep);
    if end.last && body.iter().all(|b| !b.last && b.keep == k0) {
        out.push(0);
        put_var(out, u64::from(k0));
        put_var(out, u64::from(end.keep));
    } else {
        out.push(1);
        for b in beats {
            put_var(out, u64::from(b.keep));
            out.push(u8::from(b.last));
        }
    }
    scratch.clear();
    for b in beats {
        b.extend_bytes(scratch);
    }
    put_rle(out, scratch);
}

/// The CRC of bursts, its table built at compile time.
static CRC32: crc::Crc<u32, crc::Table<16>> =
    crc::Crc::<u32, crc::Table<16>>::new(&crc::CRC_32_ISO_HDLC);

/// A CRC-32 of beats as a consumer sees them: the kept bytes, `keep` and
/// `last` of each. What the record keeps of what a twin sent.
pub fn beats_crc<'a>(beats: impl IntoIterator<Item = &'a Beat>) -> u32 {
    beats_crc_in(&mut Vec::new(), beats)
}

/// [`beats_crc`] with `buf` to lay the beats out in.
fn beats_crc_in<'a>(buf: &mut Vec<u8>, beats: impl IntoIterator<Item = &'a Beat>) -> u32 {
    buf.clear();
    for b in beats {
        b.extend_bytes(buf);
        buf.extend_from_slice(&b.keep.to_le_bytes());
        buf.push(u8::from(b.last));
    }
    CRC32.checksum(buf)
}

/// The fields of host stream `s` in `o` that a consumer may look at
/// (the rest 0): one beat of a MAD to the host as the record hashes it.
pub fn host_view(o: &DevOut, s: HostOut, w: u32) -> DevOut {
    let v = crate::model::lockstep::visible_dev(o, w);
    let (valid, data, last) = match s {
        HostOut::SmaRx => (v.sma_rx_tvalid, v.sma_rx_tdata, v.sma_rx_tlast),
        HostOut::SmRx => (v.sm_rx_tvalid, v.sm_rx_tdata, v.sm_rx_tlast),
    };
    let mut h = DevOut::default();
    if valid {
        // the stream's fields, as a burst of it shows them
        let b = HostBurst {
            stream: s,
            first: 0,
            beats: Vec::new(),
            side: v,
        };
        show_host(
            &mut h,
            &b,
            &Beat {
                data,
                keep: 0,
                last,
            },
        );
    }
    h
}

/// A CRC-32 of the beats of a MAD to the host, each as [`host_view`]
/// gives it.
pub fn host_crc<'a>(views: impl IntoIterator<Item = &'a DevOut>) -> u32 {
    let mut buf = Vec::new();
    for o in views {
        o.put(&mut buf);
    }
    CRC32.checksum(&buf)
}

/// Where a burst goes: out of a port (index), or to the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    Tx(usize),
    Host(HostOut),
}

/// A burst a twin announced: `n` beats from cycle `first`, kept as their
/// CRC ([`beats_crc`], [`host_crc`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sent {
    pub lane: Lane,
    pub first: u64,
    pub n: u64,
    pub crc: u32,
    /// The port: out of which it leaves (1..N), or at which the MAD to
    /// the host arrived (its port tag; 0 for a switch's port 0).
    pub port: u8,
}

/// The views ([`host_view`]) of the first `k` beats of host burst `b`.
fn host_views(b: &HostBurst, k: usize, w: u32) -> Vec<DevOut> {
    b.beats[..k.min(b.beats.len())]
        .iter()
        .map(|beat| {
            let mut v = DevOut::default();
            show_host(&mut v, b, beat);
            host_view(&v, b.stream, w)
        })
        .collect()
}

/// One call the fabric made on a device's model, with what it gave.
#[derive(Debug, Clone)]
pub enum Op {
    /// `reset(cycles)`.
    Reset(u32),
    /// `skip(n)`.
    Skip(u64),
    /// `step` in `cycle` (the model's count) with `i` and every port's
    /// inputs ([`OpReader::pin`]); `all`: told every port changed, else the
    /// ports in `changed`. Its outputs: `out` and every port's
    /// ([`OpReader::ports`]).
    Step {
        cycle: u64,
        i: DevIn,
        all: bool,
        changed: Vec<u8>,
        out: DevOut,
    },
    /// `rx_burst(port, first, beats)`.
    RxBurst {
        port: usize,
        first: u64,
        beats: Vec<Beat>,
    },
    /// `rx_burst_cut(port, from)`.
    RxCut { port: usize, from: u64 },
    /// `host_burst(stream, first, beats, side)` and whether the model held
    /// it.
    HostBurst {
        stream: HostIn,
        first: u64,
        beats: Vec<Beat>,
        side: DevIn,
        held: bool,
    },
    /// What `take_tx_bursts` or `take_host_bursts` gave.
    Sent(Vec<Sent>),
    /// A burst the twin announced is void from cycle `at` on (a step
    /// showed another beat, or a burst announced again replaced it):
    /// `crc` is that of its beats before `at`.
    Void { lane: Lane, at: u64, crc: u32 },
    /// What `take_host_taken` gave.
    Taken(Vec<HostTaken>),
    /// The stream's first op: the device it was recorded from.
    Head {
        kind: &'static str,
        nports: u8,
        data_w: u32,
    },
}

const T_RESET: u8 = 1;
const T_SKIP: u8 = 2;
const T_STEP: u8 = 3;
const T_RX: u8 = 4;
const T_RXCUT: u8 = 5;
const T_HOST: u8 = 6;
const T_SENT: u8 = 7;
const T_VOID: u8 = 8;
const T_TAKEN: u8 = 9;
const T_HEAD: u8 = 10;

fn host_in_code(s: HostIn) -> u8 {
    s as u8
}

fn host_in_of(v: u8) -> Option<HostIn> {
    match v {
        0 => Some(HostIn::SmaTx),
        1 => Some(HostIn::SmTx),
        2 => Some(HostIn::TrapTx),
        _ => None,
    }
}

/// The kinds of device, as a stream's header numbers them.
const KINDS: [&str; 3] = ["ca-top", "ca-mp", "switch"];

/// The kind of a device as a manifest names it.
pub fn spec_kind(spec: DeviceSpec) -> &'static str {
    match spec {
        DeviceSpec::CaTop { .. } => "ca-top",
        DeviceSpec::CaMp { .. } => "ca-mp",
        DeviceSpec::Switch { .. } => "switch",
    }
}

/// The spec a manifest entry names.
pub fn spec_of(kind: &str, nports: u8, data_w: u32) -> Option<DeviceSpec> {
    match kind {
        "ca-top" if nports == 1 => Some(DeviceSpec::CaTop { data_w }),
        "ca-mp" => Some(DeviceSpec::CaMp { nports, data_w }),
        "switch" => Some(DeviceSpec::Switch { nports, data_w }),
        _ => None,
    }
}

/// One recorded device in the manifest.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct DeviceEntry {
    /// Its index among the fabric's nodes.
    pub index: usize,
    /// Node id and NodeDescription.
    pub id: String,
    pub description: String,
    /// "switch", "ca-mp" or "ca-top".
    pub kind: String,
    pub nports: u8,
    pub data_w: u32,
    /// Steps recorded (cycles in which the twin was evaluated).
    pub steps: u64,
    /// The device's cycle count at the end of the run.
    pub cycles: u64,
    /// Its cycle count less the fabric's (the reset's cycles): what turns
    /// its cycles into the fabric's, as `--pcap` gives them.
    pub offset: u64,
    /// Bytes of its stream, and where its chunks lie in the data file
    /// (offset, length), in order.
    pub bytes: u64,
    pub chunks: Vec<(u64, u64)>,
}

/// `manifest.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    pub format: String,
    /// The build that recorded ([`build_id`]).
    pub build: String,
    pub vl15: String,
    /// The data file's length when the run ended.
    pub data_bytes: u64,
    pub devices: Vec<DeviceEntry>,
}

/// The build's identity: a CRC-64 of the sources of the RTL, its shims
/// and bindings, and the testbench with its twins (`tb/build.rs`).
pub fn build_id() -> Result<String> {
    Ok(env!("VL15_SOURCE_CRC").to_string())
}

struct Sink {
    file: File,
    at: u64,
    devices: Vec<Option<DeviceEntry>>,
    error: Option<String>,
    /// The manifest is written.
    done: bool,
}

/// A recording being written: the data file and what each device wrote.
pub struct Recording {
    dir: PathBuf,
    sink: Mutex<Sink>,
}

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording").field("dir", &self.dir).finish()
    }
}

impl Recording {
    /// Start a recording in `dir` (created; a recording already there is
    /// replaced).
    pub fn create(dir: &Path) -> Result<Arc<Recording>> {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("--record: creating {}", dir.display()))?;
        let path = dir.join(DATA);
        let file = File::create(&path)
            .with_context(|| format!("--record: creating {}", path.display()))?;
        let _ = std::fs::remove_file(dir.join(MANIFEST));
        Ok(Arc::new(Recording {
            dir: dir.to_path_buf(),
            sink: Mutex::new(Sink {
                file,
                at: 0,
                devices: Vec::new(),
                error: None,
                done: false,
            }),
        }))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `inner`, the twin of node `index` (`id`, `description`, built as
    /// `spec`), recording every call made on it.
    pub fn recorder(
        self: &Arc<Self>,
        index: usize,
        id: &str,
        description: &str,
        spec: DeviceSpec,
        inner: Box<dyn Dut>,
    ) -> Box<dyn Dut> {
        let n = inner.num_ports() as usize;
        {
            let mut s = self.sink.lock().unwrap_or_else(|e| e.into_inner());
            if s.devices.len() <= index {
                s.devices.resize(index + 1, None);
            }
            s.devices[index] = Some(DeviceEntry {
                index,
                id: id.to_string(),
                description: description.to_string(),
                kind: spec_kind(spec).to_string(),
                nports: n as u8,
                data_w: spec.data_w(),
                steps: 0,
                cycles: 0,
                offset: 0,
                bytes: 0,
                chunks: Vec::new(),
            });
        }
        let mut buf = Vec::with_capacity(CHUNK + 4096);
        buf.push(T_HEAD);
        buf.push(
            KINDS
                .iter()
                .position(|&k| k == spec_kind(spec))
                .unwrap_or(0) as u8,
        );
        buf.push(n as u8);
        put_var(&mut buf, u64::from(spec.data_w()));
        Box::new(Recorder {
            inner,
            rec: self.clone(),
            index,
            buf,
            scratch: Vec::new(),
            din: DevIn::default(),
            pin: vec![PortIn::default(); n],
            dout: DevOut::default(),
            pout: vec![PortOut::default(); n],
            steps: 0,
            last_cycle: 0,
            tx: Vec::new(),
            hb: Vec::new(),
            taken: Vec::new(),
            live_tx: Vec::new(),
            live_host: Vec::new(),
            crc_buf: Vec::new(),
        })
    }

    fn write(&self, index: usize, b: &[u8], steps: u64, cycles: u64) {
        let mut s = self.sink.lock().unwrap_or_else(|e| e.into_inner());
        let at = s.at;
        if !b.is_empty() {
            if let Err(e) = s.file.write_all(b) {
                if s.error.is_none() {
                    s.error = Some(format!("writing {}: {e}", self.dir.join(DATA).display()));
                }
                return;
            }
            s.at += b.len() as u64;
        }
        if let Some(Some(d)) = s.devices.get_mut(index) {
            if !b.is_empty() {
                d.chunks.push((at, b.len() as u64));
                d.bytes += b.len() as u64;
            }
            d.steps = steps;
            d.cycles = cycles;
        }
    }

    /// Device `index`'s cycle count less the fabric's.
    pub fn set_offset(&self, index: usize, offset: u64) {
        let mut s = self.sink.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(Some(d)) = s.devices.get_mut(index) {
            d.offset = offset;
        }
    }

    /// Write the manifest: every recorder must have flushed
    /// ([`Dut::flush`]). Gives its path.
    pub fn finish(&self) -> Result<PathBuf> {
        let mut s = self.sink.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = s.error.take() {
            bail!("--record: {e}");
        }
        s.file
            .flush()
            .and_then(|()| s.file.sync_data())
            .with_context(|| format!("--record: writing {}", self.dir.join(DATA).display()))?;
        let m = Manifest {
            format: FORMAT.to_string(),
            build: build_id()?,
            vl15: env!("CARGO_PKG_VERSION").to_string(),
            data_bytes: s.at,
            devices: s.devices.iter().flatten().cloned().collect(),
        };
        let path = self.dir.join(MANIFEST);
        let text = serde_json::to_string_pretty(&m).context("writing the manifest")?;
        std::fs::write(&path, text)
            .with_context(|| format!("--record: writing {}", path.display()))?;
        s.done = true;
        Ok(path)
    }
}

impl Drop for Recording {
    /// A run that ended in an error leaves its recording too (its twins
    /// wrote what they held when the fabric was dropped): what it did up
    /// to there can be checked.
    fn drop(&mut self) {
        let done = self.sink.lock().map_or(true, |s| s.done);
        if !done {
            if let Err(e) = self.finish() {
                eprintln!("vl15: {e:#}");
            }
        }
    }
}

/// A twin that records every call made on it ([`Recording::recorder`]).
pub struct Recorder {
    inner: Box<dyn Dut>,
    rec: Arc<Recording>,
    index: usize,
    buf: Vec<u8>,
    scratch: Vec<u8>,
    /// The structs last written, which the next are written against.
    din: DevIn,
    pin: Vec<PortIn>,
    dout: DevOut,
    pout: Vec<PortOut>,
    steps: u64,
    last_cycle: u64,
    tx: Vec<TxBurst>,
    hb: Vec<HostBurst>,
    taken: Vec<HostTaken>,
    /// The bursts announced with beats still to come, to see a step void
    /// one.
    live_tx: Vec<TxBurst>,
    live_host: Vec<HostBurst>,
    crc_buf: Vec<u8>,
}

impl Recorder {
    fn put_lane(&mut self, l: Lane) {
        match l {
            Lane::Tx(p) => put_var(&mut self.buf, 2 * p as u64 + 2),
            Lane::Host(HostOut::SmaRx) => put_var(&mut self.buf, 0),
            Lane::Host(HostOut::SmRx) => put_var(&mut self.buf, 1),
        }
    }

    fn put_void(&mut self, lane: Lane, at: u64, crc: u32) {
        self.buf.push(T_VOID);
        self.put_lane(lane);
        self.put_cycle(at);
        self.buf.extend_from_slice(&crc.to_le_bytes());
    }

    fn put_sent(&mut self, v: &[Sent]) {
        self.buf.push(T_SENT);
        put_var(&mut self.buf, v.len() as u64);
        for b in v {
            self.put_lane(b.lane);
            self.put_cycle(b.first);
            put_var(&mut self.buf, b.n);
            self.buf.extend_from_slice(&b.crc.to_le_bytes());
            self.buf.push(b.port);
        }
    }

    /// After a step in cycle `c` with outputs `o`: the bursts whose beat
    /// it does not show are void from `c`; those it ends are done.
    fn voids(&mut self, c: u64, o: &DevOut) {
        let mut live = std::mem::take(&mut self.live_tx);
        live.retain(|b| {
            let Some(k) = c.checked_sub(b.first).map(|k| k as usize) else {
                return true;
            };
            let Some(beat) = b.beats.get(k) else {
                return false;
            };
            if !shows_tx_beat(&self.inner.ports_out()[b.port], beat) {
                let crc = beats_crc_in(&mut self.crc_buf, &b.beats[..k]);
                self.put_void(Lane::Tx(b.port), c, crc);
                return false;
            }
            k + 1 < b.beats.len()
        });
        self.live_tx = live;
        let w = self.inner.data_w();
        let mut live = std::mem::take(&mut self.live_host);
        live.retain(|b| {
            let Some(k) = c.checked_sub(b.first).map(|k| k as usize) else {
                return true;
            };
            let Some(beat) = b.beats.get(k) else {
                return false;
            };
            if !shows_host_beat(o, b.stream, beat) {
                let crc = host_crc(&host_views(b, k, w));
                self.put_void(Lane::Host(b.stream), c, crc);
                return false;
            }
            k + 1 < b.beats.len()
        });
        self.live_host = live;
    }

    fn spill(&mut self) {
        if self.buf.len() >= CHUNK {
            self.rec
                .write(self.index, &self.buf, self.steps, self.inner.cycle());
            self.buf.clear();
        }
    }

    fn put_cycle(&mut self, c: u64) {
        // cycles as they come: steps and bursts near the last one written
        let d = c.wrapping_sub(self.last_cycle);
        put_var(&mut self.buf, d.rotate_left(1));
        self.last_cycle = c;
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

impl Dut for Recorder {
    fn step(&mut self, i: &DevIn, pin: &[PortIn], changed: Changed<'_>) -> Result<DevOut> {
        let cycle = self.inner.cycle();
        let o = self.inner.step(i, pin, changed)?;
        self.steps += 1;
        self.buf.push(T_STEP);
        self.put_cycle(cycle);
        i.put_diff(&self.din, &mut self.buf);
        self.din = *i;
        self.buf.push(u8::from(matches!(changed, Changed::All)));
        // only the ports the caller says it wrote can differ
        let listed: &[u8] = match changed {
            Changed::All => &[],
            Changed::Ports(l) => l,
        };
        let cand = |p: usize| matches!(changed, Changed::All) || listed.contains(&(p as u8));
        // (at most 64 ports: the count is one byte, written after)
        let at = self.buf.len();
        self.buf.push(0);
        let mut diff = 0u8;
        for (p, (new, old)) in pin.iter().zip(self.pin.iter_mut()).enumerate() {
            if !cand(p) || new == old {
                continue;
            }
            diff += 1;
            put_var(&mut self.buf, p as u64);
            new.put_diff(old, &mut self.buf);
            *old = *new;
        }
        self.buf[at] = diff;
        o.put_diff(&self.dout, &mut self.buf);
        self.dout = o;
        let po = self.inner.ports_out();
        let cand: u64 = match self.inner.ports_hint() {
            Some(h) => h.changed,
            None => u64::MAX,
        };
        let n = po.len().min(self.pout.len());
        let at = self.buf.len();
        self.buf.push(0);
        let mut diff = 0u8;
        for p in crate::model::dut::bits(cand) {
            if p >= n {
                break;
            }
            let v = self.inner.ports_out()[p];
            if v == self.pout[p] {
                continue;
            }
            diff += 1;
            put_var(&mut self.buf, p as u64);
            v.put_diff(&self.pout[p], &mut self.buf);
            self.pout[p] = v;
        }
        self.buf[at] = diff;
        if !self.live_tx.is_empty() || !self.live_host.is_empty() {
            self.voids(cycle, &o);
        }
        self.spill();
        Ok(o)
    }

    fn ports_out(&self) -> &[PortOut] {
        self.inner.ports_out()
    }

    fn ports_hint(&self) -> Option<PortsHint> {
        self.inner.ports_hint()
    }

    fn skip(&mut self, n: u64) {
        self.inner.skip(n);
        self.buf.push(T_SKIP);
        put_var(&mut self.buf, n);
    }

    fn calm_until(&self) -> Option<u64> {
        self.inner.calm_until()
    }

    fn calm_idle(&self) -> Option<bool> {
        self.inner.calm_idle()
    }

    fn take_tx_bursts(&mut self, out: &mut Vec<TxBurst>) {
        let mut v = std::mem::take(&mut self.tx);
        self.inner.take_tx_bursts(&mut v);
        if !v.is_empty() {
            let mut sent = Vec::with_capacity(v.len());
            for b in &v {
                // one announced again replaces what was left of the last
                if let Some(k) = self.live_tx.iter().position(|o| o.port == b.port) {
                    let o = self.live_tx.swap_remove(k);
                    let keep = b.first.saturating_sub(o.first) as usize;
                    if keep < o.beats.len() {
                        let crc = beats_crc_in(&mut self.crc_buf, &o.beats[..keep]);
                        self.put_void(Lane::Tx(o.port), b.first, crc);
                    }
                }
                sent.push(Sent {
                    lane: Lane::Tx(b.port),
                    first: b.first,
                    n: b.beats.len() as u64,
                    crc: beats_crc_in(&mut self.crc_buf, &b.beats),
                    port: (b.port + 1) as u8,
                });
                self.live_tx.push(b.clone());
            }
            self.put_sent(&sent);
            out.extend_from_slice(&v);
            v.clear();
        }
        self.tx = v;
    }

    fn calm_cycles(&self) -> Option<u64> {
        self.inner.calm_cycles()
    }

    fn takes_rx_bursts(&self) -> bool {
        self.inner.takes_rx_bursts()
    }

    fn rx_burst(&mut self, port: usize, first: u64, beats: &[Beat]) {
        self.inner.rx_burst(port, first, beats);
        self.buf.push(T_RX);
        put_var(&mut self.buf, port as u64);
        self.put_cycle(first);
        put_beats(&mut self.buf, beats, &mut self.scratch);
        self.spill();
    }

    fn rx_burst_cut(&mut self, port: usize, from: u64) {
        self.inner.rx_burst_cut(port, from);
        self.buf.push(T_RXCUT);
        put_var(&mut self.buf, port as u64);
        self.put_cycle(from);
    }

    fn take_host_bursts(&mut self, out: &mut Vec<HostBurst>) {
        let mut v = std::mem::take(&mut self.hb);
        self.inner.take_host_bursts(&mut v);
        if !v.is_empty() {
            let w = self.inner.data_w();
            let mut sent = Vec::with_capacity(v.len());
            for b in &v {
                if let Some(k) = self.live_host.iter().position(|o| o.stream == b.stream) {
                    let o = self.live_host.swap_remove(k);
                    let keep = b.first.saturating_sub(o.first) as usize;
                    if keep < o.beats.len() {
                        let crc = host_crc(&host_views(&o, keep, w));
                        self.put_void(Lane::Host(o.stream), b.first, crc);
                    }
                }
                sent.push(Sent {
                    lane: Lane::Host(b.stream),
                    first: b.first,
                    n: b.beats.len() as u64,
                    crc: host_crc(&host_views(b, b.beats.len(), w)),
                    port: match b.stream {
                        HostOut::SmaRx => b.side.sma_rx_port,
                        HostOut::SmRx => b.side.sm_rx_port,
                    },
                });
                self.live_host.push(b.clone());
            }
            self.put_sent(&sent);
            out.append(&mut v);
        }
        self.hb = v;
    }

    fn host_burst(&mut self, s: HostIn, first: u64, beats: &[Beat], side: &DevIn) -> bool {
        let held = self.inner.host_burst(s, first, beats, side);
        self.buf.push(T_HOST);
        self.buf.push(host_in_code(s));
        self.buf.push(u8::from(held));
        self.put_cycle(first);
        put_beats(&mut self.buf, beats, &mut self.scratch);
        side.put_diff(&DevIn::default(), &mut self.buf);
        self.spill();
        held
    }

    fn take_host_taken(&mut self, out: &mut Vec<HostTaken>) {
        let mut v = std::mem::take(&mut self.taken);
        self.inner.take_host_taken(&mut v);
        if !v.is_empty() {
            self.buf.push(T_TAKEN);
            put_var(&mut self.buf, v.len() as u64);
            for t in &v {
                self.buf.push(host_in_code(t.stream));
                self.put_cycle(t.first);
                self.put_cycle(t.last);
            }
            out.append(&mut v);
        }
        self.taken = v;
    }

    fn reset(&mut self, cycles: u32) -> Result<()> {
        self.buf.push(T_RESET);
        put_var(&mut self.buf, u64::from(cycles));
        self.inner.reset(cycles)
    }

    fn cycle(&self) -> u64 {
        self.inner.cycle()
    }

    fn num_ports(&self) -> u32 {
        self.inner.num_ports()
    }

    fn data_w(&self) -> u32 {
        self.inner.data_w()
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn trace_open(&mut self, path: &Path) -> Result<()> {
        self.inner.trace_open(path)
    }

    fn trace_close(&mut self) {
        self.inner.trace_close();
    }

    fn flush(&mut self) -> Result<()> {
        let b = std::mem::take(&mut self.buf);
        self.rec
            .write(self.index, &b, self.steps, self.inner.cycle());
        self.buf = b;
        self.buf.clear();
        Ok(())
    }
}

/// Reads one device's stream of [`Op`]s.
pub struct OpReader<'a> {
    b: &'a [u8],
    at: usize,
    nports: usize,
    /// What to say where it ends early: the file.
    file: String,
    din: DevIn,
    pin: Vec<PortIn>,
    dout: DevOut,
    pout: Vec<PortOut>,
    last_cycle: u64,
}

impl<'a> OpReader<'a> {
    /// The stream `b` of a device of `nports` ports, read from `file`.
    pub fn new(b: &'a [u8], nports: usize, file: &str) -> Self {
        OpReader {
            b,
            at: 0,
            nports,
            file: file.to_string(),
            din: DevIn::default(),
            pin: vec![PortIn::default(); nports],
            dout: DevOut::default(),
            pout: vec![PortOut::default(); nports],
            last_cycle: 0,
        }
    }

    fn bad(&self, what: &str) -> anyhow::Error {
        InputError(format!(
            "{}: a device's stream is damaged at byte {} of it: {what}",
            self.file, self.at
        ))
        .into()
    }

    fn byte(&mut self) -> Result<u8> {
        let v = *self
            .b
            .get(self.at)
            .ok_or_else(|| self.bad("it ends early"))?;
        self.at += 1;
        Ok(v)
    }

    fn var(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for k in 0..10 {
            let b = self.byte()?;
            v |= u64::from(b & 0x7F) << (7 * k);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(self.bad("a number longer than 64 bits"))
    }

    fn cycle(&mut self) -> Result<u64> {
        let d = self.var()?.rotate_right(1);
        self.last_cycle = self.last_cycle.wrapping_add(d);
        Ok(self.last_cycle)
    }

    fn delta<T: Fields>(&mut self, prev: &T) -> Result<T> {
        let mask = self.var()?;
        let (v, n) = T::take_diff(prev, mask, &self.b[self.at..])
            .ok_or_else(|| self.bad("a struct cut short, or a field it does not have"))?;
        self.at += n;
        Ok(v)
    }

    fn beats(&mut self) -> Result<Vec<Beat>> {
        let n = self.var()? as usize;
        if n > 4096 {
            return Err(self.bad("a burst of more than 4096 beats"));
        }
        if n == 0 {
            return Ok(Vec::new());
        }
        let mut v = Vec::with_capacity(n);
        if self.byte()? == 0 {
            let k0 = u16::try_from(self.var()?).map_err(|_| self.bad("a keep"))?;
            let kl = u16::try_from(self.var()?).map_err(|_| self.bad("a keep"))?;
            for j in 0..n {
                v.push(Beat {
                    data: [0; 2],
                    keep: if j + 1 == n { kl } else { k0 },
                    last: j + 1 == n,
                });
            }
        } else {
            for _ in 0..n {
                let keep = u16::try_from(self.var()?).map_err(|_| self.bad("a keep"))?;
                let last = self.byte()? != 0;
                v.push(Beat {
                    data: [0; 2],
                    keep,
                    last,
                });
            }
        }
        let total: usize = v.iter().map(|b| b.keep.count_ones() as usize).sum();
        let bytes = self.unrle(total)?;
        let mut at = 0;
        for b in &mut v {
            for j in 0..16 {
                if b.keep & (1 << j) != 0 {
                    b.data[j / 8] |= u64::from(bytes[at]) << (8 * (j % 8));
                    at += 1;
                }
            }
        }
        Ok(v)
    }

    /// `n` bytes run-length coded ([`put_rle`]).
    fn unrle(&mut self, n: usize) -> Result<Vec<u8>> {
        let mut x = Vec::with_capacity(n);
        while x.len() < n {
            let z = self.var()? as usize;
            let l = self.var()? as usize;
            if z + l == 0 || x.len() + z + l > n {
                return Err(self.bad("a run past the bytes it codes"));
            }
            x.resize(x.len() + z, 0);
            let end = self.at + l;
            let lit = self
                .b
                .get(self.at..end)
                .ok_or_else(|| self.bad("it ends early"))?;
            x.extend_from_slice(lit);
            self.at = end;
        }
        Ok(x)
    }

    fn lane(&mut self) -> Result<Lane> {
        Ok(match self.var()? {
            0 => Lane::Host(HostOut::SmaRx),
            1 => Lane::Host(HostOut::SmRx),
            v if v % 2 == 0 && ((v - 2) / 2) < self.nports as u64 => {
                Lane::Tx(((v - 2) / 2) as usize)
            }
            _ => return Err(self.bad("a lane that is no port and no host stream")),
        })
    }

    fn crc32(&mut self) -> Result<u32> {
        let end = self.at + 4;
        let b = self
            .b
            .get(self.at..end)
            .ok_or_else(|| self.bad("it ends early"))?;
        let v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        self.at = end;
        Ok(v)
    }

    fn port(&mut self) -> Result<usize> {
        let p = self.var()? as usize;
        if p >= self.nports {
            return Err(self.bad(&format!("port index {p} of a {}-port device", self.nports)));
        }
        Ok(p)
    }

    /// Bytes read so far.
    pub fn pos(&self) -> usize {
        self.at
    }

    /// Every port's inputs of the last step read.
    pub fn pin(&self) -> &[PortIn] {
        &self.pin
    }

    /// Every port's outputs of the last step read.
    pub fn ports(&self) -> &[PortOut] {
        &self.pout
    }

    /// The next op; None at the end.
    pub fn next_op(&mut self) -> Result<Option<Op>> {
        if self.at >= self.b.len() {
            return Ok(None);
        }
        let t = self.byte()?;
        Ok(Some(match t {
            T_RESET => Op::Reset(u32::try_from(self.var()?).map_err(|_| self.bad("reset"))?),
            T_SKIP => Op::Skip(self.var()?),
            T_STEP => {
                let cycle = self.cycle()?;
                let din = self.din;
                self.din = self.delta(&din)?;
                let all = self.byte()? != 0;
                let n = self.var()? as usize;
                let mut changed = Vec::with_capacity(n);
                for _ in 0..n {
                    let p = self.port()?;
                    let prev = self.pin[p];
                    self.pin[p] = self.delta(&prev)?;
                    changed.push(p as u8);
                }
                let dout = self.dout;
                self.dout = self.delta(&dout)?;
                let n = self.var()? as usize;
                for _ in 0..n {
                    let p = self.port()?;
                    let prev = self.pout[p];
                    self.pout[p] = self.delta(&prev)?;
                }
                Op::Step {
                    cycle,
                    i: self.din,
                    all,
                    changed,
                    out: self.dout,
                }
            }
            T_RX => {
                let port = self.port()?;
                let first = self.cycle()?;
                Op::RxBurst {
                    port,
                    first,
                    beats: self.beats()?,
                }
            }
            T_RXCUT => {
                let port = self.port()?;
                Op::RxCut {
                    port,
                    from: self.cycle()?,
                }
            }
            T_HOST => {
                let stream = host_in_of(self.byte()?).ok_or_else(|| self.bad("host stream"))?;
                let held = self.byte()? != 0;
                let first = self.cycle()?;
                let beats = self.beats()?;
                let side = self.delta(&DevIn::default())?;
                Op::HostBurst {
                    stream,
                    first,
                    beats,
                    side,
                    held,
                }
            }
            T_SENT => {
                let n = self.var()? as usize;
                let mut v = Vec::new();
                for _ in 0..n {
                    let lane = self.lane()?;
                    let first = self.cycle()?;
                    let n = self.var()?;
                    let crc = self.crc32()?;
                    let port = self.byte()?;
                    v.push(Sent {
                        lane,
                        first,
                        n,
                        crc,
                        port,
                    });
                }
                Op::Sent(v)
            }
            T_VOID => {
                let lane = self.lane()?;
                let at = self.cycle()?;
                let crc = self.crc32()?;
                Op::Void { lane, at, crc }
            }
            T_HEAD => {
                let k = self.byte()?;
                let nports = self.byte()?;
                let data_w = u32::try_from(self.var()?).map_err(|_| self.bad("width"))?;
                let kind = *KINDS
                    .get(usize::from(k))
                    .ok_or_else(|| self.bad("an unknown device kind"))?;
                Op::Head {
                    kind,
                    nports,
                    data_w,
                }
            }
            T_TAKEN => {
                let n = self.var()? as usize;
                let mut v = Vec::new();
                for _ in 0..n {
                    let stream = host_in_of(self.byte()?).ok_or_else(|| self.bad("host stream"))?;
                    let first = self.cycle()?;
                    let last = self.cycle()?;
                    v.push(HostTaken {
                        stream,
                        first,
                        last,
                    });
                }
                Op::Taken(v)
            }
            _ => return Err(self.bad(&format!("unknown record {t}"))),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip() {
        let i = DevIn {
            sma_rx_tready: true,
            sm_tx_tdata: [0x1122_3344_5566_7788, 0x99],
            reg_wdata: 0xDEAD_BEEF,
            reg_addr: 0x1234,
            ..DevIn::default()
        };
        let mut v = Vec::new();
        i.put(&mut v);
        assert_eq!(v.len(), DevIn::N);
        assert_eq!(DevIn::take(&v), i);
        let o = DevOut {
            port0_mkey_viols: 0xBEEF,
            idle: true,
            ..DevOut::default()
        };
        v.clear();
        o.put(&mut v);
        assert_eq!(DevOut::take(&v), o);
    }

    #[test]
    fn an_unchanged_struct_is_one_byte() {
        let a = PortOut {
            tx_tdata: [5, 6],
            tx_tvalid: true,
            ..PortOut::default()
        };
        let mut out = Vec::new();
        a.put_diff(&a, &mut out);
        assert_eq!(out, [0]);
        let mut b = a;
        b.mkey_viols = 7;
        b.tx_tdata[1] = 0x0102_0304_0506_0708;
        out.clear();
        b.put_diff(&a, &mut out);
        // mask (tx_tdata: field 0, mkey_viols: field 13), 16 + 2 bytes
        assert_eq!(out.len(), 2 + 16 + 2, "{out:?}");
        let mut r = OpReader::new(&out, 1, "t");
        assert_eq!(r.delta(&a).unwrap(), b);
        // a mask naming a field past the last
        let bad = [0x80, 0x80, 0x02];
        let mut r = OpReader::new(&bad, 1, "t");
        assert!(r.delta(&a).is_err());
    }

    #[test]
    fn beats_round_trip() {
        let beats: Vec<Beat> = (0..5u64)
            .map(|k| Beat {
                data: [k * 0x0100_0000_0000_0001, 0],
                keep: if k == 4 { 0x00FF } else { 0xFFFF },
                last: k == 4,
            })
            .collect();
        let mut out = Vec::new();
        put_beats(&mut out, &beats, &mut Vec::new());
        let mut r = OpReader::new(&out, 1, "t");
        let got = r.beats().unwrap();
        // bytes outside keep are not kept
        assert_eq!(got.len(), 5);
        for (a, b) in got.iter().zip(&beats) {
            assert_eq!((a.keep, a.last), (b.keep, b.last));
            assert_eq!(a.bytes(), b.bytes());
        }
        assert_eq!(beats_crc(&got), beats_crc(&beats));
    }

    #[test]
    fn a_cut_stream_is_an_input_error() {
        let mut out = vec![T_SKIP];
        put_var(&mut out, 300);
        let mut r = OpReader::new(&out[..2], 1, "x/record.bin");
        let e = r.next_op().unwrap_err();
        assert!(e.downcast_ref::<InputError>().is_some(), "{e}");
        assert!(e.to_string().contains("x/record.bin"), "{e}");
    }
}
