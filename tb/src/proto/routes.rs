//! What infiniband-diags' `ibroute` and `ibtracert` print, computed from a
//! state file ([`crate::proto::state`]) instead of SMPs: a switch's linear
//! forwarding table, and the path LID routing takes from one LID to another
//! through the LFTs and cables of the file (`vl15 routes`).
//!
//! The text is theirs (infiniband-diags 44):
//!
//! ```text
//! Unicast lids [0x0-0x6] of switch Lid 2 guid 0x0000000000200000 (Switch1):
//!   Lid  Out   Destination
//!        Port     Info
//! 0x0001 001 : (Channel Adapter portguid 0x0000000000100001: 'Hca1')
//! ...
//! 6 valid lids dumped
//! ```
//!
//! (the header's second line and the trailer end in a space), and
//!
//! ```text
//! From ca {0x0000000000100000} portnum 1 lid 1-1 "Hca1"
//! [1] -> switch port {0x0000000000200000}[1] lid 2-2 "Switch1"
//! [5] -> switch port {0x0000000000200001}[5] lid 3-3 "Switch2"
//! [2] -> ca port {0x000000000010000a}[1] lid 6-6 "Hca4"
//! To ca {0x0000000000100009} portnum 1 lid 6-6 "Hca4"
//! ```
//!
//! ibroute resolves a LID to the port whose LID range (base .. base +
//! 2^LMC - 1) holds it: the base LID of a port with LMC > 0 is shown as the
//! port, the LIDs after it as "path #k out of 2^LMC". Here a LID resolves
//! if a port of the file holds it (ibroute asks the fabric, so a port it
//! cannot reach is "unknown node and type" there). ibroute stops one LID
//! short when LinearFDBTop is a multiple of 64 (it reads blocks up to
//! `ALIGN(top, 64) / 64`); this prints every entry up to LinearFDBTop.

use std::collections::HashSet;
use std::fmt::Write as _;

use thiserror::Error;

use crate::proto::state::{Guid, NodeDump, PortDump, PortState, StateDump};
use crate::proto::topology::NodeKind;

/// NodeInfo.NodeType as ibroute spells it (`mad_dump_nodetype`).
fn ibroute_type(k: NodeKind) -> &'static str {
    match k {
        NodeKind::Ca => "Channel Adapter",
        NodeKind::Switch => "Switch",
        NodeKind::Router => "Router",
    }
}

/// NodeInfo.NodeType as ibtracert spells it.
fn ibtracert_type(k: NodeKind) -> &'static str {
    match k {
        NodeKind::Ca => "ca",
        NodeKind::Switch => "switch",
        NodeKind::Router => "router",
    }
}

/// LIDs a port answers to: (base, last).
fn lid_range(p: &PortDump) -> (u16, u32) {
    let base = p.lid.unwrap_or(0);
    let lmc = p.lmc.unwrap_or(0).min(7);
    (base, u32::from(base) + (1u32 << lmc) - 1)
}

/// The LFT of switch `sw` (an index into `d.nodes`) as `ibroute <lid>`
/// prints it; `all`: with the invalid entries too (`ibroute -a`).
///
/// # Panics
/// If node `sw` is not a switch of a checked file ([`StateDump::check`]).
pub fn ibroute_text(d: &StateDump, sw: usize, all: bool) -> String {
    let node = &d.nodes[sw];
    assert_eq!(node.kind, NodeKind::Switch, "{} is a switch", node.id);
    let lft = node.lft.as_deref().unwrap_or_default();
    let top = node.linear_fdb_top.unwrap_or(0);
    let lid = node.port(0).and_then(|p| p.lid).unwrap_or(0);
    let nports = node.nports();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Unicast lids [0x0-{top:#x}] of switch Lid {lid} guid {} ({}):",
        node.guid, node.description
    );
    s.push_str("  Lid  Out   Destination\n");
    s.push_str("       Port     Info \n");
    // ibroute's dump_lid keeps the last port with LMC > 0 it resolved:
    // (base LID, last LID, its PortGUID).
    let mut lmc_port = (0u32, 0u32, None::<Guid>);
    let mut n = 0;
    for (l, &out) in lft.iter().enumerate().take(usize::from(top) + 1) {
        let l32 = l as u32;
        let valid = out <= nports;
        if !valid && !all {
            continue;
        }
        let info = if l32 <= lmc_port.1 {
            let (base, last, guid) = lmc_port;
            match (valid, guid) {
                (false, _) => format!(": (path #{} - illegal port)", l32 - base),
                (true, None) => format!(": (path #{} out of {})", l32 - base + 1, last - base + 1),
                (true, Some(g)) => format!(
                    ": (path #{} out of {}: portguid {g})",
                    l32 - base + 1,
                    last - base + 1
                ),
            }
        } else if !valid {
            ": (illegal port)".to_string()
        } else {
            lmc_port.2 = None;
            match u16::try_from(l).ok().and_then(|l| d.port_of_lid(l)) {
                None => ": (unknown node and type)".to_string(),
                Some((i, p)) => {
                    let dn = &d.nodes[i];
                    let guid = dn.port_guid(p).unwrap_or(dn.guid);
                    lmc_port.2 = Some(guid);
                    if let Some(port) = dn.port(p).filter(|x| x.lmc.unwrap_or(0) > 0) {
                        let (base, last) = lid_range(port);
                        lmc_port = (u32::from(base), last, Some(guid));
                    }
                    format!(
                        ": ({} portguid {guid}: '{}')",
                        ibroute_type(dn.kind),
                        dn.description
                    )
                }
            }
        };
        let _ = writeln!(s, "{l:#06x} {out:03} {info}");
        n += 1;
    }
    let _ = writeln!(s, "{n} {}lids dumped ", if all { "" } else { "valid " });
    s
}

/// One end of a path, or a port it enters: node, port and that port's
/// LID range as ibtracert shows them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathPort {
    pub node: usize,
    pub kind: NodeKind,
    /// NodeGUID (for the ends) or NodeInfo.PortGUID (for a hop).
    pub guid: Guid,
    /// The port: the one the path leaves (source) or enters (a hop, the
    /// destination); 0 for a switch at an end.
    pub port: u8,
    /// Base and last LID (PortInfo of the port; of port 0 on a switch).
    pub lid: (u16, u32),
    pub description: String,
}

/// One hop: out of port `out` of the previous node into `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hop {
    pub out: u8,
    pub to: PathPort,
}

/// The path LID routing takes from one LID to another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Path {
    pub from: PathPort,
    pub hops: Vec<Hop>,
    pub to: PathPort,
}

/// Why a path cannot be walked.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RouteError {
    #[error("LID {0} is no port's (no port of the state file has it)")]
    NoSuchLid(u16),
    #[error(
        "no route: switch {switch:?} LFT entry for LID {lid} is {entry} (NumPorts {nports}, LinearFDBTop {top})"
    )]
    BadEntry {
        switch: String,
        lid: u16,
        entry: Entry,
        nports: u8,
        top: u16,
    },
    #[error("no route: port {port} of {node:?} has no cable up")]
    NoLink { node: String, port: u8 },
    #[error("no route: port {port} of {node:?} is {state}, not Active")]
    NotActive {
        node: String,
        port: u8,
        state: PortState,
    },
    #[error("no route: the LFTs lead LID {lid} into CA {node:?} port {port}, which is not it")]
    IntoCa { node: String, port: u8, lid: u16 },
    #[error("routing loop: LID {lid} comes back to switch {switch:?} (path {path})")]
    Loop {
        lid: u16,
        switch: String,
        path: String,
    },
}

/// An LFT entry in a [`RouteError::BadEntry`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    Port(u8),
    BeyondTop,
}

impl std::fmt::Display for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Entry::Port(p) => write!(f, "{p}"),
            Entry::BeyondTop => f.write_str("beyond LinearFDBTop"),
        }
    }
}

/// Walk from LID `src` to LID `dst` as ibtracert does: out of the source
/// port (a CA) or by the source switch's LFT, then at each switch by its LFT
/// entry for `dst`, until a port that answers to `dst`. The CA ports on the
/// way must be Active (ibtracert checks them; a switch's external ports it
/// does not).
pub fn trace(d: &StateDump, src: u16, dst: u16) -> Result<Path, RouteError> {
    let (sn, sp) = d.port_of_lid(src).ok_or(RouteError::NoSuchLid(src))?;
    let (tn, tp) = d.port_of_lid(dst).ok_or(RouteError::NoSuchLid(dst))?;
    let idx = d.port_index();
    let end = |n: usize, p: u8| -> PathPort {
        let node = &d.nodes[n];
        let shown = if node.kind == NodeKind::Switch { 0 } else { p };
        PathPort {
            node: n,
            kind: node.kind,
            guid: node.guid,
            port: shown,
            lid: node.port(shown).map_or((0, 0), lid_range),
            description: node.description.clone(),
        }
    };
    let entered = |n: usize, p: u8| -> PathPort {
        let node = &d.nodes[n];
        PathPort {
            guid: node.port_guid(p).unwrap_or(node.guid),
            port: p,
            ..end(n, p)
        }
    };
    // ibtracert's sameport: the same PortGUID (a switch has one).
    let target = d.nodes[tn].port_guid(tp);
    let is_target = |n: usize, p: u8| d.nodes[n].port_guid(p) == target;
    let active = |n: usize, p: u8| -> Result<(), RouteError> {
        let node = &d.nodes[n];
        match node.port(p) {
            Some(x) if node.kind != NodeKind::Switch && x.state != PortState::Active => {
                Err(RouteError::NotActive {
                    node: node.id.clone(),
                    port: p,
                    state: x.state,
                })
            }
            _ => Ok(()),
        }
    };
    let lft_entry = |n: usize| -> Result<u8, RouteError> {
        let node = &d.nodes[n];
        let top = node.linear_fdb_top.unwrap_or(0);
        let nports = node.nports();
        let entry = node
            .lft
            .as_ref()
            .and_then(|l| l.get(usize::from(dst)))
            .copied()
            .filter(|_| dst <= top);
        match entry {
            Some(e) if e <= nports => Ok(e),
            e => Err(RouteError::BadEntry {
                switch: node.id.clone(),
                lid: dst,
                entry: e.map_or(Entry::BeyondTop, Entry::Port),
                nports,
                top,
            }),
        }
    };
    let mut hops: Vec<Hop> = Vec::new();
    let (mut n, mut p) = (sn, sp);
    let mut seen = HashSet::new();
    loop {
        active(n, p)?;
        if is_target(n, p) {
            break;
        }
        let node: &NodeDump = &d.nodes[n];
        let out = if node.kind == NodeKind::Switch {
            if !seen.insert(n) {
                let mut path = d.nodes[sn].id.clone();
                for h in &hops {
                    let _ = write!(path, " -> {}", d.nodes[h.to.node].id);
                }
                return Err(RouteError::Loop {
                    lid: dst,
                    switch: node.id.clone(),
                    path,
                });
            }
            let out = lft_entry(n)?;
            if out == 0 {
                // Port 0 is the switch itself, and it is not the target.
                return Err(RouteError::BadEntry {
                    switch: node.id.clone(),
                    lid: dst,
                    entry: Entry::Port(0),
                    nports: node.nports(),
                    top: node.linear_fdb_top.unwrap_or(0),
                });
            }
            out
        } else if (n, p) == (sn, sp) {
            p
        } else {
            return Err(RouteError::IntoCa {
                node: node.id.clone(),
                port: p,
                lid: dst,
            });
        };
        let (nn, np) = node
            .port(out)
            .and_then(|x| x.neighbour.as_ref())
            .and_then(|nb| idx.get(&(nb.guid, nb.port)).copied())
            .ok_or_else(|| RouteError::NoLink {
                node: node.id.clone(),
                port: out,
            })?;
        hops.push(Hop {
            out,
            to: entered(nn, np),
        });
        (n, p) = (nn, np);
    }
    Ok(Path {
        from: end(sn, sp),
        hops,
        to: end(n, p),
    })
}

impl Path {
    /// The path as `ibtracert <src> <dst>` prints it.
    pub fn text(&self) -> String {
        let end = |prompt: &str, e: &PathPort| {
            format!(
                "{prompt} {} {{{}}} portnum {} lid {}-{} \"{}\"\n",
                ibtracert_type(e.kind),
                e.guid,
                e.port,
                e.lid.0,
                e.lid.1,
                e.description
            )
        };
        let mut s = end("From", &self.from);
        for h in &self.hops {
            let t = &h.to;
            let _ = writeln!(
                s,
                "[{}] -> {} port {{{}}}[{}] lid {}-{} \"{}\"",
                h.out,
                ibtracert_type(t.kind),
                t.guid,
                t.port,
                t.lid.0,
                t.lid.1,
                t.description
            );
        }
        s + &end("To", &self.to)
    }
}
