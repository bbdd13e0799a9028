//! The board over a serial line: the UART framing of docs/uart.md, a CA port
//! driven through it ([`BoardPort`]), and `vl15 replay --serial`.
//!
//! A frame is `0xA5 | TYPE | LEN (LE16) | PAYLOAD | CRC (LE16)`, the CRC being
//! the IB VCRC CRC-16 over TYPE, LEN and the payload. The host side parses
//! board → host frames as the board parses its input: hunt for the sync byte,
//! refuse a header whose type is unknown or whose length is wrong for the
//! type, drop a frame with a bad CRC and hunt again from the byte after its
//! sync.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::io::{ErrorKind, Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::agents::sma::{Sma, SmaConfig};
use crate::model::device::{PortRegisters, SmiMeta};
use crate::model::regmap::reg;
use crate::proto::crc;
use crate::proto::mad::Mad;
use crate::proto::pcap::{self, LinkType, PcapRecord};

pub const SYNC: u8 = 0xA5;
/// Largest WIRE_RX / WIRE_TX payload the board takes (one 512-byte slot).
pub const MAX_WIRE: usize = 512;
const MAD_FRAME: usize = 8 + 256;
const RX_MAD_FRAME: usize = 12 + 256;
/// SMA_RX adds the M_Key verdict byte (bit 0 violation, bit 1 masked Get).
const SMA_RX_FRAME: usize = RX_MAD_FRAME + 1;

/// Frame types (docs/uart.md).
pub mod ty {
    pub const WIRE_RX: u8 = 0x01;
    pub const SMA_TX: u8 = 0x02;
    pub const SM_TX: u8 = 0x03;
    pub const TRAP_TX: u8 = 0x04;
    pub const REG_WRITE: u8 = 0x05;
    pub const REG_READ: u8 = 0x06;
    pub const WIRE_TX: u8 = 0x81;
    pub const SMA_RX: u8 = 0x82;
    pub const SM_RX: u8 = 0x83;
    pub const REG_READ_RESP: u8 = 0x86;
}

/// Board register addresses (0xC0..).
pub mod board_reg {
    pub const CTRL: u8 = 0xC0;
    pub const FRAMES_OK: u8 = 0xC1;
    pub const CRC_ERR: u8 = 0xC2;
    pub const FRAME_ERR: u8 = 0xC3;
    pub const OVERRUN: u8 = 0xC4;
    pub const TX_FRAMES: u8 = 0xC5;
    pub const TX_DROP: u8 = 0xC6;
    pub const CAPS: u8 = 0xC7;
}

/// The payload lengths a frame type allows, or None for an unknown type.
fn len_ok(t: u8, len: usize) -> Option<bool> {
    Some(match t {
        ty::WIRE_RX | ty::WIRE_TX => (1..=MAX_WIRE).contains(&len),
        ty::SMA_TX | ty::SM_TX | ty::TRAP_TX => len == MAD_FRAME,
        ty::REG_WRITE | ty::REG_READ_RESP => len == 5,
        ty::REG_READ => len == 1,
        ty::SMA_RX => len == SMA_RX_FRAME,
        ty::SM_RX => len == RX_MAD_FRAME,
        _ => return None,
    })
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub ty: u8,
    pub payload: Vec<u8>,
}

/// The bytes of one frame on the line.
pub fn encode(ty: u8, payload: &[u8]) -> Result<Vec<u8>> {
    match len_ok(ty, payload.len()) {
        Some(true) => {}
        Some(false) => bail!(
            "frame type {ty:#04x}: {} payload bytes is not allowed",
            payload.len()
        ),
        None => bail!("unknown frame type {ty:#04x}"),
    }
    let len = payload.len() as u16;
    let mut out = Vec::with_capacity(payload.len() + 6);
    out.push(SYNC);
    out.push(ty);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(payload);
    let c = crc::vcrc(&out[1..]);
    out.extend_from_slice(&c.to_le_bytes());
    Ok(out)
}

/// Streaming parser of board → host (or host → board) bytes.
#[derive(Debug, Default)]
pub struct Deframer {
    buf: VecDeque<u8>,
    /// Headers refused (unknown type, wrong length) and frames with a bad CRC.
    pub refused: u64,
    pub crc_errors: u64,
}

impl Deframer {
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend(bytes);
    }

    /// The next complete frame, if the bytes so far hold one.
    pub fn next_frame(&mut self) -> Option<Frame> {
        loop {
            while self.buf.front().is_some_and(|&b| b != SYNC) {
                self.buf.pop_front();
            }
            if self.buf.len() < 4 {
                return None;
            }
            let t = self.buf[1];
            let len = usize::from(u16::from_le_bytes([self.buf[2], self.buf[3]]));
            if len_ok(t, len) != Some(true) {
                self.refused += 1;
                self.buf.pop_front();
                continue;
            }
            if self.buf.len() < 4 + len + 2 {
                return None;
            }
            let body: Vec<u8> = self.buf.range(1..4 + len).copied().collect();
            let got = u16::from_le_bytes([self.buf[4 + len], self.buf[5 + len]]);
            if crc::vcrc(&body) != got {
                self.crc_errors += 1;
                self.buf.pop_front();
                continue;
            }
            self.buf.drain(..4 + len + 2);
            return Some(Frame {
                ty: t,
                payload: body[3..].to_vec(),
            });
        }
    }
}

/// What the board sends up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoardEvent {
    /// A packet the port transmitted (LRH..VCRC).
    WireTx(Vec<u8>),
    /// A MAD for the SMA, with its RX meta.
    SmaRx(Box<Mad>, SmiMeta),
    /// A MAD for the SM, with its RX meta.
    SmRx(Box<Mad>, SmiMeta),
}

fn rx_mad(p: &[u8]) -> (Box<Mad>, SmiMeta) {
    let meta = SmiMeta {
        slid: u16::from_le_bytes([p[0], p[1]]),
        dlid: u16::from_le_bytes([p[2], p[3]]),
        sl: p[4],
        port: p[5],
        mgmt_class: p[6],
        hop_ptr: p[7],
        hop_cnt: p[8],
        ..SmiMeta::default()
    };
    let mut m = Box::new([0u8; 256]);
    m.copy_from_slice(&p[12..12 + 256]);
    (m, meta)
}

/// A CA port on a board behind a byte stream (a serial port, or the
/// simulated board's pseudo-terminal). Register writes go out as frames;
/// the first I/O error is kept and returned by [`BoardPort::take_error`] and
/// every later call, since [`PortRegisters::write_reg`] cannot return one.
pub struct BoardPort<L: Read + Write> {
    link: L,
    de: Deframer,
    events: VecDeque<BoardEvent>,
    reg_resp: VecDeque<(u8, u32)>,
    error: Option<anyhow::Error>,
    /// Frames sent and received.
    pub sent: u64,
    pub received: u64,
}

impl<L: Read + Write> BoardPort<L> {
    pub fn new(link: L) -> Self {
        BoardPort {
            link,
            de: Deframer::default(),
            events: VecDeque::new(),
            reg_resp: VecDeque::new(),
            error: None,
            sent: 0,
            received: 0,
        }
    }

    pub fn take_error(&mut self) -> Result<()> {
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    pub fn send(&mut self, ty: u8, payload: &[u8]) -> Result<()> {
        self.take_error()?;
        let f = encode(ty, payload)?;
        self.link
            .write_all(&f)
            .context("writing to the serial line")?;
        self.link.flush().context("writing to the serial line")?;
        self.sent += 1;
        Ok(())
    }

    /// A wire packet (LRH..VCRC) into the port's wire RX.
    pub fn wire_rx(&mut self, pkt: &[u8]) -> Result<()> {
        self.send(ty::WIRE_RX, pkt)
    }

    /// An SMA response for the request whose RX meta is `req`.
    pub fn sma_tx(&mut self, mad: &Mad, req: &SmiMeta) -> Result<()> {
        let mut p = Vec::with_capacity(MAD_FRAME);
        p.extend_from_slice(&req.slid.to_le_bytes());
        p.extend_from_slice(&req.dlid.to_le_bytes());
        p.extend_from_slice(&[req.sl, 0, 0, 0]);
        p.extend_from_slice(mad);
        self.send(ty::SMA_TX, &p)
    }

    /// Read what the line holds now (up to `wait`), parse it into events.
    fn pump(&mut self, wait: Duration) -> Result<()> {
        self.take_error()?;
        let deadline = Instant::now() + wait;
        let mut buf = [0u8; 4096];
        loop {
            match self.link.read(&mut buf) {
                Ok(0) => bail!("the serial line was closed"),
                Ok(n) => {
                    self.de.push(&buf[..n]);
                    break;
                }
                Err(e) if matches!(e.kind(), ErrorKind::TimedOut | ErrorKind::WouldBlock) => {
                    if Instant::now() >= deadline {
                        break;
                    }
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e).context("reading the serial line"),
            }
        }
        while let Some(f) = self.de.next_frame() {
            self.received += 1;
            let p = &f.payload;
            match f.ty {
                ty::WIRE_TX => self.events.push_back(BoardEvent::WireTx(f.payload)),
                ty::SMA_RX => {
                    let (m, mut meta) = rx_mad(p);
                    meta.mkey_viol = p[RX_MAD_FRAME] & 1 != 0;
                    meta.mkey_mask = p[RX_MAD_FRAME] & 2 != 0;
                    self.events.push_back(BoardEvent::SmaRx(m, meta));
                }
                ty::SM_RX => {
                    let (m, meta) = rx_mad(p);
                    self.events.push_back(BoardEvent::SmRx(m, meta));
                }
                ty::REG_READ_RESP => {
                    self.reg_resp
                        .push_back((p[0], u32::from_le_bytes([p[1], p[2], p[3], p[4]])));
                }
                other => bail!("the board sent a host → board frame type {other:#04x}"),
            }
        }
        Ok(())
    }

    /// The next event, waiting up to `timeout` for one.
    pub fn poll(&mut self, timeout: Duration) -> Result<Option<BoardEvent>> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(e) = self.events.pop_front() {
                return Ok(Some(e));
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            self.pump((deadline - now).min(Duration::from_millis(20)))?;
        }
    }

    /// Read a port or board register (REG_READ, then its REG_READ_RESP).
    /// Events that arrive meanwhile are kept for [`BoardPort::poll`].
    pub fn read_reg(&mut self, addr: u8, timeout: Duration) -> Result<u32> {
        self.send(ty::REG_READ, &[addr])?;
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(i) = self.reg_resp.iter().position(|r| r.0 == addr) {
                return Ok(self.reg_resp.remove(i).expect("index from position").1);
            }
            let now = Instant::now();
            if now >= deadline {
                bail!("no REG_READ_RESP for register {addr:#04x} within {timeout:?}");
            }
            self.pump((deadline - now).min(Duration::from_millis(20)))?;
        }
    }
}

impl<L: Read + Write> PortRegisters for BoardPort<L> {
    fn write_reg(&mut self, addr: u8, value: u32) {
        if self.error.is_some() {
            return;
        }
        let mut p = vec![addr];
        p.extend_from_slice(&value.to_le_bytes());
        if let Err(e) = self.send(ty::REG_WRITE, &p) {
            self.error = Some(e.context(format!("writing register {addr:#04x}")));
        }
    }
}

/// Open a serial port for the board: 8N1 at `baud`, no flow control.
pub fn open_serial(path: &str, baud: u32) -> Result<Box<dyn serialport::SerialPort>> {
    serialport::new(path, baud)
        .data_bits(serialport::DataBits::Eight)
        .parity(serialport::Parity::None)
        .stop_bits(serialport::StopBits::One)
        .flow_control(serialport::FlowControl::None)
        .timeout(Duration::from_millis(20))
        .open()
        .map_err(|e| {
            crate::proto::InputError(format!(
                "--serial {path}: cannot open it at {baud} baud: {e}"
            ))
            .into()
        })
}

#[derive(Debug, Clone)]
pub struct SerialOptions {
    pub lid: u16,
    pub lmc: u8,
    /// The replay ends when the board has been silent this long.
    pub quiet: Duration,
    pub linktype: LinkType,
}

/// `vl15 replay --serial`: every pcap packet goes to the board as WIRE_RX,
/// one at a time; the Rust SMA (the same code as for the Verilated port)
/// answers each SMA_RX; every WIRE_TX is written to the output pcap, its
/// timestamp being its position (a serial line has no shared cycle count).
pub fn replay_serial<L: Read + Write>(
    board: &mut BoardPort<L>,
    input: &Path,
    output: &Path,
    o: &SerialOptions,
) -> Result<String> {
    crate::run::replay::check_lid_lmc(o.lid, o.lmc)?;
    let cap = pcap::read_pcap(input)?;
    let mut sma = Sma::new(SmaConfig::vector_v2_ca());
    let id = board
        .read_reg(reg::ID, Duration::from_secs(2))
        .context("is a vl15 board on the line?")?;
    if id != reg::ID_VALUE {
        bail!("register 0x00 reads {id:#010x}, not the vl15 ID 0x564c3135");
    }
    sma.assign(board, 1, o.lid, o.lmc, 0)?;
    board.take_error()?;
    let mut out = Vec::new();
    let mut to_sm = 0u64;
    let mut to_sma = 0u64;
    let mut skipped = 0u64;
    for r in &cap.records {
        if r.data.is_empty() {
            skipped += 1;
            continue;
        }
        if r.data.len() > MAX_WIRE {
            bail!(
                "a {}-byte packet is longer than the board's {MAX_WIRE}-byte frames",
                r.data.len()
            );
        }
        board.wire_rx(&r.data)?;
        // Serve everything this packet causes before the next one goes out
        // (the board buffers two frames: docs/uart.md, host rule).
        while let Some(ev) = board.poll(o.quiet)? {
            match ev {
                BoardEvent::SmaRx(m, meta) => {
                    to_sma += 1;
                    if let Some(resp) = sma.handle(&m, &meta, board) {
                        board.sma_tx(&resp, &meta)?;
                    }
                    // Trap 256 for an M_Key violation (the board's verdict
                    // byte): TRAP_TX, TX meta ignored (docs/uart.md)
                    if let Some(t) = sma.take_new_trap() {
                        board.send(ty::TRAP_TX, &[&[0u8; 8][..], &t[..]].concat())?;
                    }
                    board.take_error()?;
                }
                BoardEvent::SmRx(..) => to_sm += 1,
                BoardEvent::WireTx(p) => out.push(PcapRecord {
                    cycle: out.len() as u64,
                    data: p,
                    ..Default::default()
                }),
            }
        }
    }
    pcap::write_pcap(output, o.linktype, &out)?;
    let mut s = String::new();
    writeln!(
        s,
        "replay --serial: {} packets in ({skipped} empty skipped), {} out to {}, {to_sm} to the SM, \
         {to_sma} to the SMA",
        cap.records.len() as u64 - skipped,
        out.len(),
        output.display(),
    )?;
    writeln!(s, "board counters:")?;
    for (name, a) in [
        ("FramesOk", board_reg::FRAMES_OK),
        ("CrcErr", board_reg::CRC_ERR),
        ("FrameErr", board_reg::FRAME_ERR),
        ("Overrun", board_reg::OVERRUN),
        ("TxFrames", board_reg::TX_FRAMES),
        ("TxDrop", board_reg::TX_DROP),
    ] {
        writeln!(
            s,
            "  {name:<10} {}",
            board.read_reg(a, Duration::from_secs(2))?
        )?;
    }
    writeln!(
        s,
        "host parser: {} refused headers, {} CRC errors",
        board.de.refused, board.de.crc_errors
    )?;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vcrc_check_value_is_the_documented_one() {
        // docs/uart.md: CRC-16 poly 0x100B reflected, init/xorout 0xFFFF,
        // check value over "123456789" = 0x0A3D (ibspec §3).
        assert_eq!(crc::vcrc(b"123456789"), 0x0A3D);
    }

    #[test]
    fn reg_read_frame_layout() {
        let f = encode(ty::REG_READ, &[0x00]).unwrap();
        assert_eq!(&f[..5], &[SYNC, 0x06, 0x01, 0x00, 0x00]);
        let c = crc::vcrc(&[0x06, 0x01, 0x00, 0x00]);
        assert_eq!(&f[5..], &c.to_le_bytes());
    }

    #[test]
    fn lengths_are_checked_per_type() {
        assert!(encode(ty::SMA_TX, &[0; 263]).is_err());
        assert!(encode(ty::WIRE_RX, &[]).is_err());
        assert!(encode(ty::WIRE_RX, &[0; MAX_WIRE + 1]).is_err());
        assert!(encode(0x42, &[0]).is_err());
        assert!(encode(ty::SMA_TX, &[0; MAD_FRAME]).is_ok());
    }

    #[test]
    fn deframer_resyncs_after_garbage_and_bad_crc() {
        let a = encode(ty::REG_READ_RESP, &[1, 2, 3, 4, 5]).unwrap();
        let b = encode(ty::WIRE_TX, &[9; 30]).unwrap();
        let mut bad = b.clone();
        bad[10] ^= 0x40;
        let mut line = vec![0x00, SYNC, 0x77, 0x13];
        line.extend_from_slice(&bad);
        line.extend_from_slice(&a);
        line.extend_from_slice(&[SYNC]);
        line.extend_from_slice(&b);
        let mut d = Deframer::default();
        // Byte by byte: a frame is only complete at its last byte.
        let mut got = Vec::new();
        for x in &line {
            d.push(&[*x]);
            while let Some(f) = d.next_frame() {
                got.push(f);
            }
        }
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].ty, ty::REG_READ_RESP);
        assert_eq!(got[0].payload, vec![1, 2, 3, 4, 5]);
        assert_eq!(got[1].payload, vec![9; 30]);
        assert_eq!(d.crc_errors, 1);
        assert!(d.refused >= 1);
    }
}
