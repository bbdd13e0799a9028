//! The serial path end to end, without a board: `make board-sim` builds the
//! whole board top (CA port + UART framing, rtl/fpga/ib_ca_board.sv) in
//! Verilator behind a pseudo-terminal, and `vl15 replay --serial <pty>` drives
//! it through the real serial-port code (crate serialport), the UART frame
//! codec and the same Rust SMA as the Verilated-port replay. The packets the
//! board transmits must be those the direct replay of the same input
//! transmits (the spine's replay inputs: the vectors, and LID/LMC routing).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

use vl15::check::scenario::vectors;
use vl15::proto::pcap::{read_pcap, write_pcap, LinkType, PcapRecord};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The board widths `make board-sim` builds: DataW 32 (the ULX3S build) and
/// DataW 8 (the iCEBreaker build).
const WIDTHS: [u32; 2] = [32, 8];

/// The simulated board at `width`: $VL15_BOARD_SIM / $VL15_BOARD_SIM_W8 (set
/// by `make test`), else built here with `make board-sim` (a no-op when it is
/// up to date), once for all the tests of this binary (they run in parallel).
fn board_sim(width: u32) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    let (var, file) = match width {
        8 => ("VL15_BOARD_SIM_W8", "build/board_sim/board_pty_w8"),
        _ => ("VL15_BOARD_SIM", "build/board_sim/board_pty"),
    };
    if let Ok(p) = std::env::var(var) {
        return PathBuf::from(p);
    }
    BUILT.get_or_init(|| {
        let st = Command::new("make")
            .args(["-s", "board-sim"])
            .current_dir(root())
            .status()
            .expect("running make board-sim");
        assert!(st.success(), "make board-sim failed");
    });
    root().join(file)
}

struct Board {
    child: Child,
    pty: String,
}

impl Board {
    fn start(width: u32) -> Board {
        let mut child = Command::new(board_sim(width))
            .stdout(Stdio::piped())
            .spawn()
            .expect("starting the simulated board");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let pty = line.trim().to_string();
        assert!(pty.starts_with("/dev/"), "board_pty printed {line:?}");
        Board { child, pty }
    }
}

impl Drop for Board {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn replay(args: &[&str], input: &Path, out: &Path) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_vl15"))
        .arg("replay")
        .arg(input)
        .arg("-o")
        .arg(out)
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success(),
        "vl15 replay {args:?}: {stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    stdout
}

fn packets(p: &Path) -> Vec<Vec<u8>> {
    read_pcap(p)
        .unwrap()
        .records
        .into_iter()
        .map(|r| r.data)
        .collect()
}

/// Same input through the Verilated port and through the simulated board
/// at `width`.
fn compare(width: u32, input: &Path, extra: &[&str]) -> (Vec<Vec<u8>>, String) {
    let dir = tempfile::tempdir().unwrap();
    let direct = dir.path().join("direct.pcap");
    let serial = dir.path().join("serial.pcap");
    replay(extra, input, &direct);
    let board = Board::start(width);
    let mut args = vec!["--serial", board.pty.as_str(), "--quiet-ms", "150"];
    args.extend_from_slice(extra);
    let report = replay(&args, input, &serial);
    let (a, b) = (packets(&direct), packets(&serial));
    assert_eq!(
        a, b,
        "board (DataW {width}) and Verilated port transmitted different packets\n{report}"
    );
    (b, report)
}

#[test]
fn vectors_through_the_board_match_the_port() {
    let input = root().join("tests/vectors/ibvec.pcap");
    for width in WIDTHS {
        let (out, report) = compare(width, &input, &[]);
        // ibspec §3.3: a CA configured as in V2 answers V1 with exactly V2.
        assert_eq!(out, vec![vectors::V2.to_vec()], "DataW {width}: {report}");
        assert!(report.contains("CrcErr     0"), "DataW {width}: {report}");
        assert!(report.contains("FrameErr   0"), "DataW {width}: {report}");
        assert!(report.contains("Overrun    0"), "DataW {width}: {report}");
        assert!(
            report.contains("0 refused headers, 0 CRC errors"),
            "DataW {width}: {report}"
        );
    }
}

#[test]
fn lid_routing_through_the_board_matches_the_port() {
    use vl15::proto::mad;
    use vl15::proto::packet::{consts::*, Packet};
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.pcap");
    let recs: Vec<PcapRecord> = [0x20u16, 0x21, 0x22]
        .iter()
        .enumerate()
        .map(|(i, dlid)| PcapRecord {
            cycle: i as u64,
            data: Packet::smp_bytes(
                VL15,
                0,
                *dlid,
                1,
                i as u32,
                mad::request(
                    CLASS_SUBN_LID,
                    METHOD_GET,
                    ATTR_NODE_INFO,
                    0,
                    0x100 + i as u64,
                ),
            ),
            ..Default::default()
        })
        .collect();
    write_pcap(&input, LinkType::Infiniband, &recs).unwrap();
    for width in WIDTHS {
        let (out, report) = compare(width, &input, &["--lid", "32", "--lmc", "1"]);
        // LID 0x20 and 0x21 belong to the port (LMC 1), 0x22 does not.
        let slids: Vec<u16> = out
            .iter()
            .map(|p| Packet::parse(p).unwrap().lrh.slid)
            .collect();
        assert_eq!(slids, [0x20, 0x21], "DataW {width}: {report}");
    }
}
