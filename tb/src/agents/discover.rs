//! Fabric discovery over directed-route SMPs, and the topology text that
//! `ibnetdiscover` prints for the result.
//!
//! [`discover`] is the algorithm of libibnetdisc (rdma-core
//! `libibnetdisc/ibnetdisc.c`, `query_smp.c`, as shipped in Debian 12
//! infiniband-diags 44.0), run over an abstract [`SmpTransport`]:
//!
//! * every query is a DR `SubnGet` along a path from the transport's port;
//!   queries wait in one FIFO and each answer is handled in issue order (the
//!   order libibnetdisc's SMP engine handles them when answers come back in
//!   the order sent, as they do from ibsim);
//! * `NodeInfo` of a path: a new NodeGUID makes a node (then `NodeDescription`,
//!   and for switches `SwitchInfo` and `PortInfo` of port 0, whose answer
//!   queues `PortInfo` of ports 1..N); a known one only links ports; a CA or
//!   router queries `PortInfo` of the port it was reached on
//!   (NodeInfo.LocalPortNum); the port it was reached through and that port
//!   are linked both ways;
//! * after `PortInfo` of port p: if p ≠ 0, PhysState = LinkUp, and the node
//!   is a switch and p ≠ PortInfo.LocalPortNum (not the way in), or p is the
//!   start port of the start node, the path extended by p is queried for
//!   `NodeInfo`;
//! * Mellanox devices (libibnetdisc's DeviceID list) with a LinkUp QDR port
//!   without extended speed first get `MlnxExtPortInfo` (0xFF90) of that
//!   port (for the FDR10 flag), and only its answer — or its error —
//!   continues the walk, as with ibnetdiscover's default `IBND_CONFIG_MLX_EPI`.
//!
//! Errors on single queries (status ≠ 0, transport errors/timeouts) are kept
//! in [`Discovered::errors`] and the walk goes on, as libibnetdisc logs and
//! goes on; only a failure of the very first `NodeInfo` fails [`discover`].
//!
//! [`format_ibnetdiscover`] prints the result exactly as ibnetdiscover's
//! `dump_topology` does (no grouping, no node-name map). The one line that
//! cannot match is the `# Topology file: generated on <ctime>` line;
//! [`normalize_generated_line`] blanks its date for comparisons.

use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{anyhow, bail, Context, Result};

use crate::agents::node_sma::Net;
use crate::model::device::AddressHandle;
use crate::model::net::{Net as NetOf, NetOptions};
use crate::model::node_hw::NodeAgent;
use crate::proto::mad::{self, Mad};
use crate::proto::packet::attr::{NodeInfo, PortInfo};
use crate::proto::packet::consts::*;
use crate::proto::topology::Topology;

/// Delivers one directed-route SMP and returns the matching response.
pub trait SmpTransport {
    /// `req` is a complete DR SubnGet built by [`discover`]
    /// (`mad::dr_request`, HopPointer 0, permissive DrSLID/DrDLID, the path in
    /// InitialPath\[1..=HopCount\]). Return the GetResp with the same TID (a
    /// transport may change TID bits the fabric owns, e.g. ibsim's 63:48).
    fn query(&mut self, req: &Mad) -> Result<Mad>;
}

/// Longest DR path libibnetdisc builds (`add_port_to_dpath`: 63 hops).
pub const MAX_PATH: usize = 63;

/// Discovery options.
#[derive(Debug, Clone)]
pub struct DiscoverConfig {
    /// Query MlnxExtPortInfo on Mellanox LinkUp QDR ports, as ibnetdiscover
    /// does by default (`IBND_CONFIG_MLX_EPI`).
    pub mlx_epi: bool,
    /// Give up after this many SMPs (a guard against a transport that
    /// invents ever new nodes; libibnetdisc has none).
    pub max_smps: usize,
    /// Shows the nodes found so far (a hidden bar draws nothing).
    pub progress: Option<indicatif::ProgressBar>,
}

impl Default for DiscoverConfig {
    fn default() -> Self {
        DiscoverConfig {
            mlx_epi: true,
            max_smps: 1 << 20,
            progress: None,
        }
    }
}

/// One discovered port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DPort {
    pub num: u8,
    /// PortGUID (from the NodeInfo answered through this port; else the
    /// node's first NodeInfo PortGUID, as libibnetdisc).
    pub guid: u64,
    /// Raw PortInfo, once answered.
    pub info: Option<[u8; 64]>,
    /// Raw MlnxExtPortInfo, when queried and answered.
    pub ext_info: Option<[u8; 64]>,
    /// PortInfo LID/LMC; for switch ports 1..N those of port 0.
    pub base_lid: u16,
    pub lmc: u8,
    /// (node index, port number) at the other end.
    pub remote: Option<(usize, u8)>,
}

impl DPort {
    fn new(num: u8, guid: u64) -> DPort {
        DPort {
            num,
            guid,
            info: None,
            ext_info: None,
            base_lid: 0,
            lmc: 0,
            remote: None,
        }
    }

    /// Decoded PortInfo (all zeros if never answered, as libibnetdisc's
    /// zero-filled `port->info`).
    pub fn port_info(&self) -> PortInfo {
        self.info
            .and_then(|i| PortInfo::decode(&i).ok())
            .unwrap_or_default()
    }
}

/// One discovered node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DNode {
    /// The first NodeInfo answer, raw.
    pub info_raw: [u8; 64],
    pub info: NodeInfo,
    /// NodeDescription, raw (zeros if never answered).
    pub desc: [u8; 64],
    /// SwitchInfo, raw (switches, once answered).
    pub switch_info: Option<[u8; 64]>,
    /// SwitchInfo.EnhancedPort0.
    pub enhanced_port0: bool,
    /// LID/LMC of PortInfo port 0 (switches: the management port).
    pub sma_lid: u16,
    pub sma_lmc: u8,
    /// The DR path the node was first reached by.
    pub path: Vec<u8>,
    /// `ports[p]` for p in 0..=NumPorts.
    pub ports: Vec<Option<DPort>>,
}

impl DNode {
    pub fn guid(&self) -> u64 {
        self.info.node_guid
    }
    pub fn node_type(&self) -> u8 {
        self.info.node_type
    }
    pub fn is_switch(&self) -> bool {
        self.info.node_type == NODE_TYPE_SWITCH
    }
    pub fn port(&self, p: u8) -> Option<&DPort> {
        self.ports.get(usize::from(p)).and_then(|p| p.as_ref())
    }
    /// NodeDescription as ibnetdiscover prints it (`clean_nodedesc`): at most
    /// 63 bytes up to the first NUL, every non-printable byte a blank.
    pub fn description(&self) -> String {
        self.desc[..63]
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| {
                if (0x20..0x7f).contains(&c) {
                    c as char
                } else {
                    ' '
                }
            })
            .collect()
    }
}

/// What [`discover`] found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Discovered {
    /// In creation (first NodeInfo answer) order.
    pub nodes: Vec<DNode>,
    /// Index of the node the transport is attached to.
    pub from_node: usize,
    /// Its port (NodeInfo.LocalPortNum of the first answer).
    pub from_port: u8,
    /// SMPs sent.
    pub smps: usize,
    /// Queries that failed (status or transport error), in order.
    pub errors: Vec<String>,
}

impl Discovered {
    /// Node index by NodeGUID.
    pub fn find(&self, guid: u64) -> Option<usize> {
        self.nodes.iter().position(|n| n.guid() == guid)
    }

    /// Nodes of one type in ibnetdiscover's list order: libibnetdisc prepends
    /// each new node to its type list, so newest first.
    pub fn nodes_of_type(&self, node_type: u8) -> impl Iterator<Item = (usize, &DNode)> {
        self.nodes
            .iter()
            .enumerate()
            .rev()
            .filter(move |(_, n)| n.node_type() == node_type)
    }
}

#[derive(Debug, Clone)]
enum Query {
    NodeInfo {
        path: Vec<u8>,
        from: Option<(usize, u8)>,
    },
    NodeDesc {
        path: Vec<u8>,
        node: usize,
    },
    SwitchInfo {
        path: Vec<u8>,
        node: usize,
    },
    PortInfo {
        path: Vec<u8>,
        node: usize,
        port: u8,
    },
    MlnxExtPortInfo {
        path: Vec<u8>,
        node: usize,
        port: u8,
    },
}

impl Query {
    fn path(&self) -> &[u8] {
        match self {
            Query::NodeInfo { path, .. }
            | Query::NodeDesc { path, .. }
            | Query::SwitchInfo { path, .. }
            | Query::PortInfo { path, .. }
            | Query::MlnxExtPortInfo { path, .. } => path,
        }
    }
    fn attr(&self) -> (u16, u32) {
        match self {
            Query::NodeInfo { .. } => (ATTR_NODE_INFO, 0),
            Query::NodeDesc { .. } => (ATTR_NODE_DESC, 0),
            Query::SwitchInfo { .. } => (ATTR_SWITCH_INFO, 0),
            Query::PortInfo { port, .. } => (ATTR_PORT_INFO, u32::from(*port)),
            Query::MlnxExtPortInfo { port, .. } => (ATTR_MLNX_EXT_PORT_INFO, u32::from(*port)),
        }
    }
}

fn path_str(p: &[u8]) -> String {
    let mut s = String::from("0");
    for x in p {
        let _ = write!(s, ",{x}");
    }
    s
}

/// PortInfo.CapabilityMask bit 14, IsExtendedSpeedsSupported.
const CAP_HAS_EXT_SPEEDS: u32 = 1 << 14;
/// MlnxExtPortInfo.LinkSpeedActive bit for FDR10.
const FDR10: u8 = 0x01;
/// MlnxExtPortInfo.LinkSpeedActive byte (libibmad `BITSOFFS(120, 8)`).
const MLNX_EXT_LINK_SPEED_ACTIVE: usize = 15;

/// libibnetdisc `is_mlnx_ext_port_info_supported`.
fn mlnx_ext_port_info_supported(info: &NodeInfo) -> bool {
    let d = info.device_id;
    let v = info.vendor_id;
    let bull = v == 0x119f;
    ((0xc738..=0xc73b).contains(&d)
        || matches!(d, 0xc839 | 0xcb20 | 0xcf08 | 0xcf09 | 0xd2f0)
        || (bull
            && (matches!(d, 0x1b02 | 0x1b50 | 0x1ba0 | 0x1bf0) || (0x1bd0..=0x1bd5).contains(&d))))
        || ((0x1003..=0x101b).contains(&d)
            || d == 0xa2d2
            || (bull
                && (matches!(
                    d,
                    0x1b33
                        | 0x1b73
                        | 0x1b40
                        | 0x1b41
                        | 0x1b60
                        | 0x1b61
                        | 0x1b83
                        | 0x1b93
                        | 0x1b94
                        | 0x1bb4
                        | 0x1bb5
                ) || (0x1bc4..=0x1bc6).contains(&d))))
}

/// LinkSpeedExtActive when `cap` (the port's own PortInfo, or port 0's for a
/// switch) says extended speeds are supported, else 0.
fn ext_speed_active(cap: &PortInfo, info: &PortInfo) -> u8 {
    if cap.capability_mask & CAP_HAS_EXT_SPEEDS != 0 {
        info.link_speed_ext_active
    } else {
        0
    }
}

struct Walk<'a> {
    t: &'a mut dyn SmpTransport,
    cfg: DiscoverConfig,
    queue: VecDeque<Query>,
    d: Discovered,
    by_guid: HashMap<u64, usize>,
    from_set: bool,
    tid: u64,
}

/// Discover the fabric behind `t` with ibnetdiscover's defaults.
pub fn discover(t: &mut dyn SmpTransport) -> Result<Discovered> {
    discover_with(t, DiscoverConfig::default())
}

/// Discover the fabric behind `t`.
pub fn discover_with(t: &mut dyn SmpTransport, cfg: DiscoverConfig) -> Result<Discovered> {
    let mut w = Walk {
        t,
        cfg,
        queue: VecDeque::new(),
        d: Discovered::default(),
        by_guid: HashMap::new(),
        from_set: false,
        tid: 0x5644_0000,
    };
    w.queue.push_back(Query::NodeInfo {
        path: Vec::new(),
        from: None,
    });
    while let Some(q) = w.queue.pop_front() {
        if let Some(p) = &w.cfg.progress {
            p.set_message(format!(
                "{} nodes found, {} SMPs, {} queries queued",
                w.d.nodes.len(),
                w.d.smps,
                w.queue.len()
            ));
        }
        if w.d.smps >= w.cfg.max_smps {
            bail!(
                "discovery: gave up after {} SMPs ({} nodes found, {} queries pending)",
                w.d.smps,
                w.d.nodes.len(),
                w.queue.len() + 1
            );
        }
        let first = !w.from_set;
        if let Err(e) = w.run(&q) {
            let msg = format!("{e:#}");
            if first {
                return Err(e).context("discovery: the attached node did not answer NodeInfo");
            }
            w.d.errors.push(msg);
        }
    }
    if !w.from_set {
        bail!("discovery: the attached node was never identified");
    }
    Ok(w.d)
}

impl Walk<'_> {
    fn run(&mut self, q: &Query) -> Result<()> {
        let (attr, modifier) = q.attr();
        self.tid = self.tid.wrapping_add(1);
        let req = mad::dr_request(METHOD_GET, attr, modifier, self.tid, q.path());
        self.d.smps += 1;
        let what = || {
            format!(
                "DR path {} attr {attr:#06x} mod {modifier}",
                path_str(q.path())
            )
        };
        let resp = match self.t.query(&req) {
            Ok(r) => r,
            Err(e) => {
                let err = e.context(what());
                return self.failed(q, err);
            }
        };
        if mad::attr_id(&resp) != attr || mad::attr_mod(&resp) != modifier {
            let err = anyhow::anyhow!(
                "{}: response is for attr {:#06x} mod {}",
                what(),
                mad::attr_id(&resp),
                mad::attr_mod(&resp)
            );
            return self.failed(q, err);
        }
        let status = mad::status(&resp);
        if status != 0 {
            let err = anyhow::anyhow!("{}: bad status {status:#x}", what());
            return self.failed(q, err);
        }
        let mut data = [0u8; 64];
        data.copy_from_slice(mad::data(&resp));
        match q {
            Query::NodeInfo { path, from } => self.recv_node_info(path, *from, &data),
            Query::NodeDesc { node, .. } => {
                self.d.nodes[*node].desc = data;
                Ok(())
            }
            Query::SwitchInfo { node, .. } => {
                let n = &mut self.d.nodes[*node];
                n.switch_info = Some(data);
                // SwitchInfo byte 16 bit 3: EnhancedPort0 (ibspec §8).
                n.enhanced_port0 = data[16] & 0x08 != 0;
                Ok(())
            }
            Query::PortInfo { path, node, port } => {
                self.recv_port_info(path, *node, *port, &data)?;
                if *port == 0 {
                    // recv_port0_info: then every external port.
                    let n = self.d.nodes[*node].info.num_ports;
                    for p in 1..=n {
                        self.queue.push_back(Query::PortInfo {
                            path: path.clone(),
                            node: *node,
                            port: p,
                        });
                    }
                }
                Ok(())
            }
            Query::MlnxExtPortInfo { path, node, port } => {
                if let Some(Some(p)) = self.d.nodes[*node].ports.get_mut(usize::from(*port)) {
                    p.ext_info = Some(data);
                }
                self.continue_walk(path, *node, *port)
            }
        }
    }

    /// A failed query: libibnetdisc logs it; a failed MlnxExtPortInfo still
    /// continues the walk (`mlnx_ext_port_info_err`).
    fn failed(&mut self, q: &Query, err: anyhow::Error) -> Result<()> {
        if let Query::MlnxExtPortInfo { path, node, port } = q {
            self.d.errors.push(format!("{err:#}"));
            return self.continue_walk(path, *node, *port);
        }
        Err(err)
    }

    fn recv_node_info(
        &mut self,
        path: &[u8],
        from: Option<(usize, u8)>,
        data: &[u8; 64],
    ) -> Result<()> {
        let info = NodeInfo::decode(data).context("NodeInfo payload")?;
        let port_num = info.local_port_num;
        let (node, is_new) = match self.by_guid.get(&info.node_guid) {
            Some(&i) => (i, false),
            None => {
                let i = self.d.nodes.len();
                self.d.nodes.push(DNode {
                    info_raw: *data,
                    info,
                    desc: [0; 64],
                    switch_info: None,
                    enhanced_port0: false,
                    sma_lid: 0,
                    sma_lmc: 0,
                    path: path.to_vec(),
                    ports: vec![None; usize::from(info.num_ports) + 1],
                });
                self.by_guid.insert(info.node_guid, i);
                (i, true)
            }
        };
        let n = &mut self.d.nodes[node];
        let Some(slot) = n.ports.get_mut(usize::from(port_num)) else {
            bail!(
                "node {:#018x} at DR path {}: LocalPortNum {port_num} > NumPorts {}",
                n.guid(),
                path_str(path),
                n.info.num_ports
            );
        };
        slot.get_or_insert_with(|| DPort::new(port_num, info.port_guid))
            .guid = info.port_guid;
        let node_type = n.node_type();

        match from {
            None => {
                self.d.from_node = node;
                self.d.from_port = port_num;
                self.from_set = true;
            }
            Some((rnode, rport)) => {
                if self.d.nodes[rnode].port(rport).is_none() {
                    bail!("internal: port {rport} of node {rnode} was never created");
                }
                self.link((node, port_num), (rnode, rport));
            }
        }

        if is_new {
            self.queue.push_back(Query::NodeDesc {
                path: path.to_vec(),
                node,
            });
            if node_type == NODE_TYPE_SWITCH {
                self.queue.push_back(Query::SwitchInfo {
                    path: path.to_vec(),
                    node,
                });
                self.queue.push_back(Query::PortInfo {
                    path: path.to_vec(),
                    node,
                    port: 0,
                });
            }
        }
        if node_type != NODE_TYPE_SWITCH {
            self.queue.push_back(Query::PortInfo {
                path: path.to_vec(),
                node,
                port: port_num,
            });
        }
        Ok(())
    }

    fn port_mut(&mut self, (n, p): (usize, u8)) -> Option<&mut DPort> {
        self.d
            .nodes
            .get_mut(n)?
            .ports
            .get_mut(usize::from(p))?
            .as_mut()
    }

    /// libibnetdisc `link_ports`: a port links to one peer; older links of
    /// either end are cut on the other side.
    fn link(&mut self, a: (usize, u8), b: (usize, u8)) {
        for (x, _) in [(a, b), (b, a)] {
            if let Some(old) = self.port_mut(x).and_then(|p| p.remote) {
                if let Some(o) = self.port_mut(old) {
                    o.remote = None;
                }
            }
        }
        if let Some(p) = self.port_mut(a) {
            p.remote = Some(b);
        }
        if let Some(p) = self.port_mut(b) {
            p.remote = Some(a);
        }
    }

    fn recv_port_info(
        &mut self,
        path: &[u8],
        node: usize,
        port: u8,
        data: &[u8; 64],
    ) -> Result<()> {
        let pi = PortInfo::decode(data).context("PortInfo payload")?;
        let n = &mut self.d.nodes[node];
        let is_switch = n.is_switch();
        let node_port_guid = n.info.port_guid;
        let (sma_lid, sma_lmc) = (n.sma_lid, n.sma_lmc);
        let Some(slot) = n.ports.get_mut(usize::from(port)) else {
            bail!(
                "node {:#018x}: PortInfo of port {port} > NumPorts {}",
                n.info.node_guid,
                n.info.num_ports
            );
        };
        let p = slot.get_or_insert_with(|| DPort::new(port, node_port_guid));
        p.info = Some(*data);
        p.base_lid = pi.lid;
        p.lmc = pi.lmc;
        if port == 0 {
            n.sma_lid = pi.lid;
            n.sma_lmc = pi.lmc;
        } else if is_switch {
            p.base_lid = sma_lid;
            p.lmc = sma_lmc;
        }

        if self.cfg.mlx_epi && mlnx_ext_port_info_supported(&n.info) {
            let cap = if is_switch {
                n.port(0).map(DPort::port_info).unwrap_or_default()
            } else {
                pi
            };
            if pi.port_phys_state == PHYS_STATE_LINK_UP
                && pi.link_speed_active == 4
                && ext_speed_active(&cap, &pi) == 0
            {
                self.queue.push_back(Query::MlnxExtPortInfo {
                    path: path.to_vec(),
                    node,
                    port,
                });
                return Ok(());
            }
        }
        self.continue_walk(path, node, port)
    }

    /// The tail of `recv_port_info`: step through port `port` if it leads on.
    fn continue_walk(&mut self, path: &[u8], node: usize, port: u8) -> Result<()> {
        let n = &self.d.nodes[node];
        let pi = n.port(port).map(DPort::port_info).unwrap_or_default();
        let is_switch = n.is_switch();
        let is_from = node == self.d.from_node && self.from_set;
        if port == 0 || pi.port_phys_state != PHYS_STATE_LINK_UP {
            return Ok(());
        }
        if !((is_switch && port != pi.local_port_num) || (is_from && port == self.d.from_port)) {
            return Ok(());
        }
        let mut next = path.to_vec();
        if !is_switch && is_from && next.len() > 1 {
            // retract_dpath: the start CA seen again further out.
            next.pop();
        } else if next.len() >= MAX_PATH {
            bail!(
                "DR path {} cannot be extended by port {port}: {MAX_PATH} hops max",
                path_str(path)
            );
        } else {
            next.push(port);
        }
        self.queue.push_back(Query::NodeInfo {
            path: next,
            from: Some((node, port)),
        });
        Ok(())
    }
}

// ----------------------------------------------------------------------------
// ibnetdiscover text

fn width_str(w: u8) -> &'static str {
    match w {
        1 => "1x",
        2 => "4x",
        4 => "8x",
        8 => "12x",
        16 => "2x",
        _ => "??",
    }
}

fn speed_str(s: u8) -> &'static str {
    match s {
        1 => "SDR",
        2 => "DDR",
        4 => "QDR",
        _ => "???",
    }
}

fn speed_ext_str(e: u8, s: u8, fdr10: u8) -> &'static str {
    match e {
        0 if fdr10 & FDR10 != 0 => "FDR10",
        0 => speed_str(s),
        1 => "FDR",
        2 => "EDR",
        4 => "HDR",
        8 => "NDR",
        _ => "???",
    }
}

fn link_str(width: u8, speed: u8, espeed: u8, fdr10: u8) -> String {
    let s = if speed != 4 && espeed == 0 {
        speed_str(speed)
    } else {
        speed_ext_str(espeed, speed, fdr10)
    };
    format!("{}{}", width_str(width), s)
}

fn node_name(n: &DNode) -> String {
    let c = match n.node_type() {
        NODE_TYPE_SWITCH => 'S',
        NODE_TYPE_CA => 'H',
        NODE_TYPE_ROUTER => 'R',
        _ => '?',
    };
    format!("\"{c}-{:016x}\"", n.guid())
}

/// `ctime(3)` text of `t` in UTC, with its trailing newline
/// ("Thu Jan  1 00:00:00 1970\n").
pub fn ctime_utc(t: SystemTime) -> String {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (h, m, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    const WD: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MON: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}\n",
        WD[days.rem_euclid(7) as usize],
        MON[(month - 1) as usize],
        day,
        h,
        m,
        s,
        year
    )
}

/// Prefix of ibnetdiscover's one time-dependent line.
pub const GENERATED_PREFIX: &str = "# Topology file: generated on ";

/// `text` with the date of the `# Topology file: generated on …` line
/// replaced by `<date>`, so two dumps of one fabric compare equal.
pub fn normalize_generated_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        if line.starts_with(GENERATED_PREFIX) {
            out.push_str(GENERATED_PREFIX);
            out.push_str("<date>\n");
        } else {
            out.push_str(line);
        }
    }
    out
}

/// The topology ibnetdiscover prints for `d`, dated now (UTC).
pub fn format_ibnetdiscover(d: &Discovered) -> String {
    format_ibnetdiscover_at(d, &ctime_utc(SystemTime::now()))
}

/// The topology ibnetdiscover prints for `d`; `ctime` is the text after
/// "generated on " (ctime(3) form, newline included).
pub fn format_ibnetdiscover_at(d: &Discovered, ctime: &str) -> String {
    let mut f = String::new();
    let _ = write!(f, "#\n{GENERATED_PREFIX}{ctime}#\n");
    if let Some(from) = d.nodes.get(d.from_node) {
        let _ = writeln!(
            f,
            "# Initiated from node {:016x} port {:016x}",
            from.guid(),
            from.info.port_guid
        );
    }
    for (_, n) in d.nodes_of_type(NODE_TYPE_SWITCH) {
        out_ids(&mut f, n);
        let _ = writeln!(f, "switchguid=0x{:x}({:x})", n.guid(), n.info.port_guid);
        let _ = writeln!(
            f,
            "Switch\t{} {}\t\t# \"{}\" {} port 0 lid {} lmc {}",
            n.info.num_ports,
            node_name(n),
            n.description(),
            if n.enhanced_port0 { "enhanced" } else { "base" },
            n.sma_lid,
            n.sma_lmc
        );
        for p in n.ports.iter().skip(1).flatten() {
            if let Some(r) = p.remote {
                out_switch_port(&mut f, d, n, p, r);
            }
        }
    }
    for t in [NODE_TYPE_CA, NODE_TYPE_ROUTER] {
        for (_, n) in d.nodes_of_type(t) {
            out_ids(&mut f, n);
            let (lower, upper) = if t == NODE_TYPE_CA {
                ("ca", "Ca")
            } else {
                ("rt", "Rt")
            };
            let _ = writeln!(f, "{lower}guid=0x{:x}", n.guid());
            let _ = writeln!(
                f,
                "{upper}\t{} {}\t\t# \"{}\"",
                n.info.num_ports,
                node_name(n),
                n.description()
            );
            for p in n.ports.iter().skip(1).flatten() {
                if let Some(r) = p.remote {
                    out_ca_port(&mut f, d, n, p, r);
                }
            }
        }
    }
    f
}

fn out_ids(f: &mut String, n: &DNode) {
    let _ = write!(
        f,
        "\nvendid=0x{:x}\ndevid=0x{:x}\n",
        n.info.vendor_id, n.info.device_id
    );
    if n.info.sys_guid != 0 {
        let _ = writeln!(f, "sysimgguid=0x{:x}", n.info.sys_guid);
    }
}

/// (remote node, remote port, LID printed for the remote end).
fn remote_of(d: &Discovered, r: (usize, u8)) -> Option<(&DNode, &DPort, u16)> {
    let rn = d.nodes.get(r.0)?;
    let rp = rn.port(r.1)?;
    let lid = if rn.is_switch() {
        rn.sma_lid
    } else {
        rp.base_lid
    };
    Some((rn, rp, lid))
}

fn fdr10_of(p: &DPort) -> u8 {
    p.ext_info.map_or(0, |e| e[MLNX_EXT_LINK_SPEED_ACTIVE])
}

fn out_switch_port(f: &mut String, d: &Discovered, n: &DNode, p: &DPort, r: (usize, u8)) {
    let Some((rn, rp, rlid)) = remote_of(d, r) else {
        return;
    };
    let pi = p.port_info();
    let (speed, espeed) = match n.port(0) {
        None => (0, 0),
        Some(p0) => (pi.link_speed_active, ext_speed_active(&p0.port_info(), &pi)),
    };
    let _ = write!(f, "[{}]\t{}[{}]", p.num, node_name(rn), rp.num);
    if !rn.is_switch() {
        let _ = write!(f, "({:x}) ", rp.guid);
    }
    let _ = writeln!(
        f,
        "\t\t# \"{}\" lid {} {}",
        rn.description(),
        rlid,
        link_str(pi.link_width_active, speed, espeed, fdr10_of(p))
    );
}

fn out_ca_port(f: &mut String, d: &Discovered, n: &DNode, p: &DPort, r: (usize, u8)) {
    let Some((rn, rp, rlid)) = remote_of(d, r) else {
        return;
    };
    let pi = p.port_info();
    let espeed = ext_speed_active(&pi, &pi);
    let _ = write!(f, "[{}]", p.num);
    if !n.is_switch() {
        let _ = write!(f, "({:x}) ", p.guid);
    }
    let _ = write!(f, "\t{}[{}]", node_name(rn), rp.num);
    if !rn.is_switch() {
        let _ = write!(f, " ({:x}) ", rp.guid);
    }
    let _ = writeln!(
        f,
        "\t\t# lid {} lmc {} \"{}\" lid {} {}",
        p.base_lid,
        p.lmc,
        rn.description(),
        rlid,
        link_str(
            pi.link_width_active,
            pi.link_speed_active,
            espeed,
            fdr10_of(p)
        )
    );
}

/// The SM of device `dev` as a [`SmpTransport`]: each query
/// is posted through the RTL's SM send interface and the fabric runs until
/// the response with its TID arrives (or the fabric goes quiet without it).
/// A hop-count-0 DR SMP never reaches the wire (Linux
/// `handle_outgoing_dr_smp`; the RTL's SQ counts and drops it): the node's
/// own SMA answers it, as the host stack does.
pub struct NetSmp<'a, S> {
    pub net: &'a mut NetOf<S>,
    pub dev: usize,
    /// Cycles one query may take before it is an error.
    pub max_cycles: u64,
    pub queries: u64,
}

impl<S: NodeAgent> SmpTransport for NetSmp<'_, S> {
    fn query(&mut self, req: &Mad) -> Result<Mad> {
        self.queries += 1;
        let d = self.dev;
        let port = self.net.devs[d]
            .sm
            .as_ref()
            .map(|s| s.port)
            .ok_or_else(|| anyhow!("{}: no SM attached", self.net.devs[d].name))?;
        if mad::is_dr(req) && req[mad::off::HOP_CNT] == 0 {
            return self.net.local_smp(d, port, req)?.ok_or_else(|| {
                anyhow!("{}: the local SMA gave no response", self.net.devs[d].name)
            });
        }
        let tid = mad::tid(req);
        self.net.sm_post(d, AddressHandle::directed(), req)?;
        let name = self.net.devs[d].name.clone();
        self.net
            .run_until(self.max_cycles, |n| {
                n.devs[d].sm.as_ref().is_some_and(|s| s.has_response(tid))
            })
            .with_context(|| format!("{name}: waiting for the response to TID {tid:#x}"))?;
        let sm = self.net.devs[d].sm.as_mut().expect("attached above");
        Ok(sm.take_response(tid).expect("present").0)
    }
}

/// Load `topology`, build the RTL fabric and discover it with directed-route
/// SMPs from CA `from` (default: the file's first CA) port `port` (default 1),
/// returning what ibnetdiscover would print for it (its "generated" line
/// included, with the current time).
pub fn discover_topology(
    topology: &std::path::Path,
    from: Option<&str>,
    port: Option<u8>,
    console: &[String],
    opts: NetOptions,
) -> Result<(String, Net)> {
    discover_topology_with(topology, from, port, console, opts, None)
}

/// [`discover_topology`], showing its progress on `progress`.
pub fn discover_topology_with(
    topology: &std::path::Path,
    from: Option<&str>,
    port: Option<u8>,
    console: &[String],
    opts: NetOptions,
    progress: Option<indicatif::ProgressBar>,
) -> Result<(String, Net)> {
    let topo = Topology::load(topology)?;
    let mut net: Net = Net::new(topo, opts)?;
    for line in console {
        net.console(line).map_err(|e| {
            crate::proto::InputError(format!("--console {line:?}: {}", strip_console(&e)))
        })?;
    }
    net.run_until_idle(100_000)?;
    let d = net.sm_device(from, topology)?;
    let port = port.unwrap_or(1);
    let n = &net.topo.nodes[net.devs[d].node];
    if port == 0 || port > n.nports {
        return Err(crate::proto::InputError(format!(
            "{}: --port {port}: {:?} has ports 1 to {}",
            net.topo.at(n.origin),
            n.id,
            n.nports
        ))
        .into());
    }
    net.attach_sm(d, port)?;
    let found = {
        let mut t = NetSmp {
            net: &mut net,
            dev: d,
            max_cycles: 1_000_000,
            queries: 0,
        };
        discover_with(
            &mut t,
            DiscoverConfig {
                progress,
                ..DiscoverConfig::default()
            },
        )?
    };
    Ok((format_ibnetdiscover(&found), net))
}

/// A console error without its own "console: " prefix (the caller names
/// the argument).
fn strip_console(e: &anyhow::Error) -> String {
    let s = format!("{e:#}");
    s.strip_prefix("console: ").unwrap_or(&s).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctime_matches_libc_format() {
        let t = UNIX_EPOCH + std::time::Duration::from_secs(0);
        assert_eq!(ctime_utc(t), "Thu Jan  1 00:00:00 1970\n");
        // 2026-11-23 08:41:02 UTC was a Monday.
        let t = UNIX_EPOCH + std::time::Duration::from_secs(1_795_423_262);
        assert_eq!(ctime_utc(t), "Mon Nov 23 08:41:02 2026\n");
    }

    #[test]
    fn normalize_only_touches_the_date_line() {
        let a = "#\n# Topology file: generated on Mon Nov 23 08:41:02 2026\n#\nx\n";
        assert_eq!(
            normalize_generated_line(a),
            "#\n# Topology file: generated on <date>\n#\nx\n"
        );
    }

    #[test]
    fn description_is_cleaned_like_clean_nodedesc() {
        let mut desc = [b'a'; 64];
        desc[1] = 0x07;
        desc[2] = 0xC3;
        let n = DNode {
            info_raw: [0; 64],
            info: NodeInfo::default(),
            desc,
            switch_info: None,
            enhanced_port0: false,
            sma_lid: 0,
            sma_lmc: 0,
            path: vec![],
            ports: vec![],
        };
        let s = n.description();
        assert_eq!(s.len(), 63);
        assert!(s.starts_with("a  a"));
    }

    /// A transport that fails everything: discovery fails with context.
    struct Dead;
    impl SmpTransport for Dead {
        fn query(&mut self, _req: &Mad) -> Result<Mad> {
            bail!("link down")
        }
    }

    /// Answers every request with GetResp and pseudo-random data (attribute
    /// and modifier kept): a fabric that makes no sense.
    struct Garbage(u64);
    impl SmpTransport for Garbage {
        fn query(&mut self, req: &Mad) -> Result<Mad> {
            let mut r = *req;
            mad::make_response(&mut r, 0);
            for b in mad::data_mut(&mut r) {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 7;
                self.0 ^= self.0 << 17;
                *b = self.0 as u8;
            }
            Ok(r)
        }
    }

    proptest::proptest! {
        #[test]
        fn garbage_answers_never_panic(seed in 1u64..u64::MAX) {
            let cfg = DiscoverConfig { mlx_epi: true, max_smps: 3000, progress: None };
            if let Ok(d) = discover_with(&mut Garbage(seed), cfg) {
                let _ = format_ibnetdiscover(&d);
            }
        }
    }

    #[test]
    fn local_port_beyond_num_ports_is_an_error() {
        struct BadPort;
        impl SmpTransport for BadPort {
            fn query(&mut self, req: &Mad) -> Result<Mad> {
                let mut r = *req;
                mad::make_response(&mut r, 0);
                let ni = NodeInfo {
                    node_type: NODE_TYPE_CA,
                    num_ports: 2,
                    node_guid: 0x10,
                    local_port_num: 9,
                    ..NodeInfo::default()
                };
                mad::data_mut(&mut r).copy_from_slice(&ni.encode());
                Ok(r)
            }
        }
        let e = discover(&mut BadPort).unwrap_err();
        assert!(
            format!("{e:#}").contains("LocalPortNum 9 > NumPorts 2"),
            "{e:#}"
        );
    }

    #[test]
    fn dead_transport_is_an_error() {
        let e = discover(&mut Dead).unwrap_err();
        assert!(format!("{e:#}").contains("link down"), "{e:#}");
    }
}
