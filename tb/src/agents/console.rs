//! ibsim's console on `vl15 serve`: its command language (`printf 'help\n' |
//! ibsim -s FILE` lists it), read from stdin, from `--script FILE` and from
//! `!file`, applied to the RTL fabric between two simulated cycles.
//!
//! [`execute`] runs one command on the fabric, in the server's thread, and
//! answers what ibsim prints (its wording, with a `#` first where ibsim has
//! one). [`Frontend`] is the prompt side, in its own thread: it expands
//! `!file`, sleeps on `Wait` (the simulation goes on) and hands every other
//! line to the server.
//!
//! What reads the RTL: `Dump` (PortState, LID, LMC, MasterSMLID of every
//! CA port and switch port 0, LinearFDBTop, PortStateChange and the LFT
//! from the RTL registers; width, speed and GUIDs from the node's SMA) and
//! `Route` (the same registers, hop by hop). What writes it: `Link`,
//! `Unlink`, `ReLink`, `Clear` (the cable's `link_up_i`, so the RTL ports
//! change PortState and the switches send Trap 128), `Baselid` and `Clear`
//! (the LID registers, through the SMA), `PerformanceSet` (the RTL
//! counters, through their simulation-only write path), `Error` (faults on
//! the cable into the port: [`crate::model::wirefault`]).

use std::io::{BufRead, Write};
use std::path::Path;
use std::time::Duration;

use crate::agents::gmp;
use crate::agents::node_sma::Net;
use crate::model::net::{quoted_id, End};
use crate::model::regmap::{mpreg, reg, swreg};
use crate::model::wirefault::{FaultClass, FaultSpec};

/// ibsim's `MAXHOPS`: the longest path `Route` follows.
const MAX_HOPS: usize = 16;
/// `!file` inside `!file` inside …: at most this deep.
const MAX_FILE_DEPTH: usize = 8;

/// What the server does with a console line it ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Done {
    /// Print this (empty: nothing, as ibsim prints nothing on success).
    Text(String),
    /// Print this and stop serving.
    Quit(String),
    /// `Attached`: the server lists its clients ([`client_line`]).
    ListClients,
    /// `X <n>`: the server disconnects client n.
    Disconnect(i64),
}

/// The console's own settings.
#[derive(Debug, Clone)]
pub struct ConsoleState {
    /// `Verbose`: 0 silent, 1 also says what each command changed.
    pub verbose: u32,
    /// Seeds of `Error` without `seed=`: from this one, in order.
    pub seed: u64,
    errors_set: u64,
}

impl ConsoleState {
    pub fn new(seed: u64) -> ConsoleState {
        ConsoleState {
            verbose: 0,
            seed,
            errors_set: 0,
        }
    }

    fn next_seed(&mut self) -> u64 {
        self.errors_set += 1;
        crate::model::stream::Rng::new(
            self.seed ^ self.errors_set.wrapping_mul(0x9E37_79B9_7F4A_7C15),
        )
        .next_u64()
    }
}

/// ibsim's help, with what vl15 adds to `Error`.
pub const HELP: &str = "\
sim> Commands:
\t!<filename> - run commands from the file
\tStart network
\tDump [\"nodeid\"] : dump node information in network
\tRoute <from-lid> <to-lid>
\tLink \"nodeid\"[port] \"remoteid\"[port]
\tReLink \"nodeid\" : restore previously unconnected link(s) of the node
\tReLink \"nodeid\"[port] : restore previously unconnected link
\tUnlink \"nodeid\" : remove all links of the node
\tUnlink \"nodeid\"[port]
\tClear \"nodeid\" : unlink & reset all links of the node
\tClear \"nodeid\"[port] : unlink & reset port
\tGuid \"nodeid\" : set GUID value for this node
\tGuid \"nodeid\"[port] : set GUID value for this port
\tError \"nodeid\"[port] <error-rate> [attribute] [vcrc|icrc|truncate] [seed=N]: set error rate for
\t\t\tport/node, optionally for specified attribute ID
\t\t\tSome common attribute IDs:
\t\t\t\tNodeDescription : 16
\t\t\t\tNodeInfo        : 17
\t\t\t\tSwitchInfo      : 18
\t\t\t\tPortInfo        : 21
\t\t\trate: percent (0..100) of the packets arriving at the port
\t\t\tcorrupted on its cable: a bad VCRC (default), a bad ICRC,
\t\t\tor truncated; seed: of the draws (printed when not given)
\tPerformanceSet \"nodeid\"[port] [attribute].[field]=[value] : set perf. counters values
\tBaselid \"nodeid\"[port] <lid> [lmc] : change port's lid (lmc)
\tVerbose [newlevel] - show/set simulator verbosity
\t\t\t0 - silent
\t\t\t1 - debug verbose
\tWait <sec> : suspend simulator prompt
\tAttached : list attached clients
\tX <client num> : (force) disconnect client
\t#... : comment line (for scripts) - ignored
\tHelp/?
\tQuit
";

/// One `Attached` line, as ibsim prints it.
pub fn client_line(
    slot: usize,
    pid: u32,
    node: &str,
    port_guid: u64,
    lid: u16,
    qp: u32,
    issm: bool,
) -> String {
    format!(
        "Client {slot}: pid {pid} connected at \"{node}\" port 0x{port_guid:x}, lid {lid}, qp {qp} {}\n",
        if issm { "SM" } else { "" }
    )
}

/// The first word of a console line and the line from it on (leading
/// blanks gone).
pub fn split_word(line: &str) -> (&str, &str) {
    let line = line.trim_start();
    let end = line.find(char::is_whitespace).unwrap_or(line.len());
    (&line[..end], line)
}

/// Run one console line on the fabric. Never fails: what goes wrong is
/// one line of text, as ibsim answers it.
pub fn execute(net: &mut Net, st: &mut ConsoleState, raw: &str) -> Done {
    let (word, line) = split_word(raw);
    let line = line.trim_end_matches(['\n', '\r']);
    if line.is_empty() {
        return Done::Text(String::new());
    }
    if line.starts_with('#') {
        return Done::Text(format!("{line}\n"));
    }
    let r = match word.to_ascii_lowercase().as_str() {
        "dump" => dump(net, line),
        "route" => route(net, line),
        "link" | "unlink" | "relink" => cables(net, st, &word.to_ascii_lowercase(), line),
        "clear" => clear(net, st, line),
        "guid" => guid(net, line),
        "error" => error(net, st, line),
        "baselid" => baselid(net, line),
        "performanceset" => perf_set(net, line),
        "start" => Ok(String::new()),
        "verbose" => {
            if let Some(n) = line.split_whitespace().nth(1) {
                st.verbose = parse_num(n).unwrap_or(0) as u32;
            }
            Ok(format!("simulator verbose level is {}\n", st.verbose))
        }
        "wait" => {
            Ok("# Wait suspends the prompt: give it on the console, not to the server\n".into())
        }
        "attached" => return Done::ListClients,
        "x" => {
            let n = line
                .split_whitespace()
                .nth(1)
                .and_then(parse_signed)
                .unwrap_or(-1);
            return Done::Disconnect(n);
        }
        "help" | "?" => Ok(HELP.to_string()),
        "quit" => return Done::Quit("Exiting network simulator.\n".into()),
        _ => Err(format!("command '{line}' unknown - skipped")),
    };
    match r {
        Ok(t) => Done::Text(t),
        Err(e) => Done::Text(format!("{e}\n")),
    }
}

/// A number as C's `strtoul(s, NULL, 0)` reads one (0x… hex, 0… octal,
/// else decimal), but all of `s` must be it.
pub fn parse_num(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if s.len() > 1 && s.starts_with('0') {
        u64::from_str_radix(&s[1..], 8).ok()
    } else {
        s.parse().ok()
    }
}

fn parse_signed(s: &str) -> Option<i64> {
    match s.strip_prefix('-') {
        Some(r) => parse_num(r).and_then(|v| i64::try_from(v).ok()).map(|v| -v),
        None => parse_num(s).and_then(|v| i64::try_from(v).ok()),
    }
}

/// `"nodeid"[port] rest` after the command word: (id, port text, rest).
struct NodeArg<'a> {
    id: String,
    port: Option<&'a str>,
    rest: &'a str,
}

fn node_arg<'a>(line: &'a str, what: &str) -> Result<NodeArg<'a>, String> {
    let (_, args) = line.split_at(line.find(char::is_whitespace).unwrap_or(line.len()));
    node_arg_in(args).ok_or_else(|| format!("# {what}: bad parameter in \"{line}\""))
}

/// `"nodeid"[port] rest` at the start of `args` (blanks first allowed).
fn node_arg_in(args: &str) -> Option<NodeArg<'_>> {
    let (id, after) = quoted_id(args.trim_start()).ok()?;
    let id = id.to_string();
    let (port, rest) = match after.strip_prefix('[') {
        Some(b) => match b.find(']') {
            Some(c) => (Some(&b[..c]), &b[c + 1..]),
            None => (Some(b), ""),
        },
        None => (None, after),
    };
    Some(NodeArg { id, port, rest })
}

fn find_node(net: &Net, id: &str) -> Result<usize, String> {
    net.dev_index(id)
        .ok_or_else(|| format!("# nodeid \"{id}\" ({id}) not found"))
}

/// A port number in `[..]`, within `lo..=nports`.
fn port_in(
    net: &Net,
    d: usize,
    text: &str,
    lo: u8,
    bad: impl Fn(i64) -> String,
) -> Result<u8, String> {
    let v = parse_signed(text).unwrap_or(-1);
    match u8::try_from(v) {
        Ok(p) if p >= lo && p <= net.devs[d].nports => Ok(p),
        _ => Err(bad(v)),
    }
}

// ---------------------------------------------------------------------------
// Cables

/// Whether the port has a cable that is up.
fn linked(net: &Net, d: usize, p: u8) -> bool {
    net.link_at(d, p).is_some_and(|l| net.links[l].up)
}

fn cables(net: &mut Net, st: &ConsoleState, word: &str, line: &str) -> Result<String, String> {
    let a = node_arg(line, word)?;
    let d = find_node(net, &a.id)?;
    let canon = match word {
        "link" => {
            let Some(pt) = a.port else {
                return Err("# no local port".into());
            };
            let p = port_in(net, d, pt, 1, |v| {
                format!("# nodeid \"{}\": bad port {v}", a.id)
            })?;
            let b = node_arg_in(a.rest)
                .ok_or_else(|| format!("# link: no remote \"nodeid\"[port] in \"{line}\""))?;
            let e = find_node(net, &b.id)?;
            let Some(qt) = b.port else {
                return Err("# no remote port".into());
            };
            let q = port_in(net, e, qt, 1, |v| {
                format!("# nodeid \"{}\": bad port {v}", b.id)
            })?;
            if linked(net, d, p) || linked(net, e, q) || (d, p) == (e, q) {
                return Err("# can't link: local/remote port are already connected".into());
            }
            format!("Link \"{}\"[{p}] \"{}\"[{q}]", a.id, b.id)
        }
        _ => match a.port {
            Some(pt) => {
                let p = port_in(net, d, pt, 1, |v| {
                    format!("# can't {word} port {v} at nodeid \"{}\"", a.id)
                })?;
                let up = linked(net, d, p);
                if word == "unlink" && !up {
                    return Err(format!("# port {p} at nodeid \"{}\" is not linked", a.id));
                }
                if word == "relink" && (up || net.link_at(d, p).is_none()) {
                    return Err("# no previous link stored".into());
                }
                format!("{word} \"{}\"[{p}]", a.id)
            }
            None => format!("{word} \"{}\"", a.id),
        },
    };
    let changed = net.console(&canon).map_err(|e| {
        let s = format!("{e:#}");
        format!("# {}", s.strip_prefix("console: ").unwrap_or(&s))
    })?;
    Ok(if st.verbose > 0 {
        changed
    } else {
        String::new()
    })
}

fn clear(net: &mut Net, st: &ConsoleState, line: &str) -> Result<String, String> {
    let a = node_arg(line, "unlink")?;
    let d = find_node(net, &a.id)?;
    let ports: Vec<u8> = match a.port {
        Some(pt) => vec![port_in(net, d, pt, 1, |v| {
            format!("# can't unlink port {v} at nodeid \"{}\"", a.id)
        })?],
        None => {
            let lo = u8::from(!net.devs[d].is_switch);
            (lo..=net.devs[d].nports).collect()
        }
    };
    let mut out = String::new();
    for p in ports {
        if p > 0 && linked(net, d, p) {
            out += &cables(net, st, "unlink", &format!("Unlink \"{}\"[{p}]", a.id))?;
        }
        if let Some(w) = net.devs[d].agent_mut().reset_port_lids(p) {
            net.apply_hw_writes(d, &w);
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// Identity and LIDs

fn guid(net: &mut Net, line: &str) -> Result<String, String> {
    let a = node_arg(line, "set_guid")?;
    let d = find_node(net, &a.id)?;
    let sw = net.devs[d].is_switch;
    let port = match a.port {
        Some(pt) => Some(port_in(net, d, pt, u8::from(!sw), |v| {
            format!("# can't parse port {v} at nodeid \"{}\"", a.id)
        })?),
        None => None,
    };
    let text = a.rest.trim();
    let g = parse_num(text).ok_or_else(|| format!("# set_guid: bad GUID \"{text}\""))?;
    let sma = net.devs[d].agent_mut();
    match port {
        Some(p) if !sw => {
            sma.set_port_guid(p, g);
        }
        // A switch's ports all carry its NodeGUID.
        _ => sma.set_node_guid(g),
    }
    Ok(String::new())
}

fn baselid(net: &mut Net, line: &str) -> Result<String, String> {
    let a = node_arg(line, "change baselid")?;
    let d = find_node(net, &a.id)?;
    let sw = net.devs[d].is_switch;
    let pt = a.port.ok_or("# change baselid: missing portnum")?;
    let p = port_in(net, d, pt, u8::from(!sw), |v| {
        format!("# can't change baselid for port {v} at nodeid \"{}\"", a.id)
    })?;
    let mut args = a.rest.split_whitespace();
    let lid = args
        .next()
        .and_then(parse_num)
        .filter(|&l| l != 0 && l < 0xC000)
        .ok_or("# change baselid: bad lid")? as u16;
    let lmc = match args.next() {
        Some(t) => Some(
            parse_num(t)
                .filter(|&m| m <= 7)
                .ok_or_else(|| format!("# change baselid: bad lmc {t}"))? as u8,
        ),
        None => None,
    };
    let w = net.devs[d]
        .agent_mut()
        .set_port_lid(p, lid, lmc)
        .ok_or_else(|| format!("# \"{}\"[{p}] has no LID: a switch's LID is port 0's", a.id))?;
    net.apply_hw_writes(d, &w);
    Ok(String::new())
}

// ---------------------------------------------------------------------------
// Faults

fn error(net: &mut Net, st: &mut ConsoleState, line: &str) -> Result<String, String> {
    let a = node_arg(line, "set error")?;
    let d = find_node(net, &a.id)?;
    let sw = net.devs[d].is_switch;
    let ports: Vec<u8> = match a.port {
        Some(pt) => {
            let p = port_in(net, d, pt, u8::from(!sw), |v| {
                format!("# bad port number {v} at nodeid \"{}\"", a.id)
            })?;
            if p == 0 {
                return Err(format!(
                    "# port 0 of \"{}\" is the switch's management port, not a cable: name an external port",
                    a.id
                ));
            }
            if net.link_at(d, p).is_none() {
                return Err(format!("# port {p} at nodeid \"{}\" has no cable", a.id));
            }
            vec![p]
        }
        None => (1..=net.devs[d].nports)
            .filter(|&p| net.link_at(d, p).is_some())
            .collect(),
    };
    let mut args = a.rest.split_whitespace();
    let rate_text = args.next().ok_or("# error rate is missing")?;
    let rate = parse_num(rate_text)
        .ok_or_else(|| format!("# error rate '{rate_text}' is not a number"))?;
    if rate > 100 {
        return Err(format!("# error rate must be in [0..100] range ({rate})"));
    }
    let mut attr = None;
    let mut class = FaultClass::Vcrc;
    let mut seed = None;
    for t in args {
        if let Some(s) = t.strip_prefix("seed=") {
            seed = Some(parse_num(s).ok_or_else(|| format!("# bad seed '{s}'"))?);
        } else if let Some(c) = FaultClass::parse(t) {
            class = c;
        } else if let Some(v) = parse_num(t) {
            let v = u16::try_from(v).map_err(|_| format!("# bad attribute ID {t}"))?;
            attr = (v != 0).then_some(v);
        } else {
            return Err(format!(
                "# error: '{t}' is neither an attribute ID, a class (vcrc, icrc, truncate) nor seed=N"
            ));
        }
    }
    let mut out = String::new();
    for p in ports {
        if rate == 0 {
            net.set_wire_fault(d, p, None)
                .map_err(|e| format!("# {e:#}"))?;
            out += &format!("# error rate 0 at \"{}\"[{p}]: no faults\n", a.id);
            continue;
        }
        let seed = seed.unwrap_or_else(|| st.next_seed());
        let spec = FaultSpec {
            rate: rate as u8,
            attr,
            class,
            seed,
        };
        net.set_wire_fault(d, p, Some(spec))
            .map_err(|e| format!("# {e:#}"))?;
        out += &format!(
            "# error rate {rate}% of the packets into \"{}\"[{p}]{}: {} (seed=0x{seed:x})\n",
            a.id,
            attr.map(|v| format!(" with attribute {v}"))
                .unwrap_or_default(),
            match class {
                FaultClass::Vcrc => "bad VCRC",
                FaultClass::Icrc => "bad ICRC",
                FaultClass::Truncate => "truncated",
            }
        );
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// Counters

fn perf_set(net: &mut Net, line: &str) -> Result<String, String> {
    const FORMAT: &str =
        "# command does not match: PerformanceSet \"nodeid\"[port] [attribute].[field]=[value]";
    let a = node_arg(line, "PerformanceSet").map_err(|_| FORMAT.to_string())?;
    let d = find_node(net, &a.id)?;
    let pt = a.port.ok_or("# port number not found in command")?;
    let sw = net.devs[d].is_switch;
    let p = port_in(net, d, pt, u8::from(!sw), |v| {
        format!("# bad port number {v} at nodeid \"{}\"", a.id)
    })?;
    let rest = a.rest.trim();
    let (attr, rest) = rest.split_once('.').ok_or(FORMAT)?;
    let (field, value) = rest.split_once('=').ok_or(FORMAT)?;
    let (attr, field, value) = (attr.trim(), field.trim(), value.trim());
    let v = parse_num(value).ok_or_else(|| format!("# value '{value}' is not valid integer"))?;
    gmp::set_counter(net, d, p, attr, field, v).map_err(|e| format!("# {e}"))?;
    Ok(format!(
        "{}[{p}] {attr}.{field} has been set to {v}\n",
        net.devs[d].name
    ))
}

// ---------------------------------------------------------------------------
// Dump and Route: from the RTL registers

/// What the RTL holds of a LID port (a CA port or switch port 0).
struct LidRegs {
    lid: u16,
    lmc: u8,
    sm_lid: u16,
}

fn lid_regs(net: &mut Net, d: usize, p: u8) -> anyhow::Result<LidRegs> {
    if net.devs[d].is_switch {
        Ok(LidRegs {
            lid: net.read_reg(d, swreg::PORT0_LID)? as u16,
            // Switch port 0 has no LMC register: the SMA's.
            lmc: net.devs[d].agent().port_lmc(0).unwrap_or(0),
            sm_lid: net.read_reg(d, swreg::MASTER_SM_LID)? as u16,
        })
    } else {
        Ok(LidRegs {
            lid: net.read_reg(d, mpreg::port(p, reg::PORT_LID))? as u16,
            lmc: net.read_reg(d, mpreg::port(p, reg::PORT_LMC))? as u8 & 7,
            sm_lid: net.read_reg(d, mpreg::port(p, reg::MASTER_SM_LID))? as u16,
        })
    }
}

/// The switch's LFT entry for `lid` (0xFF: none) from its RTL.
fn lft_entry(net: &mut Net, d: usize, lid: u16) -> anyhow::Result<u8> {
    let w = net.read_reg(d, swreg::LFT_BASE + lid / 4)?;
    Ok((w >> (8 * (lid % 4))) as u8)
}

const PORT_STATES: [&str; 5] = ["-", "Down", "Init", "Armed", "Active"];
const WIDTHS: [(u8, &str); 5] = [(1, " 1x"), (2, " 4x"), (4, " 8x"), (8, "12x"), (16, " 2x")];
const SPEEDS: [(u8, &str); 3] = [(1, " 2.5G"), (2, " 5.0G"), (4, "10.0G")];
const SPEEDS_EXT: [(u8, &str); 4] = [(1, " 14G"), (2, " 25G"), (4, "50G"), (8, "100G")];

fn name_of(table: &[(u8, &'static str)], v: u8) -> &'static str {
    table.iter().find(|(k, _)| *k == v).map_or("?", |(_, s)| s)
}

fn dump(net: &mut Net, line: &str) -> Result<String, String> {
    let want = node_arg(line, "dump").ok().map(|a| a.id);
    let now = chrono::Local::now().format("%a %b %e %H:%M:%S %Y");
    let mut out = format!("# Net status - {now}\n");
    let mut n = 0;
    for d in 0..net.devs.len() {
        if want.as_deref().is_some_and(|w| w != net.devs[d].name) {
            continue;
        }
        dump_node(net, d, &mut out).map_err(|e| format!("# dump: {e:#}"))?;
        n += 1;
    }
    match want {
        Some(w) if n == 0 => return Err(format!("# nodeid \"{w}\" not found")),
        _ => out += &format!("#  dumped {n} nodes\n"),
    }
    Ok(out)
}

fn dump_node(net: &mut Net, d: usize, out: &mut String) -> anyhow::Result<()> {
    let sw = net.devs[d].is_switch;
    let np = net.devs[d].nports;
    let id = net.devs[d].agent().identity().clone();
    let kind = match id.kind {
        crate::proto::topology::NodeKind::Switch => "Switch",
        crate::proto::topology::NodeKind::Ca => "Ca",
        _ => "Router",
    };
    *out += &format!(
        "\n{kind} {np} \"{}\"\tnodeguid {:x}\tsysimgguid {:x}\n",
        net.devs[d].name, id.node_guid, id.sys_image_guid
    );
    if sw {
        let top = net.read_reg(d, swreg::LINEAR_FDB_TOP)? as usize;
        let change = net.read_reg(d, swreg::PORT_STATE_CHANGE)? & 1;
        *out += &format!(
            "#\tlinearcap {} FDBtop {top} portchange {change}\n",
            id.lft_depth
        );
        // ibsim's rows: 16 entries, the last one up to FDBtop inclusive;
        // each LFT word (4 entries) read once.
        let words = if top == 0 { 0 } else { top / 4 + 1 };
        let lft = (0..words)
            .map(|w| net.read_reg(d, swreg::LFT_BASE + w as u16))
            .collect::<anyhow::Result<Vec<u32>>>()?;
        let mut i = 0;
        while i < top {
            let end = if i + 16 >= top { top + 1 } else { i + 16 };
            *out += &format!("#\tForwarding table {i}-{}:", end - 1);
            for j in i..end {
                let e = (lft[j / 4] >> (8 * (j % 4))) as u8;
                *out += &format!(" [{j}]{e:X}");
            }
            out.push('\n');
            i += 16;
        }
    }
    let first = u8::from(!sw);
    for p in first..=np {
        // A CA port's LID registers first: those reads clock the fabric,
        // so a cable change just made (Unlink, Clear) has reached the
        // port's PortState before it is read.
        let lids = if sw && p > 0 {
            None
        } else {
            Some(lid_regs(net, d, p)?)
        };
        let state = net.devs[d].port_state(p);
        let guid = id.port_guid(p);
        let peer = (p > 0).then(|| net.peer(d, p)).flatten();
        if state == 1 || state == 0 {
            *out += &format!("{guid:x}\t[{p}]\t\t");
        } else {
            let (rn, rp) = match peer {
                Some((e, q)) => (net.devs[e].name.clone(), q),
                None => ("Sma Port".to_string(), 0),
            };
            *out += &format!("{guid:x}\t[{p}]\t\"{rn}\"[{rp}]");
        }
        let link = net.devs[d].agent().port_link(p).unwrap_or_default();
        let speed = if link.speed_ext_active != 0 {
            name_of(&SPEEDS_EXT, link.speed_ext_active)
        } else {
            name_of(&SPEEDS, link.speed_active)
        };
        let width = name_of(&WIDTHS, link.width_active);
        let st = PORT_STATES.get(usize::from(state)).copied().unwrap_or("?");
        let phys = if state >= 2 { "LinkUp" } else { "Polling" };
        let mut comment = String::new();
        if let Some(f) = (p > 0).then(|| net.wire_fault(d, p)).flatten() {
            comment += &format!("\t# err_rate {}", f.spec.rate);
            if let Some(a) = f.spec.attr {
                comment += &format!("\t# err_attr {a}");
            }
            comment += &format!(
                "\t# err_class {}\t# err_seed 0x{:x}\t# err_corrupted {}",
                f.spec.class.name(),
                f.spec.seed,
                f.corrupted
            );
        }
        match lids {
            None => *out += &format!("\t {width} {speed} {st}/{phys}{comment}\n"),
            Some(r) => {
                *out += &format!(
                    "\t lid {} lmc {} smlid {} {width} {speed} {st}/{phys}{comment}\n",
                    r.lid, r.lmc, r.sm_lid
                );
            }
        }
    }
    Ok(())
}

/// For each of `lids`, the LID port (device, port) whose LID range holds
/// it: one pass over the RTL registers.
fn find_lids<const N: usize>(net: &mut Net, lids: [u16; N]) -> anyhow::Result<[Option<End>; N]> {
    let mut found = [None; N];
    for d in 0..net.devs.len() {
        let ports: Vec<u8> = if net.devs[d].is_switch {
            vec![0]
        } else {
            (1..=net.devs[d].nports).collect()
        };
        for p in ports {
            let r = lid_regs(net, d, p)?;
            let top = u32::from(r.lid) + (1 << r.lmc);
            for (f, &lid) in found.iter_mut().zip(&lids) {
                if f.is_none() && r.lid != 0 && lid >= r.lid && u32::from(lid) < top {
                    *f = Some((d, p));
                }
            }
        }
    }
    Ok(found)
}

fn route(net: &mut Net, line: &str) -> Result<String, String> {
    let mut it = line.split_whitespace().skip(1);
    let (Some(a), Some(b)) = (it.next(), it.next()) else {
        return Err("bad params. Usage: route from-lid lid".into());
    };
    let from = parse_num(a).unwrap_or(0);
    let to = parse_num(b).unwrap_or(0);
    if from == 0 || to == 0 || from > 0xFFFF || to > 0xFFFF {
        return Err("bad lid value. Usage: route from-lid to-lid".into());
    }
    route_walk(net, from as u16, to as u16).map_err(|e| format!("# route: {e:#}"))?
}

fn route_walk(net: &mut Net, from: u16, to: u16) -> anyhow::Result<Result<String, String>> {
    let [Some(src), Some(dst)] = find_lids(net, [from, to])? else {
        return Ok(Err(
            "to/from lid unconfigured. Usage: route from-lid to-lid".into(),
        ));
    };
    let (mut d, mut p) = src;
    let mut out = format!("From node \"{}\" port {p} lid {from}\n", net.devs[d].name);
    for _ in 0..MAX_HOPS {
        let state = net.devs[d].port_state(p);
        if state != 4 && !(net.devs[d].is_switch && p == 0) {
            return Ok(Err(format!(
                "{out}Bad port state found: node \"{}\" port {p} state {state}",
                net.devs[d].name
            )));
        }
        if (d, p) == dst {
            out += &format!("To node \"{}\" port {p} lid {to}\n", net.devs[d].name);
            return Ok(Ok(out));
        }
        let mut outp = p;
        if net.devs[d].is_switch {
            let top = net.read_reg(d, swreg::LINEAR_FDB_TOP)? as u16;
            let e = lft_entry(net, d, to)?;
            let bad = || {
                format!(
                    "{out}Bad forwarding table entry found at: node \"{}\" lid entry {to} is {e} (top {top})",
                    net.devs[d].name
                )
            };
            if e == 0xFF || to > top || e > net.devs[d].nports {
                return Ok(Err(bad()));
            }
            outp = e;
            if e == 0 {
                if (d, 0) == dst {
                    // ibsim names the port the packet came in on here.
                    out += &format!("To node \"{}\" port {p} lid {to}\n", net.devs[d].name);
                    return Ok(Ok(out));
                }
                return Ok(Err(bad()));
            }
            let s = net.devs[d].port_state(e);
            if s != 4 {
                return Ok(Err(format!(
                    "{out}Bad out port state found: node \"{}\" outport {e} state {s}",
                    net.devs[d].name
                )));
            }
        }
        let Some((e, q)) = net.peer(d, outp).filter(|_| linked(net, d, outp)) else {
            return Ok(Err(format!(
                "{out}Bad out port state found: node \"{}\" outport {outp} state 1",
                net.devs[d].name
            )));
        };
        d = e;
        p = q;
        out += &format!("[{outp}] -> \"{}\"[{p}]\n", net.devs[d].name);
    }
    Ok(Err(format!("{out}no route found after {MAX_HOPS} hops")))
}

// ---------------------------------------------------------------------------
// The prompt side

/// What a frontend does after a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Go,
    Quit,
}

/// What a [`Frontend`] hands a line to: its text and whether to quit, or
/// None when the server is gone.
pub type Exec<'a> = dyn FnMut(&str) -> Option<(String, bool)> + Send + 'a;

/// The prompt side of the console: reads lines, expands `!file`, waits
/// on `Wait`, and hands the rest to `exec` (which runs them in the server,
/// between cycles, and returns their text and whether to quit).
pub struct Frontend<'a> {
    exec: Box<Exec<'a>>,
    out: Box<dyn Write + Send + 'a>,
    /// Print ibsim's `sim> ` prompt after each line read from the input.
    pub prompt: bool,
}

impl<'a> Frontend<'a> {
    pub fn new(
        exec: impl FnMut(&str) -> Option<(String, bool)> + Send + 'a,
        out: impl Write + Send + 'a,
    ) -> Frontend<'a> {
        Frontend {
            exec: Box::new(exec),
            out: Box::new(out),
            prompt: true,
        }
    }

    fn print(&mut self, s: &str) {
        // A closed stdout ends nothing: the server goes on serving.
        let _ = self.out.write_all(s.as_bytes());
        let _ = self.out.flush();
    }

    /// Every line of `input`, with a prompt after each; until its end or
    /// `Quit`.
    pub fn run(&mut self, input: impl BufRead) -> Flow {
        if self.prompt {
            self.print("sim> ");
        }
        for line in input.lines() {
            let Ok(line) = line else {
                self.print("# console: input is not text; the console stops here\n");
                return Flow::Go;
            };
            if self.line(&line, 0) == Flow::Quit {
                return Flow::Quit;
            }
            if self.prompt {
                self.print("sim> ");
            }
        }
        Flow::Go
    }

    /// The commands of file `path` (`!file`, `--script`).
    pub fn run_file(&mut self, path: &Path, depth: usize) -> Flow {
        if depth >= MAX_FILE_DEPTH {
            self.print(&format!(
                "do_cmd_from_file: '{}' nested deeper than {MAX_FILE_DEPTH} files - skip\n",
                path.display()
            ));
            return Flow::Go;
        }
        let text = match std::fs::read(path) {
            Ok(t) => String::from_utf8_lossy(&t).into_owned(),
            Err(e) => {
                self.print(&format!(
                    "do_cmd_from_file: cannot open file '{}': {e}\n",
                    path.display()
                ));
                return Flow::Go;
            }
        };
        for line in text.lines() {
            if self.line(line, depth + 1) == Flow::Quit {
                return Flow::Quit;
            }
        }
        Flow::Go
    }

    /// One line.
    pub fn line(&mut self, line: &str, depth: usize) -> Flow {
        let (word, rest) = split_word(line);
        if let Some(f) = rest.strip_prefix('!') {
            let f = f.trim();
            if f.is_empty() {
                self.print("do_cmd_from_file: no file name - skip\n");
                return Flow::Go;
            }
            return self.run_file(Path::new(f), depth);
        }
        if word.eq_ignore_ascii_case("wait") {
            let secs = rest
                .split_whitespace()
                .nth(1)
                .and_then(parse_num)
                .unwrap_or(0);
            if secs == 0 {
                self.print(&format!(
                    "wait: bad param {}\n",
                    rest.split_whitespace().nth(1).unwrap_or("0")
                ));
            } else {
                std::thread::sleep(Duration::from_secs(secs));
            }
            return Flow::Go;
        }
        match (self.exec)(line) {
            Some((text, quit)) => {
                self.print(&text);
                if quit {
                    Flow::Quit
                } else {
                    Flow::Go
                }
            }
            None => Flow::Quit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_strtoul_base_0() {
        assert_eq!(parse_num("17"), Some(17));
        assert_eq!(parse_num("0x15"), Some(0x15));
        assert_eq!(parse_num("017"), Some(15));
        assert_eq!(parse_num("0"), Some(0));
        assert_eq!(parse_num("1x"), None);
        assert_eq!(parse_signed("-1"), Some(-1));
    }

    #[test]
    fn node_arguments_parse_as_ibsim_writes_them() {
        let a = node_arg("Unlink \"Switch1\"[3]", "unlink").unwrap();
        assert_eq!((a.id.as_str(), a.port, a.rest), ("Switch1", Some("3"), ""));
        let a = node_arg("Error \"H 1\" 10 21", "set error").unwrap();
        assert_eq!(
            (a.id.as_str(), a.port, a.rest.trim()),
            ("H 1", None, "10 21")
        );
        assert!(node_arg("Unlink Switch1", "unlink").is_err());
        assert!(node_arg("Unlink \"Switch1", "unlink").is_err());
    }

    /// `Dump` right after a cable change, with no cycle in between, shows
    /// the change: the CA port's register reads clock the fabric before
    /// its PortState is read.
    #[test]
    fn dump_right_after_unlink_shows_the_port_down() {
        let text = include_str!("../../../tests/topologies/net.2sw2path4hca");
        let topo =
            crate::proto::topology::Topology::parse(text, Path::new("net.2sw2path4hca")).unwrap();
        let mut net = Net::new(topo, crate::model::net::NetOptions::default()).unwrap();
        net.run_until_idle(100_000).unwrap();
        let mut st = ConsoleState::new(1);
        let mut run = |l: &str| match execute(&mut net, &mut st, l) {
            Done::Text(t) => t,
            _ => panic!("{l}: not text"),
        };
        let port1 = |t: &str| {
            t.lines()
                .find(|l| l.contains("\t[1]\t"))
                .unwrap_or_else(|| panic!("no port 1 in {t}"))
                .to_string()
        };
        let before = port1(&run("Dump \"Hca3\""));
        assert!(
            before.contains("\"Switch1\"[2]") && before.ends_with("Init/LinkUp"),
            "{before}"
        );
        assert_eq!(run("Unlink \"Hca3\"[1]"), "");
        let after = port1(&run("Dump \"Hca3\""));
        assert!(after.ends_with("Down/Polling"), "{after}");
    }

    #[test]
    fn the_frontend_expands_files_and_waits_itself() {
        let dir = tempfile::tempdir().unwrap();
        let inner = dir.path().join("inner");
        std::fs::write(&inner, "Dump\n# note\n").unwrap();
        let outer = dir.path().join("outer");
        std::fs::write(&outer, format!("!{}\nQuit\nDump\n", inner.display())).unwrap();
        let mut seen = Vec::new();
        let mut buf = Vec::new();
        {
            let mut f = Frontend::new(
                |l: &str| {
                    seen.push(l.to_string());
                    Some((format!("ran {l}\n"), l == "Quit"))
                },
                &mut buf,
            );
            f.prompt = false;
            assert_eq!(f.run_file(&outer, 0), Flow::Quit);
            assert_eq!(f.line("!/nonexistent/x", 0), Flow::Go);
            assert_eq!(f.line("Wait x", 0), Flow::Go);
        }
        assert_eq!(seen, ["Dump", "# note", "Quit"]);
        let text = String::from_utf8(buf).unwrap();
        assert!(text.contains("cannot open file '/nonexistent/x'"), "{text}");
        assert!(text.contains("wait: bad param x"), "{text}");
    }
}
