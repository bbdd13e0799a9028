//! infiniband-diags and OpenSM's options through `vl15 serve`, each beside
//! the real ibsim on the same topology file (ibspec §10; `docs/serve.md`,
//! "Tests").
//!
//! A table of tools: each runs against both servers after `opensm -o` on
//! each, and their outputs, parsed into lines and `Field:....value` pairs,
//! must agree but for the fields a row names, with the reason the RTL
//! fabric differs there. A table of OpenSM options: the LFTs they write
//! (`dump_lfts`) must be the same on both. Where ibsim falls short of the
//! IBA (port disable and enable, an SM on a switch, ibping, M_Key), the
//! tests assert the IBA's behaviour: here for M_Key, in `tests/serve.rs`
//! for the rest.

mod common;
use common::*;

use std::path::{Path, PathBuf};

use vl15::agents::ibsim::IbsimServer;
use vl15::agents::serve::{Background, ServeOptions};
use vl15::model::net::NetOptions;

const FILE: &str = "net.2sw2path4hca";

/// `vl15 serve` in this process (stopped on drop).
struct Served {
    sockname: String,
    server: Option<Background>,
}

impl Served {
    fn start(topology: &Path) -> Served {
        let server = Background::start_on(topology, NetOptions::default(), ServeOptions::default())
            .unwrap_or_else(|e| panic!("{e:#}"));
        Served {
            sockname: server.sockname.clone(),
            server: Some(server),
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        stop_server(&mut self.server);
    }
}

/// `tool args` at `node` of server `sockname` under `timeout 20`, in a
/// scratch directory: (exit status 0, stdout).
fn tool(sockname: &str, node: &str, name: &str, args: &[String]) -> (bool, String) {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut c = diag_command(sockname, node, name, &args);
    let scratch = tempfile::tempdir().unwrap();
    let out = c.current_dir(scratch.path()).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// A tool's output as compared: `Field:....value` lines as (field,
/// value), others as they are; fields in `differ` as the reason they may
/// differ.
fn parsed(text: &str, differ: &[(&str, &str)]) -> Vec<(String, String)> {
    text.lines()
        .map(|l| match l.split_once(":.") {
            // perfquery's header: "# Port counters: Lid 6 port 1 (CapMask: 0x400)"
            None if l.contains(" (CapMask: ") => {
                let head = l.split(" (CapMask: ").next().unwrap_or(l).to_string();
                match differ.iter().find(|(d, _)| *d == "CapMask") {
                    Some((_, why)) => (head, format!("<{why}>")),
                    None => (l.to_string(), String::new()),
                }
            }
            Some((f, v)) => {
                let f = f.trim().to_string();
                let v = v.trim_start_matches('.').to_string();
                match differ.iter().find(|(d, _)| *d == f) {
                    Some((_, why)) => (f, format!("<{why}>")),
                    None => (f, v),
                }
            }
            None => (l.to_string(), String::new()),
        })
        .collect()
}

/// The base LID of `node` on `sockname` (`ibaddr` there).
fn lid_of(sockname: &str, node: &str) -> String {
    let (ok, t) = tool(sockname, node, "ibaddr", &[]);
    assert!(ok, "ibaddr at {node}: {t}");
    // "GID fe80::10:a LID start 0x6 end 0x6"
    let hex = t
        .split_whitespace()
        .skip_while(|w| *w != "start")
        .nth(1)
        .unwrap_or_else(|| panic!("ibaddr at {node}: {t}"));
    u16::from_str_radix(hex.trim_start_matches("0x"), 16)
        .unwrap()
        .to_string()
}

struct Row {
    at: &'static str,
    tool: &'static str,
    /// `{Node}` stands for the node's LID.
    args: &'static [&'static str],
    /// Fields that differ on purpose, with the reason.
    differ: &'static [(&'static str, &'static str)],
    /// Fields ibsim prints that the RTL fabric has not, with the reason.
    absent: &'static [(&'static str, &'static str)],
}

/// A row whose fields all agree but for `differ`.
const fn row(
    at: &'static str,
    tool: &'static str,
    args: &'static [&'static str],
    differ: &'static [(&'static str, &'static str)],
) -> Row {
    Row {
        at,
        tool,
        args,
        differ,
        absent: &[],
    }
}

const LFT_CAP: (&str, &str) = ("LinearFdbCap", "the RTL's LFT depth");
const PSC: (&str, &str) = ("StateChange", "the RTL sets it on every PortState change");
// (ibsim 0.10 reads back 4089 after OpenSM's Set of 0)
const LEASE: (&str, &str) = ("MkeyLeasePeriod", "ibsim ignores the Set");
const PMA_CAP: (&str, &str) = ("CapMask", "the PMA's ClassPortInfo, docs/gmp.md");
const XCAST: &str = "the PMA has no unicast/multicast counters, docs/gmp.md";

/// The read-only tools, at a CA and at a switch. (`ibportstate … query`
/// fails on ibsim, whose directed route to the peer port is lost; it is
/// tested with disable and enable in `tests/serve.rs`.)
const ROWS: &[Row] = &[
    row("Hca1", "ibnetdiscover", &[], &[]),
    row("Switch2", "ibnetdiscover", &["-p"], &[]),
    row("Hca1", "ibswitches", &[], &[]),
    row("Hca1", "ibhosts", &[], &[]),
    row("Hca4", "iblinkinfo", &[], &[]),
    row("Hca1", "ibroute", &["{Switch1}"], &[]),
    row("Hca2", "ibroute", &["{Switch2}"], &[]),
    row("Hca1", "ibtracert", &["{Hca1}", "{Hca4}"], &[]),
    row("Switch1", "ibtracert", &["{Hca3}", "{Hca2}"], &[]),
    row("Hca1", "smpquery", &["nodeinfo", "{Hca4}"], &[]),
    row("Hca1", "smpquery", &["nodeinfo", "{Switch2}"], &[]),
    row("Hca1", "smpquery", &["nodedesc", "{Hca3}"], &[]),
    row("Hca1", "smpquery", &["portinfo", "{Hca4}", "1"], &[LEASE]),
    row(
        "Hca1",
        "smpquery",
        &["switchinfo", "{Switch1}"],
        &[LFT_CAP, PSC],
    ),
    row("Hca1", "smpquery", &["pkeys", "{Hca4}", "1"], &[]),
    row("Hca1", "smpquery", &["sl2vl", "{Switch1}", "1"], &[]),
    row("Hca1", "smpquery", &["vlarb", "{Hca4}", "1"], &[]),
    row("Hca1", "smpquery", &["guidinfo", "{Hca4}"], &[]),
    row("Hca1", "ibaddr", &["{Hca3}"], &[]),
    row("Hca1", "ibqueryerrors", &[], &[]),
    row("Hca1", "dump_lfts", &[], &[]),
    row("Hca1", "perfquery", &["{Hca4}", "1"], &[PMA_CAP]),
    Row {
        at: "Hca2",
        tool: "perfquery",
        args: &["-x", "{Hca4}", "1"],
        differ: &[PMA_CAP],
        absent: &[
            ("PortUnicastXmitPkts", XCAST),
            ("PortUnicastRcvPkts", XCAST),
            ("PortMulticastXmitPkts", XCAST),
            ("PortMulticastRcvPkts", XCAST),
        ],
    },
    // read and reset, then read what was counted since
    row("Hca2", "perfquery", &["-r", "{Switch2}", "1"], &[PMA_CAP]),
    row("Hca2", "perfquery", &["{Switch2}", "1"], &[PMA_CAP]),
];

/// The rows of `rows` on topology `file` (whose `nodes` the rows name as
/// `{Node}`), beside ibsim, after `opensm -o` at the file's Hca1.
fn beside_ibsim(file: &str, nodes: &[&str], rows: &[Row]) {
    let path = topo(file);
    let ibsim = IbsimServer::start(&path).unwrap_or_else(|e| panic!("{e:#}"));
    let ours = Served::start(&path);
    let socks = [ibsim.sockname().to_string(), ours.sockname.clone()];
    for s in &socks {
        opensm_once(s, "Hca1", &[]);
    }
    let lids: Vec<(String, String)> = nodes
        .iter()
        .map(|n| (format!("{{{n}}}"), lid_of(&ours.sockname, n)))
        .collect();
    for (k, v) in &lids {
        let on_ibsim = lid_of(ibsim.sockname(), &k[1..k.len() - 1]);
        assert_eq!(&on_ibsim, v, "OpenSM gave {k} the same LID on both");
    }
    let mut compared = 0;
    for r in rows {
        let args: Vec<String> = r
            .args
            .iter()
            .map(|a| {
                lids.iter()
                    .find(|(k, _)| k == a)
                    .map_or_else(|| a.to_string(), |(_, v)| v.clone())
            })
            .collect();
        let (ok_a, want) = tool(ibsim.sockname(), r.at, r.tool, &args);
        let (ok_b, got) = tool(&ours.sockname, r.at, r.tool, &args);
        assert!(ok_a, "{} {args:?} at {} on ibsim: {want}", r.tool, r.at);
        assert!(ok_b, "{} {args:?} at {} on vl15 serve: {got}", r.tool, r.at);
        let mut want_p = parsed(&want, r.differ);
        want_p.retain(|(f, _)| !r.absent.iter().any(|(a, _)| a == f));
        assert_eq!(
            parsed(&got, r.differ),
            want_p,
            "{} {args:?} at {}: vl15 serve (left) vs ibsim (right)",
            r.tool,
            r.at
        );
        compared += 1;
    }
    assert_eq!(compared, rows.len());
}

#[test]
fn the_diags_print_what_they_print_on_ibsim() {
    let nodes = ["Hca1", "Hca2", "Hca3", "Hca4", "Switch1", "Switch2"];
    beside_ibsim(FILE, &nodes, ROWS);
}

/// 2-port CAs, each homed on one switch by both ports, the switches
/// joined twice (`net.2sw2path4hca2port`).
const ROWS_2PORT: &[Row] = &[
    row("Hca1", "ibnetdiscover", &[], &[]),
    row("Hca2", "ibnetdiscover", &[], &[]),
    row("Hca1", "iblinkinfo", &[], &[]),
    row("Hca1", "ibroute", &["{Switch1}"], &[]),
    row("Hca2", "ibroute", &["{Switch2}"], &[]),
    row("Hca1", "ibtracert", &["{Hca1}", "{Hca2}"], &[]),
    row("Hca1", "smpquery", &["nodeinfo", "{Hca2}"], &[]),
    row("Hca1", "smpquery", &["portinfo", "{Hca2}", "2"], &[LEASE]),
    row("Hca1", "smpquery", &["pkeys", "{Hca2}", "2"], &[]),
    row("Hca1", "ibaddr", &["{Hca2}"], &[]),
    row("Hca1", "dump_lfts", &[], &[]),
];

#[test]
fn the_diags_print_what_they_print_on_ibsim_with_2_port_cas() {
    let nodes = ["Hca1", "Hca2", "Switch1", "Switch2"];
    beside_ibsim("net.2sw2path4hca2port", &nodes, ROWS_2PORT);
}

/// A root GUID file for up/down routing: Switch1 (0x200000, the first
/// switch's GUID in ibsim's numbering).
fn root_guids(dir: &Path) -> String {
    let p = dir.join("roots");
    std::fs::write(&p, "0x0000000000200000\n").unwrap();
    p.to_string_lossy().into_owned()
}

/// OpenSM's routing engines and LMC write the same LFTs through the RTL as
/// on ibsim: `dump_lfts` of every switch after `opensm -o` with each.
#[test]
fn routing_engines_and_lmc_write_the_lfts_they_write_on_ibsim() {
    let dir = tempfile::tempdir().unwrap();
    let roots = root_guids(dir.path());
    let fat = dir.path().join("fattree8");
    std::fs::write(&fat, vl15::proto::fattree::two_level(8).unwrap()).unwrap();
    let first_ca = |p: &Path| -> String {
        let t = std::fs::read_to_string(p).unwrap();
        let l = t
            .lines()
            .find(|l| l.starts_with("Hca") || l.starts_with("Ca"))
            .unwrap();
        l.split('"').nth(1).unwrap().to_string()
    };
    let cases: Vec<(PathBuf, Vec<&str>)> = vec![
        (topo(FILE), vec!["-R", "minhop"]),
        (topo(FILE), vec!["-R", "updn", "-a", &roots]),
        (topo(FILE), vec!["-R", "dor"]),
        (topo(FILE), vec!["-R", "lash"]),
        (topo(FILE), vec!["-l", "1"]),
        (topo(FILE), vec!["-l", "2"]),
        (topo("net.2sw2path"), vec!["-R", "updn"]),
        (fat.clone(), vec!["-R", "ftree"]),
    ];
    for (path, args) in &cases {
        let ibsim = IbsimServer::start(path).unwrap_or_else(|e| panic!("{e:#}"));
        let ours = Served::start(path);
        let sm = first_ca(path);
        let mut dumps = Vec::new();
        for s in [ibsim.sockname(), ours.sockname.as_str()] {
            opensm_once(s, &sm, args);
            let (ok, t) = tool(s, &sm, "dump_lfts", &[]);
            assert!(ok && t.contains("Unicast lids"), "dump_lfts on @{s}: {t}");
            dumps.push(t);
        }
        assert_eq!(
            dumps[1],
            dumps[0],
            "opensm -o {args:?} on {}: vl15 serve (left) vs ibsim (right)",
            path.display()
        );
    }
}

/// An OpenSM options file setting M_Key `key` at protection `level`.
fn mkey_conf(dir: &Path, key: u64, level: u8) -> String {
    let p = dir.join(format!("opensm-mkey{level}.conf"));
    std::fs::write(
        &p,
        format!("m_key 0x{key:016x}\nm_key_protection_level {level}\nm_key_lease_period 0\n"),
    )
    .unwrap();
    p.to_string_lossy().into_owned()
}

/// OpenSM's M_Key at protection levels 1, 2 and 3 (ibsim models no M_Key:
/// the IBA's behaviour, as the RTL's M_Key check gives it). A Get of
/// PortInfo without the key: at 1 it is answered with M_Key read as 0, at 2
/// and 3 it gets no answer; with the key (`-y`) it is answered with the
/// key. A Set without the key (`ibportstate disable`) changes nothing.
#[test]
fn opensm_m_key_protects_ports_at_every_level() {
    const KEY: u64 = 0x0123_4567_89AB_CDEF;
    let dir = tempfile::tempdir().unwrap();
    for level in [1u8, 2, 3] {
        let ours = Served::start(&topo(FILE));
        let conf = mkey_conf(dir.path(), KEY, level);
        opensm_once(&ours.sockname, "Hca1", &["-F", &conf]);
        let hca4 = lid_of(&ours.sockname, "Hca4");
        let q = |args: &[&str]| {
            let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            tool(&ours.sockname, "Hca2", "smpquery", &a)
        };
        let key = format!("0x{KEY:x}");
        // -y: the diags' M_Key
        let (ok, t) = q(&["-y", &key, "portinfo", &hca4, "1"]);
        assert!(
            ok && t.contains("LinkState:"),
            "level {level}, with the key: {t}"
        );
        let (ok, t) = q(&["portinfo", &hca4, "1"]);
        if level == 1 {
            assert!(ok && t.contains("LinkState:"), "level 1, no key: {t}");
        } else {
            assert!(
                !ok,
                "level {level}: a Get without the key was answered: {t}"
            );
        }
        // a Set without the key is refused at every level: the port stays
        let sw1 = lid_of(&ours.sockname, "Switch1");
        let port = |args: &[&str]| {
            let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            tool(&ours.sockname, "Hca2", "ibportstate", &a)
        };
        let (ok, t) = port(&[&sw1, "2", "disable"]);
        assert!(
            !ok,
            "level {level}: a disable without the key went through: {t}"
        );
        let (ok, t) = port(&["-y", &key, &sw1, "2", "query"]);
        assert!(
            ok && t.contains("PhysLinkState:...................LinkUp"),
            "level {level}: {t}"
        );
    }
}
