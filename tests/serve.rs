//! `vl15 serve`: the ibsim wire protocol (ibspec §10) in front of
//! the RTL fabric, checked against the real ibsim on the same topology file.
//!
//! - The control replies a client gets (GET_VENDOR, GET_NODEINFO,
//!   GET_PORTINFO, GET_PKEYS, GET_PORT, GET_GID, GET_GUID) are byte for byte
//!   those of the real ibsim, except where ibsim's control layer disagrees
//!   with its own SMA (port GUIDs, GET_PORTINFO of port 2): there they are
//!   what ibsim's SMA answers.
//! - The real `ibnetdiscover` (through libumad2sim) finds the same nodes,
//!   ports, links and GUIDs on vl15 serve as on ibsim (parsed, not text), on
//!   every ibsim example and an 8-port fat tree, from two CAs.
//! - The real `opensm -o` reaches SUBNET UP on vl15 serve on the same files;
//!   afterwards ibnetdiscover shows the LIDs OpenSM gives on ibsim, and
//!   `smpquery nodeinfo|portinfo <lid>` answer every one of them.
//! - With a running OpenSM: `sminfo` from another CA is answered by OpenSM
//!   through the server; `ibroute` and `ibtracert` print what they print on
//!   ibsim.
//! - Bad input (raw datagrams): wrong magic, wrong sizes, unknown type,
//!   unknown SIM_HOST, an eleventh client, a second SM client on
//!   one node, a client gone mid-transaction: error replies or drops, and the
//!   server keeps serving.
//! - The `vl15 serve` binary serves ibnetdiscover and idles without spinning.
//!
//! Needs ibsim-utils, libumad2sim0, infiniband-diags and opensm (`make deps`).

mod common;
use common::*;

use std::collections::BTreeSet;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use vl15::agents::ibsim::{
    ctl, ibnetdiscover_path, umad2sim_command, unique_sockname, IbsimServer, SimCtl, SimRequest,
    MAX_CLIENTS, SIM_CTL_BYTES, SIM_REQUEST_BYTES,
};
use vl15::agents::node_sma::Net;
use vl15::agents::serve::{Background, ConsoleLink, Prober, ServeOptions};
use vl15::model::net::NetOptions;
use vl15::model::twin::{Fidelity, FidelityChoice};
use vl15::proto::mad;
use vl15::proto::packet::consts::{
    ATTR_NODE_INFO, ATTR_PORT_INFO, METHOD_GET, METHOD_GET_RESP, METHOD_SET, PERMISSIVE_LID,
};
use vl15::proto::topology::{NodeKind, Topology};

const FILE: &str = "net.2sw2path4hca";

/// `vl15 serve` in a thread of this test (the fabric is built in it).
struct Served {
    sockname: String,
    /// Reads the fabric in the server's thread (RTL registers).
    probe: Prober,
    /// ibsim's console on the server.
    console: ConsoleLink,
    server: Option<Background>,
}

impl Served {
    fn start(topology: &Path) -> Served {
        Served::start_as(topology, Fidelity::Rtl)
    }

    /// Every device of the fabric as `f`.
    fn start_as(topology: &Path, f: Fidelity) -> Served {
        let net = NetOptions {
            fidelity: FidelityChoice::all(f),
            ..NetOptions::default()
        };
        let server = Background::start_on(topology, net, ServeOptions::default())
            .unwrap_or_else(|e| panic!("{e:#}"));
        Served {
            sockname: server.sockname.clone(),
            probe: server.prober.clone(),
            console: server.console.clone(),
            server: Some(server),
        }
    }

    fn cmd(&self, program: &Path, node: &str) -> Command {
        umad2sim_command(&self.sockname, program, Some(node)).unwrap_or_else(|e| panic!("{e:#}"))
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        stop_server(&mut self.server);
    }
}

/// What ibnetdiscover describes, independent of order and of its node
/// names: nodes (kind, ports, GUID, description), links between (GUID,
/// port) pairs, and the LIDs (CA ports, switch port 0).
#[derive(Debug, PartialEq, Eq)]
struct Fabric {
    nodes: BTreeSet<(String, u8, u64, String)>,
    links: BTreeSet<((u64, u8), (u64, u8))>,
    lids: BTreeSet<(u64, u8, Option<u16>)>,
}

fn parse(text: &str) -> Fabric {
    let t = Topology::parse(text, Path::new("ibnetdiscover-output"))
        .unwrap_or_else(|e| panic!("parsing ibnetdiscover output: {e}\n{text}"));
    let nodes = t
        .nodes
        .iter()
        .map(|n| {
            (
                format!("{:?}", n.kind),
                n.nports,
                n.node_guid,
                n.description.clone(),
            )
        })
        .collect();
    let links = t
        .links
        .iter()
        .map(|l| {
            let a = (t.nodes[l.a.0].node_guid, l.a.1);
            let b = (t.nodes[l.b.0].node_guid, l.b.1);
            (a.min(b), a.max(b))
        })
        .collect();
    let mut lids = BTreeSet::new();
    for n in &t.nodes {
        match n.kind {
            NodeKind::Switch => {
                lids.insert((n.node_guid, 0, n.port0.and_then(|p| p.lid)));
            }
            _ => {
                for p in n.ports.iter().filter(|p| p.remote.is_some()) {
                    lids.insert((n.node_guid, p.num, p.lid));
                }
            }
        }
    }
    Fabric { nodes, links, lids }
}

fn ibnetdiscover(cmd: Command) -> Fabric {
    parse(&run_tool(cmd))
}

// ---------------------------------------------------------------------------
// A raw client: the datagrams sim_client.c sends, and wrong ones.

static RAW_ID: AtomicU32 = AtomicU32::new(1);

struct Raw {
    base: String,
    id: u32,
    ctl: UnixDatagram,
    data: UnixDatagram,
}

fn abstract_name(name: &str) -> std::os::unix::net::SocketAddr {
    use std::os::linux::net::SocketAddrExt;
    let mut b = name.as_bytes().to_vec();
    b.push(0);
    std::os::unix::net::SocketAddr::from_abstract_name(&b).unwrap()
}

impl Raw {
    fn new(base: &str) -> Raw {
        // Ids unlike any pid of this process's other clients.
        let id = 0x4000_0000
            | ((std::process::id() & 0xFFFF) << 8)
            | RAW_ID.fetch_add(1, Ordering::Relaxed);
        let ctl = UnixDatagram::bind_addr(&abstract_name(&format!("{base}:ctl{id}"))).unwrap();
        let data = UnixDatagram::bind_addr(&abstract_name(&format!("{base}:in{id}"))).unwrap();
        ctl.set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        data.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        Raw {
            base: base.to_string(),
            id,
            ctl,
            data,
        }
    }

    /// Send raw bytes to `<base>:ctl`; the reply, if one comes.
    fn ctl_raw(&self, bytes: &[u8]) -> Option<Vec<u8>> {
        // Not bound (yet): no reply.
        self.ctl
            .send_to_addr(bytes, &abstract_name(&format!("{}:ctl", self.base)))
            .ok()?;
        let mut buf = [0u8; 512];
        self.ctl.recv(&mut buf).ok().map(|n| buf[..n].to_vec())
    }

    fn ctl(&self, kind: u32, clientid: u32, data: &[u8]) -> SimCtl {
        let m = SimCtl::new(kind, clientid, data).unwrap();
        let r = self
            .ctl_raw(&m.encode())
            .unwrap_or_else(|| panic!("no reply to sim_ctl type {kind}"));
        SimCtl::decode(&r).unwrap()
    }

    /// CONNECT at `node`; Some(client index) or None when refused.
    fn connect(&self, node: &str, issm: bool) -> Option<u32> {
        let mut info = [0u8; 44];
        info[0..4].copy_from_slice(&self.id.to_ne_bytes());
        info[8..12].copy_from_slice(&u32::from(issm).to_ne_bytes());
        info[12..12 + node.len()].copy_from_slice(node.as_bytes());
        let r = self.ctl(ctl::CONNECT, 0, &info);
        if r.kind != ctl::CONNECT {
            return None;
        }
        let i = u32::from_ne_bytes(r.data[0..4].try_into().unwrap());
        self.data
            .connect_addr(&abstract_name(&format!("{}:out{i}", self.base)))
            .unwrap();
        Some(i)
    }

    /// DR Get(NodeInfo) along `path`; the response's sim_request.
    fn dr_nodeinfo(&self, path: &[u8], tid: u64) -> SimRequest {
        let m = mad::dr_request(METHOD_GET, ATTR_NODE_INFO, 0, tid, path);
        self.send(&m);
        self.recv()
    }

    fn send(&self, m: &mad::Mad) {
        let r = SimRequest {
            dlid: PERMISSIVE_LID,
            slid: PERMISSIVE_LID,
            dqp: 0,
            sqp: 0,
            status: 0,
            length: 256,
            mad: *m,
        };
        self.data.send(&r.encode()).unwrap();
    }

    fn recv(&self) -> SimRequest {
        let mut buf = [0u8; 1024];
        let n = self.data.recv(&mut buf).expect("a data message");
        SimRequest::decode(&buf[..n]).unwrap()
    }
}

/// The control replies of sim_client.c's start-up and the GET_PORT,
/// GET_GID, GET_GUID and GET_PORTINFO(port 2) replies.
fn startup_replies(base: &str, node: &str) -> Vec<(u32, u32, Vec<u8>)> {
    let c = Raw::new(base);
    let i = c.connect(node, false).expect("connect");
    let mut out = Vec::new();
    for (kind, data) in [
        (ctl::GET_VENDOR, vec![]),
        (ctl::GET_NODEINFO, vec![]),
        (ctl::GET_PORTINFO, vec![0u8]),
        (ctl::GET_PORTINFO, vec![2u8]),
        (ctl::GET_PKEYS, vec![]),
        (ctl::GET_PORT, vec![]),
        (ctl::GET_GID, vec![]),
        (ctl::GET_GUID, vec![]),
    ] {
        let r = c.ctl(kind, i, &data);
        out.push((kind, r.kind, r.data.to_vec()));
    }
    c.ctl(ctl::DISCONNECT, i, &[]);
    out
}

/// What ibsim's own SMA answers to a local (hop count 0) DR Get.
fn ibsim_local_get(ibsim: &IbsimServer, node: &str, attr: u16, modifier: u32) -> Vec<u8> {
    let mut c = ibsim
        .connect(Some(node))
        .unwrap_or_else(|e| panic!("{e:#}"));
    let req = mad::dr_request(METHOD_GET, attr, modifier, 0x77, &[]);
    let resp = c
        .smp(&req, PERMISSIVE_LID)
        .unwrap_or_else(|e| panic!("{e:#}"));
    mad::data(&resp)[..64].to_vec()
}

#[test]
fn control_replies_are_those_of_the_real_ibsim() {
    let path = topo(FILE);
    let ibsim = IbsimServer::start(&path).unwrap_or_else(|e| panic!("{e:#}"));
    let ours = Served::start(&path);
    for node in ["Hca1", "Hca4"] {
        let mut want = startup_replies(ibsim.sockname(), node);
        let got = startup_replies(&ours.sockname, node);
        // Where ibsim's control layer differs from its own SMA, vl15 serve
        // gives what the SMA answers (the port's real identity):
        // - GET_NODEINFO: ibsim's stored NodeInfo has PortGUID = NodeGUID for
        //   a CA; the SMA answers the arrival port's GUID (NodeGUID + 1).
        let ni = ibsim_local_get(&ibsim, node, ATTR_NODE_INFO, 0);
        want[1].2[20..28].copy_from_slice(&ni[20..28]);
        // - GET_PORTINFO(2): ibsim answers port 1 (`port_num - 1` for CAs);
        //   the SMA's Get(PortInfo, 2) on the attached port is wanted.
        want[3].2 = ibsim_local_get(&ibsim, node, ATTR_PORT_INFO, 2);
        // - GET_GID, GET_GUID: the port GUID (host order, as ibsim copies
        //   it) and PortInfo.GidPrefix; ibsim gives the NodeGUID and a
        //   prefix that is sometimes 0.
        let guid: [u8; 8] = u64::from_be_bytes(ni[20..28].try_into().unwrap()).to_ne_bytes();
        let pi = ibsim_local_get(&ibsim, node, ATTR_PORT_INFO, 0);
        want[6].2[..8].copy_from_slice(&pi[8..16]);
        want[6].2[8..16].copy_from_slice(&guid);
        want[7].2[..8].copy_from_slice(&guid);
        let diff: Vec<String> = want
            .iter()
            .zip(&got)
            .filter(|(w, g)| w != g)
            .map(|(w, g)| format!("type {}: want {:02x?}\n        vl15 {:02x?}", w.0, w.2, g.2))
            .collect();
        assert!(
            diff.is_empty(),
            "{node}: control replies differ:\n{}",
            diff.join("\n")
        );
        assert_eq!(got.len(), 8);
    }
}

/// ibnetdiscover, the real ibsim and vl15 serve on [`FILE`].
fn side_by_side(path: &Path) -> (PathBuf, IbsimServer, Served) {
    side_by_side_as(path, Fidelity::Rtl)
}

/// [`side_by_side`] with every device of vl15's fabric as `f`.
fn side_by_side_as(path: &Path, f: Fidelity) -> (PathBuf, IbsimServer, Served) {
    let exe = ibnetdiscover_path().unwrap_or_else(|e| panic!("{e:#}"));
    let ibsim = IbsimServer::start(path).unwrap_or_else(|e| panic!("{e:#}"));
    (exe, ibsim, Served::start_as(path, f))
}

/// The CAs of `file` (ids), in file order.
fn cas(path: &Path) -> Vec<String> {
    let t = Topology::load(path).unwrap_or_else(|e| panic!("{e}"));
    t.nodes
        .iter()
        .filter(|n| n.kind != NodeKind::Switch)
        .map(|n| n.id.clone())
        .collect()
}

/// A two-level fat tree of 8-port switches (`vl15 fattree --ports 8`: 12
/// switches, 32 CAs) in a temp dir.
fn fat_tree() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fattree8");
    std::fs::write(&path, vl15::proto::fattree::two_level(8).unwrap()).unwrap();
    (dir, path)
}

#[test]
fn ibnetdiscover_finds_the_same_fabric_as_on_ibsim() {
    let (_dir, fat) = fat_tree();
    for path in EXAMPLES.iter().map(|f| topo(f)).chain([fat]) {
        let file = path.display();
        let (exe, ibsim, ours) = side_by_side(&path);
        let n = Topology::load(&path).unwrap().nodes.len();
        // From the first and the last CA of the file.
        let cas = cas(&path);
        for node in [&cas[0], &cas[cas.len() - 1]] {
            let want = ibnetdiscover(ibsim.umad2sim_command(&exe, Some(node)).unwrap());
            let got = ibnetdiscover(ours.cmd(&exe, node));
            // ibsim attaches a CA client at port 1 even when only port 2 is
            // cabled (Hca2 of `net`): then it sees just its own node.
            assert!(want.nodes.len() == n || want.nodes.len() == 1, "{file}");
            assert_eq!(
                got, want,
                "{file}: ibnetdiscover from {node}: vl15 serve vs ibsim"
            );
        }
    }
}

/// Switches of 18, 40 and 64 ports, CAs on high port numbers: ibnetdiscover
/// from two CAs, then `opensm -o` and every diagnostic of [`opensm_case`],
/// as on the real ibsim.
#[test]
fn switches_of_18_40_and_64_ports_serve_as_on_ibsim() {
    let path = topo("mixed_radix");
    let (exe, ibsim, ours) = side_by_side(&path);
    for node in ["H-1", "H-5"] {
        let want = ibnetdiscover(ibsim.umad2sim_command(&exe, Some(node)).unwrap());
        assert_eq!(
            want.nodes.len(),
            8,
            "ibsim sees the whole fabric from {node}"
        );
        let got = ibnetdiscover(ours.cmd(&exe, node));
        assert_eq!(got, want, "mixed_radix: ibnetdiscover from {node}");
    }
    drop((ibsim, ours));
    opensm_case(&path);
}

#[test]
fn opensm_brings_the_rtl_fabric_up_with_the_lids_it_gives_on_ibsim() {
    let (_dir, fat) = fat_tree();
    for path in EXAMPLES.iter().map(|f| topo(f)).chain([fat]) {
        opensm_case(&path);
    }
}

/// Twins in place of the RTL, as the real clients see them: ibnetdiscover
/// from two CAs before any SM, then `opensm -o` and every diagnostic of
/// [`opensm_case`], each as on the real ibsim, on every ibsim example, the
/// 8-port fat tree and the mixed-radix fabric.
#[test]
fn opensm_and_the_diags_on_twins_see_what_they_see_on_ibsim() {
    let (_dir, fat) = fat_tree();
    let files = EXAMPLES
        .iter()
        .map(|f| topo(f))
        .chain([fat, topo("mixed_radix")]);
    for path in files {
        let file = path.display();
        let (exe, ibsim, ours) = side_by_side_as(&path, Fidelity::Twin);
        let cas = cas(&path);
        for node in [&cas[0], &cas[cas.len() - 1]] {
            let want = ibnetdiscover(ibsim.umad2sim_command(&exe, Some(node)).unwrap());
            let got = ibnetdiscover(ours.cmd(&exe, node));
            assert_eq!(
                got, want,
                "{file}: ibnetdiscover from {node}: twins vs ibsim"
            );
        }
        drop((ibsim, ours));
        opensm_case_as(&path, Fidelity::Twin);
    }
}

/// `opensm -o` at the file's first CA on ibsim and on vl15 serve; the LIDs
/// ibnetdiscover shows afterwards; smpquery by LID on vl15.
fn opensm_case(path: &Path) {
    opensm_case_as(path, Fidelity::Rtl)
}

/// [`opensm_case`] with every device of vl15's fabric as `f`.
fn opensm_case_as(path: &Path, f: Fidelity) {
    let file = format!("{} ({})", path.display(), f.name());
    let (exe, ibsim, ours) = side_by_side_as(path, f);
    let sm = &cas(path)[0];
    let t_ibsim = vl15::run::netbench::opensm_once(ibsim.sockname(), sm)
        .unwrap_or_else(|e| panic!("{file} on ibsim: {e:#}"));
    let t_ours = vl15::run::netbench::opensm_once(&ours.sockname, sm)
        .unwrap_or_else(|e| panic!("{file} on vl15 serve: {e:#}"));
    eprintln!("opensm -o on {file}: ibsim {t_ibsim:.3} s, vl15 serve {t_ours:.3} s");

    let want = ibnetdiscover(ibsim.umad2sim_command(&exe, Some(sm)).unwrap());
    let got = ibnetdiscover(ours.cmd(&exe, sm));
    assert!(
        want.lids.iter().all(|&(_, _, l)| l.is_some_and(|l| l != 0)),
        "OpenSM gave every port a LID on ibsim: {:?}",
        want.lids
    );
    assert_eq!(got, want, "{file}: after opensm -o: vl15 serve vs ibsim");

    // smpquery, LID-routed through the RTL switches' LFTs that OpenSM wrote.
    let smpquery = sbin("smpquery");
    let field = |text: &str, name: &str| -> String {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim_start_matches('.').trim().to_string())
            .unwrap_or_else(|| panic!("no {name} in\n{text}"))
    };
    let sm_guid = Topology::load(path).unwrap().node(sm).unwrap().node_guid;
    let sm_lid = want
        .lids
        .iter()
        .find(|&&(g, p, _)| g == sm_guid && p == 1)
        .and_then(|&(_, _, l)| l)
        .unwrap_or_else(|| panic!("{file}: {sm} port 1 has a LID"));
    for &(guid, port, lid) in &want.lids {
        let lid = lid.unwrap().to_string();
        let mut c = ours.cmd(&smpquery, sm);
        c.args(["nodeinfo", &lid]);
        let ni = run_tool(c);
        assert_eq!(field(&ni, "Guid:"), format!("{guid:#018x}"), "{ni}");
        let mut c = ours.cmd(&smpquery, sm);
        c.args(["portinfo", &lid]);
        let pi = run_tool(c);
        assert_eq!(field(&pi, "Lid:"), lid, "port {port} of {guid:#x}: {pi}");
        assert_eq!(field(&pi, "SMLid:"), sm_lid.to_string(), "{pi}");
        assert_eq!(field(&pi, "LinkState:"), "Active", "{pi}");
    }

    // Every other tool of the issue, at every LID, side by side with ibsim
    // (OpenSM gave the same LIDs on both, asserted above): NodeDescription
    // text, each switch's LFT as OpenSM routed it, the PMA's field list
    // (its values are the RTL's counters, checked in
    // perfquery_reads_the_rtl_counters_of_ca_and_switch_ports), and the
    // path from the SM's CA to every other LID.
    let topo_file = Topology::load(path).unwrap();
    let both = |tool: &str, args: &[&str]| {
        (
            diag(&ours.sockname, sm, tool, args),
            diag(ibsim.sockname(), sm, tool, args),
        )
    };
    for &(guid, port, lid) in &want.lids {
        let lid = lid.unwrap();
        let l = lid.to_string();
        let (got, want) = both("smpquery", &["nodedesc", &l]);
        assert_eq!(got, want, "{file}: smpquery nodedesc {l}");
        let is_switch = topo_file
            .nodes
            .iter()
            .any(|n| n.node_guid == guid && n.kind == NodeKind::Switch);
        if is_switch {
            let (got, want) = both("ibroute", &[&l]);
            assert_eq!(got, want, "{file}: ibroute {l}");
        }
        // The port explicitly: with none, perfquery asks PortSelect 0, which
        // a CA refuses (on ibsim too). A switch: its external port 1.
        let p = if is_switch { 1 } else { port }.to_string();
        let args = [l.as_str(), p.as_str()];
        let (got, want) = both("perfquery", &args);
        assert_eq!(
            perf_names(&got),
            perf_names(&want),
            "{file}: perfquery {args:?}\n{got}"
        );
        if lid != sm_lid {
            let s = sm_lid.to_string();
            let (got, want) = both("ibtracert", &[&s, &l]);
            assert_eq!(got, want, "{file}: ibtracert {s} {l}");
        }
    }
}

#[test]
fn bad_input_is_refused_or_dropped_and_the_server_keeps_serving() {
    let ours = Served::start(&topo(FILE));
    let base = ours.sockname.as_str();
    let c = Raw::new(base);

    // Wrong sizes and magic: dropped (ibsim drops them too), no reply.
    let good = SimCtl::new(ctl::GET_PORT, 0, &[]).unwrap().encode();
    assert_eq!(c.ctl_raw(&good[..SIM_CTL_BYTES - 1]), None, "short sim_ctl");
    let mut long = good.to_vec();
    long.extend_from_slice(&[0; 100]);
    assert_eq!(c.ctl_raw(&long), None, "oversized sim_ctl");
    let mut bad = good;
    bad[0] ^= 0xFF;
    assert_eq!(c.ctl_raw(&bad), None, "wrong magic");
    assert_eq!(c.ctl_raw(&[]), None, "empty datagram");

    // Unknown type, unknown node, a port in SIM_HOST (ibsim matches the
    // whole string), no such client: SIM_CTL_ERROR.
    assert_eq!(c.ctl(99, 0, &[]).kind, ctl::ERROR, "unknown type");
    assert_eq!(c.ctl(ctl::GET_PORT, 7, &[]).kind, ctl::ERROR, "no client 7");
    assert_eq!(c.ctl(ctl::GET_PORT, 1 << 30, &[]).kind, ctl::ERROR);
    assert_eq!(c.connect("NoSuchNode", false), None, "unknown SIM_HOST");
    assert_eq!(c.connect("Hca1[1]", false), None, "no port form in ibsim");
    // A switch attaches (port 0, as on ibsim); then it leaves again.
    let sw = c.connect("Switch1", false).expect("a switch attaches");
    assert_eq!(c.ctl(ctl::DISCONNECT, sw, &[]).kind, ctl::DISCONNECT);

    // Ten clients, then the eleventh is refused; one SM client per node.
    let clients: Vec<Raw> = (0..MAX_CLIENTS).map(|_| Raw::new(base)).collect();
    let nodes = ["Hca1", "Hca2", "Hca3", "Hca4"];
    let idx: Vec<u32> = clients
        .iter()
        .enumerate()
        .map(|(k, r)| r.connect(nodes[k % 4], k < 4).expect("a free slot"))
        .collect();
    let sorted: BTreeSet<u32> = idx.iter().copied().collect();
    assert_eq!(sorted, (0..MAX_CLIENTS).collect(), "indices 0..10");
    assert_eq!(
        Raw::new(base).connect("Hca1", false),
        None,
        "eleventh client"
    );
    // Client 4 is on Hca1, where client 0 is the SM: SET_ISSM refused.
    let r = clients[4].ctl(ctl::SET_ISSM, idx[4], &1i32.to_ne_bytes());
    assert_eq!(r.kind, ctl::ERROR, "second SM client on Hca1");

    // Data: wrong sizes dropped; the client is still served afterwards.
    let k = &clients[5];
    k.data.send(&[0u8; 100]).unwrap();
    k.data.send(&[0u8; SIM_REQUEST_BYTES + 8]).unwrap();
    let r = k.dr_nodeinfo(&[1], 0x1234);
    assert_eq!(r.status, 0);
    assert_eq!(mad::method(&r.mad), METHOD_GET_RESP);
    // TID bits 63:48 carry the client index, as ibsim sets them.
    assert_eq!(mad::tid(&r.mad), 0x1234 | (u64::from(idx[5]) << 48));

    // A client that vanishes with a request in flight: its response cannot
    // be delivered (the slot is freed then, with a log line); everyone else
    // is still served, and a freed slot takes a new client.
    let mut clients = clients;
    let gone = clients.remove(6);
    gone.send(&mad::dr_request(METHOD_GET, ATTR_NODE_INFO, 0, 9, &[1, 3]));
    drop(gone);
    std::thread::sleep(Duration::from_millis(300));
    let r = clients[5].dr_nodeinfo(&[1, 3], 2);
    assert_eq!((r.status, mad::method(&r.mad)), (0, METHOD_GET_RESP));
    let r = clients[7].ctl(ctl::DISCONNECT, idx[8], &[]);
    assert_eq!(r.kind, ctl::DISCONNECT);
    let again = Raw::new(base);
    let i = again.connect("Hca2", false).expect("a freed slot");
    let r = again.dr_nodeinfo(&[1], 1);
    assert_eq!(r.status, 0);
    assert_eq!(mad::tid(&r.mad) >> 48, u64::from(i));
}

/// utime + stime of process `pid`, in clock ticks (/proc/<pid>/stat).
fn cpu_ticks(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/<pid>/stat");
    // Fields after the ")" of the command name: state is field 3; utime and
    // stime are fields 14 and 15.
    let rest = &s[s.rfind(')').expect("comm") + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

/// Kills the child on drop (a failed assertion must not leave it running).
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_cli_serves_ibnetdiscover_and_sleeps_when_idle() {
    let sockname = unique_sockname();
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("serve.pcapng");
    let mut child = Child(
        Command::new(env!("CARGO_BIN_EXE_vl15"))
            .args(["serve", "--topology"])
            .arg(topo(FILE))
            .args(["--sockname", &sockname])
            .arg("--pcap")
            .arg(&pcap)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("starting vl15 serve"),
    );
    // Ready when the control socket answers (a CONNECT to an unknown node
    // is refused with SIM_CTL_ERROR).
    let probe = Raw::new(&sockname);
    let mut ready = false;
    for _ in 0..100 {
        let m = SimCtl::new(ctl::GET_PORT, 0, &[]).unwrap().encode();
        if probe.ctl_raw(&m).is_some() {
            ready = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            child.0.try_wait().unwrap().is_none(),
            "vl15 serve exited early"
        );
    }
    assert!(ready, "vl15 serve did not answer on @{sockname}:ctl");
    let exe = ibnetdiscover_path().unwrap_or_else(|e| panic!("{e:#}"));
    let text = run_tool(umad2sim_command(&sockname, &exe, Some("Hca2")).unwrap());
    assert_eq!(parse(&text).nodes.len(), 6, "{text}");

    // Idle: blocked on its sockets, not spinning (< 10% of one core).
    let pid = child.0.id();
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(1));
    let used = cpu_ticks(pid) - before;
    assert!(
        used <= 10,
        "vl15 serve used {used} ticks of CPU in 1 s idle"
    );
    // Its log names the client that attached.
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    let mut log = String::new();
    use std::io::Read;
    child
        .0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut log)
        .unwrap();
    assert!(log.contains("attached to \"Hca2\""), "{log}");
    // Killed (SIGKILL): the --pcap trace holds the walk up to its last
    // packet, every one whole, with good CRCs.
    assert!(log.contains("read it with: tshark"), "{log}");
    let cap = vl15::proto::pcap::read_pcap(&pcap).expect("the trace of a killed serve reads");
    assert!(cap.records.len() >= 2 * 6, "{} packets", cap.records.len());
    for r in &cap.records {
        assert_eq!(
            vl15::proto::crc::check_wire(&r.data),
            Some((true, true)),
            "{:?} at cycle {}",
            r.port,
            r.cycle
        );
    }
}

/// A running OpenSM (not `-o`) at `sm` on the server `sockname`, once its
/// log says SUBNET UP; killed on drop. Its files go in `dir`.
fn opensm_daemon(sockname: &str, sm: &str, dir: &Path, args: &[&str]) -> Child {
    opensm_until(sockname, sm, dir, args, "SUBNET UP")
}

/// A running OpenSM (as [`opensm_daemon`]) once its log contains `what`.
fn opensm_until(sockname: &str, sm: &str, dir: &Path, args: &[&str], what: &str) -> Child {
    let log = dir.join("osm.log");
    let mut cmd = umad2sim_command(sockname, &sbin("opensm"), Some(sm)).unwrap();
    cmd.args(args);
    let child = Child(
        cmd.current_dir(dir)
            .env("OSM_CACHE_DIR", dir)
            .env("OSM_TMP_DIR", dir)
            // -d2: flush the log after every message (it is polled).
            .args(["-d2", "-f"])
            .arg(&log)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("starting opensm"),
    );
    for _ in 0..200 {
        if std::fs::read_to_string(&log).is_ok_and(|t| t.contains(what)) {
            return child;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("opensm on @{sockname} did not log {what:?} within 10 s");
}

/// An infiniband-diags `tool` at `node` of server `sockname`, under
/// `timeout 20` (a lost MAD must fail the test, not hang it); its stdout.
fn diag(sockname: &str, node: &str, tool: &str, args: &[&str]) -> String {
    run_tool(diag_command(sockname, node, tool, args))
}

#[test]
fn a_running_opensm_answers_sminfo_and_routes_as_on_ibsim() {
    let (_, ibsim, ours) = side_by_side(&topo(FILE));
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let _sm_ibsim = opensm_daemon(ibsim.sockname(), "Hca1", d1.path(), &[]);
    let _sm_ours = opensm_daemon(&ours.sockname, "Hca1", d2.path(), &[]);
    // Diagnostics from another CA: SMInfo is answered by OpenSM itself (the
    // request crosses the RTL to Hca1's queue, goes to the SM client, and
    // its response crosses back); LFTs and paths as OpenSM wrote them.
    let run = |sockname: &str, tool: &str, args: &[&str]| diag(sockname, "Hca2", tool, args);
    // "sm lid 1 sm guid 0x100001, activity count N priority 0 state 3
    // SMINFO_MASTER": OpenSM on Hca1 (LID 1 on ibsim too, below) answers.
    let sminfo = run(&ours.sockname, "sminfo", &[]);
    assert!(
        sminfo.starts_with("sminfo: sm lid 1 sm guid 0x100001,")
            && sminfo.contains("SMINFO_MASTER"),
        "{sminfo}"
    );
    for args in [&["2"][..], &["3"], &["2", "4", "6"]] {
        let want = run(ibsim.sockname(), "ibroute", args);
        assert_eq!(
            run(&ours.sockname, "ibroute", args),
            want,
            "ibroute {args:?}"
        );
    }
    for (from, to) in [("4", "1"), ("4", "6"), ("5", "3")] {
        let want = run(ibsim.sockname(), "ibtracert", &[from, to]);
        assert_eq!(run(&ours.sockname, "ibtracert", &[from, to]), want);
    }
}

/// OpenSM on a switch (an SM embedded in a managed switch, at its port 0):
/// a SubnGet(SMInfo) for the switch's LID reaches it through the RTL from
/// a CA, from the other switch, and from a client on that switch itself
/// (looped back by the host, as the SMI delivers SMInfo to the SM), on the
/// RTL and on twins.
#[test]
fn an_opensm_on_a_switch_answers_sminfo_from_every_node() {
    for f in [Fidelity::Rtl, Fidelity::Twin] {
        let ours = Served::start_as(&topo(FILE), f);
        let dir = tempfile::tempdir().unwrap();
        let _sm = opensm_daemon(&ours.sockname, "Switch2", dir.path(), &[]);
        for from in ["Hca1", "Switch1", "Switch2", "Hca4"] {
            // "sm lid 1 sm guid 0x200001, … state 3 SMINFO_MASTER": the
            // switch's NodeGUID, the LID OpenSM gave its own port 0
            let t = diag(&ours.sockname, from, "sminfo", &[]);
            assert!(
                t.starts_with("sminfo: sm lid 1 sm guid 0x200001,") && t.contains("SMINFO_MASTER"),
                "{f:?}: sminfo from {from}: {t:?}"
            );
        }
    }
}

/// A diag started in the background at `node` in `dir` (umad2sim writes
/// its sysfs tree there; killed on drop), once the server lists it among
/// its clients.
fn diag_server(ours: &Served, dir: &Path, node: &str, tool: &str, args: &[&str]) -> Child {
    let before = ours.console.run("Attached").unwrap().0.lines().count();
    let child = Child(
        diag_command(&ours.sockname, node, tool, args)
            .current_dir(dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("starting a diag server"),
    );
    for _ in 0..200 {
        if ours.console.run("Attached").unwrap().0.lines().count() > before {
            return child;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("{tool} {args:?} at {node} did not attach within 5 s");
}

/// GMPs of any class reach the client at their node that serves the class
/// and its answer comes back, through the RTL and on twins: `ibping -S`
/// (vendor class 0x32) at a CA and at a switch's port 0, `ibsysstat -S`
/// (0x33) beside it at the same CA. A Get of a class no client there
/// serves gets the MAD layer's "unsupported" answer (status 0x000C), and
/// a server given only requests of its own class keeps serving.
#[test]
fn ibping_and_ibsysstat_reach_their_servers_through_the_rtl() {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let host = host.trim();
    for f in [Fidelity::Rtl, Fidelity::Twin] {
        let ours = Served::start_as(&topo(FILE), f);
        vl15::run::netbench::opensm_once(&ours.sockname, "Hca1").unwrap();
        let (hca3, sw2, hca4) = (
            served_lid(&ours, "Hca3").to_string(),
            served_lid(&ours, "Switch2").to_string(),
            served_lid(&ours, "Hca4"),
        );
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let _ping3 = diag_server(&ours, d, "Hca3", "ibping", &["-S"]);
        let _stat3 = diag_server(&ours, d, "Hca3", "ibsysstat", &["-S"]);
        let _ping_sw = diag_server(&ours, d, "Switch2", "ibping", &["-S"]);
        for (from, to) in [
            ("Hca2", &hca3),
            ("Switch1", &hca3),
            ("Hca1", &sw2),
            ("Hca3", &hca3),
        ] {
            let t = diag(&ours.sockname, from, "ibping", &["-c", "1", "-L", to]);
            assert!(
                t.contains("1 packets transmitted, 1 received")
                    && t.contains(&format!("Pong from {host}")),
                "{f:?}: ibping from {from} to LID {to}: {t}"
            );
        }
        let t = diag(&ours.sockname, "Hca1", "ibsysstat", &[&hca3, "host"]);
        assert!(t.starts_with(host), "{f:?}: ibsysstat host: {t:?}");
        // nobody at Hca4 serves vendor class 0x40: the answer says so
        let raw = Raw::new(&ours.sockname);
        raw.connect("Hca2", false).unwrap();
        let mut m = [0u8; 256];
        m[0] = 1; // BaseVersion
        m[1] = 0x40; // vendor class (range 2)
        m[2] = 1; // ClassVersion
        m[3] = METHOD_GET;
        mad::set_tid(&mut m, 0x1234);
        let r = SimRequest {
            dlid: hca4,
            slid: 0,
            dqp: 1,
            sqp: 1,
            status: 0,
            length: 256,
            mad: m,
        };
        raw.data.send(&r.encode()).unwrap();
        let a = raw.recv();
        assert_eq!(
            (
                mad::method(&a.mad),
                u16::from_be_bytes([a.mad[4], a.mad[5]]),
                a.slid
            ),
            (METHOD_GET_RESP, 0x000C, hca4),
            "{f:?}: a Get of class 0x40 to Hca4"
        );
        // the CA server still answers after all that
        let t = diag(&ours.sockname, "Hca2", "ibping", &["-c", "1", "-L", &hca3]);
        assert!(t.contains("1 received"), "{f:?}: {t}");
    }
}

/// `ibportstate LID PORT query`'s (LinkState, PhysLinkState) after the Set
/// (its last two such lines).
fn port_states(t: &str) -> (String, String) {
    let last = |k: &str| {
        t.lines()
            .rev()
            .find_map(|l| l.strip_prefix(k))
            .map(|v| v.trim_start_matches('.').to_string())
            .unwrap_or_default()
    };
    (last("LinkState:"), last("PhysLinkState:"))
}

/// `ibportstate` on the switch port of Hca3 under a running OpenSM, on the
/// RTL and on twins: `disable` takes the link down at both ends
/// (PhysLinkState Disabled, the RTL ports Down, Trap 128, Hca3 out of
/// reach); `enable` trains it again and OpenSM brings the port back to
/// Active; `reset` retrains an Active link, which comes back Active. A Set
/// of a reserved PortPhysicalState is refused with status 0x001C.
#[test]
fn ibportstate_disables_and_enables_a_port_as_the_hardware_does() {
    for f in [Fidelity::Rtl, Fidelity::Twin] {
        let ours = Served::start_as(&topo(FILE), f);
        let dir = tempfile::tempdir().unwrap();
        let _sm = opensm_daemon(&ours.sockname, "Hca1", dir.path(), &[]);
        let sw1 = served_lid(&ours, "Switch1").to_string();
        let hca3 = served_lid(&ours, "Hca3").to_string();
        let ps = |port: &str, op: &str| {
            port_states(&diag(
                &ours.sockname,
                "Hca1",
                "ibportstate",
                &[&sw1, port, op],
            ))
        };
        let rtl_states = || {
            ours.probe
                .run(|net| {
                    let s = net.dev_index("Switch1").unwrap();
                    let h = net.dev_index("Hca3").unwrap();
                    (net.devs[s].port_state(2), net.devs[h].port_state(1))
                })
                .unwrap()
        };
        let active = |what: &str| {
            for _ in 0..200 {
                if ps("2", "query").0 == "Active" {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            panic!("{f:?}: Switch1 port 2 not Active again within 10 s after {what}");
        };
        assert_eq!(ps("2", "query"), ("Active".into(), "LinkUp".into()));
        let traps = log_count(dir.path(), "Link state change");
        ps("2", "disable");
        assert_eq!(
            ps("2", "query"),
            ("Down".into(), "Disabled".into()),
            "{f:?}"
        );
        assert_eq!(rtl_states(), (1, 1), "{f:?}: both ends Down in the RTL");
        wait_log(dir.path(), "Link state change", traps);
        let (ok, t) = diag_status(&ours.sockname, "Hca1", "smpquery", &["nodeinfo", &hca3]);
        assert!(!ok, "{f:?}: Hca3 answered behind a disabled port: {t}");
        // the other ports keep their link
        assert_eq!(ps("1", "query"), ("Active".into(), "LinkUp".into()));
        ps("2", "enable");
        active("enable");
        diag(&ours.sockname, "Hca1", "smpquery", &["nodeinfo", &hca3]);
        ps("2", "reset");
        active("reset");
        assert_eq!(rtl_states(), (4, 4), "{f:?}: both ends Active in the RTL");
        // PortPhysicalState 1 (Sleep) is not a value a Set may ask for
        let raw = Raw::new(&ours.sockname);
        raw.connect("Hca1", false).unwrap();
        let mut m = mad::dr_request(METHOD_SET, ATTR_PORT_INFO, 2, 0x77, &[1]);
        mad::data_mut(&mut m)[33] = 0x12; // PortPhysicalState 1, LinkDownDefaultState 2
        raw.send(&m);
        let r = raw.recv();
        assert_eq!(r.status, 0, "{f:?}: the Set was delivered");
        assert_eq!(
            u16::from_be_bytes([r.mad[4], r.mad[5]]) & 0x7FFF,
            0x001C,
            "{f:?}: a Set of PortPhysicalState 1"
        );
        assert_eq!(ps("2", "query"), ("Active".into(), "LinkUp".into()));
    }
}

#[test]
fn two_opensms_elect_a_master_and_the_standby_takes_over_when_it_dies() {
    let ours = Served::start(&topo(FILE));
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // The standby polls the master every 500 ms and gives up after 2
    // missed polls (OpenSM's defaults: 10 s, 4).
    let conf = d1.path().join("fast.conf");
    std::fs::write(
        &conf,
        "sminfo_polling_timeout 500\npolling_retry_number 2\n",
    )
    .unwrap();
    let conf = conf.to_str().unwrap();
    // Priority 10 on Hca1 comes up master; priority 1 on Hca2 then finds it
    // (SMInfo Get/Set between the two clients, across the RTL) and stays
    // Standby (ibspec §9: higher priority wins).
    let master = opensm_daemon(&ours.sockname, "Hca1", d1.path(), &["-F", conf, "-p", "10"]);
    let _standby = opensm_until(
        &ours.sockname,
        "Hca2",
        d2.path(),
        &["-F", conf, "-p", "1"],
        "Entering STANDBY state",
    );
    let sminfo = |args: &[&str]| diag(&ours.sockname, "Hca3", "sminfo", args);
    // On a loaded machine the standby's 500 ms polls can go unanswered in
    // time: it then takes over, finds the higher-priority master again and
    // hands back, and the ports name it as MasterSMLID until the master's
    // next sweep. The election's outcome is what the subnet settles on.
    let master_is_hca1 = |m: &str| {
        m.contains("sm guid 0x100001,") && m.contains("priority 10 state 3 SMINFO_MASTER")
    };
    let mut m = sminfo(&[]);
    for _ in 0..60 {
        if master_is_hca1(&m) {
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
        m = sminfo(&[]);
    }
    assert!(master_is_hca1(&m), "{m}");
    // The standby on Hca2, asked at its LID (read by a DR PortInfo from
    // Hca3: out port 1, Switch1 port 3, Switch2 port 1).
    let pi = diag(
        &ours.sockname,
        "Hca3",
        "smpquery",
        &["-D", "portinfo", "0,1,3,1"],
    );
    let lid = pi
        .lines()
        .find_map(|l| l.strip_prefix("Lid:"))
        .map(|v| v.trim_start_matches('.').trim().to_string())
        .unwrap_or_else(|| panic!("no Lid in {pi}"));
    let s = sminfo(&[&lid]);
    assert!(
        s.contains("sm guid 0x100004,") && s.contains("priority 1 state 2 SMINFO_STANDBY"),
        "{s}"
    );

    // Kill the master (SIGKILL: no DISCONNECT; the server finds the
    // client gone when a send to it fails): the standby's polls come back
    // with status 110 (umad2sim has no timer of its own, so the server
    // must answer them) and it takes over.
    let st = Command::new("kill")
        .args(["-9", &master.0.id().to_string()])
        .status()
        .expect("kill");
    assert!(st.success());
    // "Entering MASTER state" is logged before the new master's first
    // sweep; until that sweep's "SUBNET UP" the ports still name the dead
    // master as MasterSMLID, which is where sminfo asks.
    let log = d2.path().join("osm.log");
    let mut took_over = false;
    for _ in 0..600 {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if let Some(at) = text.find("Entering MASTER state") {
            if text[at..].contains("SUBNET UP") {
                took_over = true;
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        took_over,
        "the standby did not take over and bring the subnet up within 30 s"
    );
    let m = sminfo(&[]);
    assert!(
        m.contains("sm guid 0x100004,") && m.contains("priority 1 state 3 SMINFO_MASTER"),
        "{m}"
    );
}

// ---------------------------------------------------------------------------
// QP1: perfquery (the PMA on each CA port), saquery (OpenSM's SA), through
// the RTL.

/// perfquery's `Name:.....value` lines, values as numbers (hex for the
/// CounterSelect fields).
fn perf_fields(text: &str) -> Vec<(String, u64)> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            let v = v.trim_start_matches('.').trim();
            let n = match v.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16).ok()?,
                None => v.parse().ok()?,
            };
            Some((k.trim().to_string(), n))
        })
        .collect()
}

/// perfquery's field names, in order.
fn perf_names(text: &str) -> Vec<String> {
    perf_fields(text).into_iter().map(|(k, _)| k).collect()
}

fn field(f: &[(String, u64)], name: &str) -> u64 {
    f.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| *v)
        .unwrap_or_else(|| panic!("no {name} in {f:?}"))
}

/// The IBA PortCounters of CA `d` port `p` from its RTL registers
/// (XmitPkts, RcvPkts, VL15Dropped, RcvErrors, XmitData, RcvData; mapping
/// in `vl15::agents::gmp::PortCounters`).
fn rtl_counters(net: &mut Net, d: usize, p: u8) -> [u64; 6] {
    use vl15::model::regmap::reg;
    let mut c = |name: &str| {
        let i = reg::COUNTERS
            .iter()
            .position(|c| *c == name)
            .unwrap_or_else(|| panic!("no RTL counter {name}"));
        let a = vl15::model::regmap::mpreg::port(p, reg::CTR_BASE + i as u8);
        u64::from(net.read_reg(d, a).unwrap())
    };
    [
        c("tx_vl15_pkts") + c("tx_data_pkts"),
        c("rx_pkts"),
        c("vl15_dropped"),
        c("rx_vcrc_err")
            + c("rx_lver_err")
            + c("rx_lnh_err")
            + c("rx_len_err")
            + c("smi_icrc_err")
            + c("data_icrc_err"),
        c("tx_words"),
        c("rx_words"),
    ]
}

/// The base LID of `node`'s port 1 (a CA) or port 0 (a switch), from its
/// SMA in the served fabric.
fn served_lid(s: &Served, node: &str) -> u16 {
    let node = node.to_string();
    s.probe
        .run(move |net| {
            let d = net.dev_index(&node).unwrap();
            let p = u8::from(!net.devs[d].is_switch);
            net.devs[d].agent().port_lid(p).unwrap()
        })
        .unwrap()
}

fn served_counters(s: &Served, node: &str) -> [u64; 6] {
    let node = node.to_string();
    s.probe
        .run(move |net| {
            let d = net.dev_index(&node).unwrap();
            rtl_counters(net, d, 1)
        })
        .unwrap()
}

/// `perfquery <Hca3> 1` from `at`: the field names ibsim's PMA prints, and
/// the values of Hca3's RTL registers when its PMA answered (its answer
/// left afterwards: one more packet, one GMP of PktLen 72 words, ibspec
/// §11). Returns the registers read afterwards (see [`rtl_counters`]) and
/// perfquery's fields.
fn perfquery_of_hca3_is_its_rtl_counters(
    ibsim: &IbsimServer,
    ours: &Served,
    at: &str,
) -> ([u64; 6], Vec<(String, u64)>) {
    let l3 = served_lid(ours, "Hca3").to_string();
    let want = diag(ibsim.sockname(), at, "perfquery", &[&l3, "1"]);
    let text = diag(&ours.sockname, at, "perfquery", &[&l3, "1"]);
    assert_eq!(
        perf_names(&text),
        perf_names(&want),
        "{text}\nibsim:\n{want}"
    );
    let regs = served_counters(ours, "Hca3");
    let [tx, rx, vl15, err, tx_w, rx_w] = regs;
    let f = perf_fields(&text);
    assert_eq!(field(&f, "PortXmitPkts"), tx - 1, "{text}");
    assert_eq!(field(&f, "PortRcvPkts"), rx, "{text}");
    assert_eq!(field(&f, "VL15Dropped"), vl15, "{text}");
    assert_eq!(field(&f, "PortRcvErrors"), err, "{text}");
    assert_eq!(field(&f, "PortXmitData"), tx_w - 72, "{text}");
    assert_eq!(field(&f, "PortRcvData"), rx_w, "{text}");
    (regs, f)
}

#[test]
fn perfquery_reads_the_rtl_counters_of_ca_and_switch_ports() {
    let (_, ibsim, ours) = side_by_side(&topo(FILE));
    for s in [ibsim.sockname(), ours.sockname.as_str()] {
        vl15::run::netbench::opensm_once(s, "Hca1").unwrap_or_else(|e| panic!("{s}: {e:#}"));
    }
    let l3 = served_lid(&ours, "Hca3").to_string();
    let ([tx, rx, ..], f) = perfquery_of_hca3_is_its_rtl_counters(&ibsim, &ours, "Hca2");
    assert!(
        tx > 10 && rx > 10,
        "OpenSM's sweep crossed the port: {tx} {rx}"
    );
    for zero in [
        "SymbolErrorCounter",
        "LinkDownedCounter",
        "PortXmitDiscards",
    ] {
        assert_eq!(field(&f, zero), 0, "{zero}: {f:?}");
    }

    // perfquery -x: PortCountersExtended, 64-bit, same counters.
    let text = diag(&ours.sockname, "Hca2", "perfquery", &["-x", &l3, "1"]);
    let [tx, rx, _, _, tx_w, rx_w] = served_counters(&ours, "Hca3");
    let f = perf_fields(&text);
    assert_eq!(field(&f, "PortXmitPkts"), tx - 1, "{text}");
    assert_eq!(field(&f, "PortRcvPkts"), rx, "{text}");
    assert_eq!(field(&f, "PortXmitData"), tx_w - 72, "{text}");
    assert_eq!(field(&f, "PortRcvData"), rx_w, "{text}");

    // perfquery -R resets them (ClassPortInfo Get, then Set with every
    // CounterSelect bit). Since then: the Set's answer and the
    // ClassPortInfo answer went out; the ClassPortInfo Get and the
    // PortCounters Get came in.
    diag(&ours.sockname, "Hca2", "perfquery", &["-R", &l3, "1"]);
    let text = diag(&ours.sockname, "Hca2", "perfquery", &[&l3, "1"]);
    let f = perf_fields(&text);
    assert_eq!(field(&f, "PortXmitPkts"), 2, "{text}");
    assert_eq!(field(&f, "PortRcvPkts"), 2, "{text}");
    assert_eq!(field(&f, "PortXmitData"), 2 * 72, "{text}");
    assert_eq!(field(&f, "PortRcvData"), 2 * 72, "{text}");
    assert_eq!(field(&f, "VL15Dropped"), 0, "{text}");
    assert_eq!(field(&f, "PortRcvErrors"), 0, "{text}");

    // The local port (no LID given): looped back by the host, nothing on
    // the wire, so exactly Hca2's registers.
    let text = diag(&ours.sockname, "Hca2", "perfquery", &[]);
    let [tx, rx, vl15, _, _, _] = served_counters(&ours, "Hca2");
    let f = perf_fields(&text);
    assert_eq!(
        (field(&f, "PortXmitPkts"), field(&f, "PortRcvPkts")),
        (tx, rx),
        "{text}"
    );
    assert_eq!(field(&f, "VL15Dropped"), vl15, "{text}");

    // A switch: its PMA (port 0's GMP path in the switch RTL) answers with
    // the switch's RTL counters of the port asked for. Port 2 of Switch1
    // leads to Hca3: neither perfquery's requests (ClassPortInfo, then
    // PortCounters, from Hca2) nor their answers cross it, so its counters
    // are exactly the registers read afterwards.
    let sw = served_lid(&ours, "Switch1").to_string();
    let want = diag(ibsim.sockname(), "Hca2", "perfquery", &[&sw, "2"]);
    let text = diag(&ours.sockname, "Hca2", "perfquery", &[&sw, "2"]);
    assert_eq!(
        perf_names(&text),
        perf_names(&want),
        "{text}\nibsim:\n{want}"
    );
    let [tx, rx, vl15, err, relay, tx_w, rx_w] = served_switch_counters(&ours, "Switch1", 2);
    let f = perf_fields(&text);
    assert_eq!(field(&f, "PortSelect"), 2, "{text}");
    assert_eq!(field(&f, "PortXmitPkts"), tx, "{text}");
    assert_eq!(field(&f, "PortRcvPkts"), rx, "{text}");
    assert_eq!(field(&f, "PortXmitData"), tx_w, "{text}");
    assert_eq!(field(&f, "PortRcvData"), rx_w, "{text}");
    assert_eq!(field(&f, "VL15Dropped"), vl15, "{text}");
    assert_eq!(field(&f, "PortRcvErrors"), err, "{text}");
    assert_eq!(field(&f, "PortRcvSwitchRelayErrors"), relay, "{text}");
    assert!(
        tx > 10 && rx > 10,
        "OpenSM's sweep crossed Switch1 port 2: {tx} {rx}"
    );
    // Each SMP and GMP is 72 words: the data counters are 72 × the packet
    // counters on a link that carried only MADs.
    assert_eq!((tx_w, rx_w), (72 * tx, 72 * rx), "{text}");
}

/// The IBA PortCounters of switch `s` port `p` from its RTL registers
/// (XmitPkts, RcvPkts, VL15Dropped, RcvErrors, RcvSwitchRelayErrors,
/// XmitData, RcvData), by the docs/fabric.md counter table (`sw_ctr_e`)
/// and the mapping documented in `vl15::agents::gmp::switch_counters`.
fn rtl_switch_counters(net: &mut Net, s: usize, p: u8) -> [u64; 7] {
    let mut c = |i: u8| {
        u64::from(
            net.read_reg(s, vl15::model::regmap::swreg::ctr(p, i))
                .unwrap(),
        )
    };
    [
        c(12) + c(13),
        c(0),
        c(5),
        c(1) + c(2) + c(3) + c(4) + c(6) + c(7),
        c(8) + c(9),
        c(15),
        c(14),
    ]
}

fn served_switch_counters(s: &Served, node: &str, p: u8) -> [u64; 7] {
    let node = node.to_string();
    s.probe
        .run(move |net| {
            let d = net.dev_index(&node).unwrap();
            rtl_switch_counters(net, d, p)
        })
        .unwrap()
}

/// saquery's `key....value` lines.
fn records(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(|l| match l.trim().split_once("..") {
            Some((k, v)) => (k.to_string(), v.trim_start_matches('.').to_string()),
            None => (l.trim().to_string(), String::new()),
        })
        .collect()
}

#[test]
fn saquery_is_answered_by_opensm_through_the_rtl_as_on_ibsim() {
    let (_, ibsim, ours) = side_by_side(&topo(FILE));
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let _sm_ibsim = opensm_daemon(ibsim.sockname(), "Hca1", d1.path(), &[]);
    let _sm_ours = opensm_daemon(&ours.sockname, "Hca1", d2.path(), &[]);
    let before = served_counters(&ours, "Hca1");
    // From another CA (across the RTL to OpenSM's node and back) and from
    // OpenSM's own node (looped back by its host).
    for node in ["Hca4", "Hca1"] {
        for args in [&[][..], &["-s"], &["-N"], &["PortInfoRecord"]] {
            let want = diag(ibsim.sockname(), node, "saquery", args);
            let got = diag(&ours.sockname, node, "saquery", args);
            assert!(
                want.lines().count() > 3,
                "saquery {args:?} on ibsim: {want}"
            );
            // ibsim ignores a Set of M_KeyLeasePeriod (its PortInfo
            // template keeps 0x0FF9 = 4089); the RTL's M_Key check takes it,
            // and OpenSM writes its default lease period, 0,
            // into every port it configures. Everything else must match.
            let lease = |text: &str, v: &str| {
                let mut r = records(text);
                for f in r.iter_mut().filter(|f| f.0 == "MkeyLeasePeriod:") {
                    assert_eq!(f.1, v, "saquery {args:?} from {node}:\n{text}");
                    f.1.clear();
                }
                r
            };
            assert_eq!(
                lease(&got, "0"),
                lease(&want, "4089"),
                "saquery {args:?} from {node}:\n{got}\nibsim:\n{want}"
            );
        }
    }
    // The SA queries from Hca4 reached OpenSM's node through its data RX
    // (4 queries, each one GMP in and one GMP out).
    let after = served_counters(&ours, "Hca1");
    assert!(after[1] >= before[1] + 4, "{before:?} -> {after:?}");
}

/// A client on a switch (port 0, as ibsim attaches it; ibspec §10): OpenSM
/// there brings the fabric up with the LIDs it gives on ibsim (through the
/// switch's SMI SM interface, `sm_tx_*`/`sm_rx_*`), ibnetdiscover from the
/// switch finds what it finds on ibsim, and smpquery / perfquery from the
/// switch (QP1 through its port-0 GMP path) answer with the RTL's values.
#[test]
fn a_client_on_a_switch_runs_opensm_and_the_diags_as_on_ibsim() {
    let (exe, ibsim, ours) = side_by_side(&topo(FILE));
    let at = "Switch1";
    for s in [ibsim.sockname(), ours.sockname.as_str()] {
        vl15::run::netbench::opensm_once(s, at).unwrap_or_else(|e| panic!("{s}: {e:#}"));
    }
    let want = ibnetdiscover(ibsim.umad2sim_command(&exe, Some(at)).unwrap());
    let got = ibnetdiscover(ours.cmd(&exe, at));
    assert!(
        want.lids.iter().all(|&(_, _, l)| l.is_some_and(|l| l != 0)),
        "OpenSM on Switch1 gave every port a LID on ibsim: {:?}",
        want.lids
    );
    assert_eq!(got, want, "ibnetdiscover from Switch1: vl15 serve vs ibsim");

    // smpquery nodeinfo of every LID, from the switch, LID-routed through
    // the RTL: the same NodeInfo fields as on ibsim.
    let keep = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| !l.starts_with('#'))
            .map(str::to_string)
            .collect()
    };
    for &(_, _, lid) in &want.lids {
        let lid = lid.unwrap().to_string();
        let a = diag(ibsim.sockname(), at, "smpquery", &["nodeinfo", &lid]);
        let b = diag(&ours.sockname, at, "smpquery", &["nodeinfo", &lid]);
        assert_eq!(keep(&b), keep(&a), "smpquery nodeinfo {lid} from {at}");
    }

    // perfquery of Hca3 from the switch: ibsim's field names, Hca3's RTL
    // counters.
    perfquery_of_hca3_is_its_rtl_counters(&ibsim, &ours, at);
}

// ---------------------------------------------------------------------------
// ibsim's console

/// Lines of the OpenSM log in `dir` that contain `what`.
fn log_count(dir: &Path, what: &str) -> usize {
    std::fs::read_to_string(dir.join("osm.log"))
        .map(|t| t.matches(what).count())
        .unwrap_or(0)
}

/// Wait (up to 20 s) until the OpenSM log in `dir` has more than `n`
/// lines with `what`.
fn wait_log(dir: &Path, what: &str, n: usize) {
    for _ in 0..400 {
        if log_count(dir, what) > n {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!(
        "the OpenSM log in {} did not get another {what:?} within 20 s",
        dir.display()
    );
}

/// Console text as compared with ibsim's: without the time line and
/// ibsim's warnings (its console also carries its stderr), LinearFDBCap as
/// N (ibsim's 30720, the RTL's LFT depth), and PortStateChange as N when
/// `any_portchange`.
fn console_lines(t: &str, any_portchange: bool) -> Vec<String> {
    t.lines()
        .filter(|l| !l.starts_with("# Net status - ") && !l.starts_with("ibwarn: "))
        .map(|l| match l.split_once("linearcap ") {
            Some((a, b)) => {
                let rest = b.split_once(' ').map_or("", |x| x.1);
                match rest.split_once(" portchange") {
                    Some((top, _)) if any_portchange => {
                        format!("{a}linearcap N {top} portchange N")
                    }
                    _ => format!("{a}linearcap N {rest}"),
                }
            }
            None => l.to_string(),
        })
        .collect()
}

/// The LFTs OpenSM wrote into both switches, as ibroute prints them.
fn routes(sockname: &str) -> String {
    ["2", "3"]
        .iter()
        .map(|lid| diag(sockname, "Hca2", "ibroute", &[lid]))
        .collect()
}

#[test]
fn console_cable_changes_under_a_running_opensm_give_what_they_give_on_ibsim() {
    let path = topo(FILE);
    let mut ibsim = IbsimServer::start_with_console(&path).unwrap();
    let ours = Served::start(&path);
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let _sm_ibsim = opensm_daemon(ibsim.sockname(), "Hca1", d1.path(), &[]);
    let _sm_ours = opensm_daemon(&ours.sockname, "Hca1", d2.path(), &[]);
    let view = |sockname: &str| {
        let c = umad2sim_command(sockname, &sbin("ibnetdiscover"), Some("Hca2")).unwrap();
        (ibnetdiscover(c), routes(sockname))
    };
    let before = view(&ours.sockname);
    assert_eq!(before, view(ibsim.sockname()), "after SUBNET UP");
    // Dump and Route print what ibsim prints, from the RTL registers, but
    // for the time, LinearFDBCap (ibsim's 30720, the RTL's depth) and
    // PortStateChange: the RTL sets it on every change of a port's state
    // (ibspec §8), so also when OpenSM makes ports Armed and Active; ibsim
    // only when a link comes or goes.
    let normal = |t: String| console_lines(&t, true).join("\n");
    let compare_console = |ibsim: &mut IbsimServer, what: &str| {
        for line in [
            "Dump",
            "Route 1 6",
            "Route 4 2",
            "Route 5 3",
            "Route 1 99",
            "Route x",
        ] {
            let want = normal(ibsim.console(line).unwrap());
            let got = normal(ours.console.run(line).unwrap().0);
            assert_eq!(got, want, "{line} {what}");
        }
    };
    compare_console(&mut ibsim, "after SUBNET UP");
    // Switch1[3] <-> Switch2[3] is one of the two switch-to-switch cables:
    // the routes move to the other one, and come back with it; a CA goes
    // and comes back; a third cable joins the switches. (Some(true): the
    // fabric is as before; Some(false): the routes changed.)
    let steps = [
        ("Unlink \"Switch1\"[3]", Some(false)),
        ("ReLink \"Switch1\"[3]", Some(true)),
        ("Unlink \"Hca4\"", None),
        ("ReLink \"Hca4\"", Some(true)),
        ("Link \"Switch1\"[4] \"Switch2\"[4]", None),
    ];
    for (line, same) in steps {
        let (n1, n2) = (
            log_count(d1.path(), "SUBNET UP"),
            log_count(d2.path(), "SUBNET UP"),
        );
        let traps = log_count(d2.path(), "num:128 (Link state change)");
        ibsim.console(line).unwrap();
        assert_eq!(
            ours.console.run(line),
            Some((String::new(), false)),
            "{line}"
        );
        // OpenSM gets Trap 128 from the RTL switch and sweeps again.
        wait_log(d2.path(), "num:128 (Link state change)", traps);
        wait_log(d2.path(), "SUBNET UP", n2);
        wait_log(d1.path(), "SUBNET UP", n1);
        let now = view(&ours.sockname);
        assert_eq!(now, view(ibsim.sockname()), "after {line}");
        compare_console(&mut ibsim, &format!("after {line}"));
        match same {
            Some(true) => assert_eq!(now, before, "{line} did not bring the fabric back"),
            Some(false) => {
                assert_ne!(now.1, before.1, "the routes did not change: {}", now.1);
                assert_eq!(now.0.links.len() + 1, before.0.links.len());
            }
            None => assert_ne!(now.0, before.0, "{line} changed nothing"),
        }
    }
    // Attached lists OpenSM's client as ibsim does (but for its pid); X
    // disconnects it.
    let pids = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.starts_with("Client "))
            .map(|l| {
                let (a, b) = l.split_once(": pid ").unwrap();
                let rest = b.split_once(' ').map_or("", |x| x.1);
                format!("{a}: pid N {rest}")
            })
            .collect()
    };
    let ours_attached = ours.console.run("Attached").unwrap().0;
    let want = pids(&ibsim.console("Attached").unwrap());
    assert_eq!(pids(&ours_attached), want, "{ours_attached}");
    assert!(
        ours_attached.contains("connected at \"Hca1\" port 0x100001, lid 1, qp 0 SM"),
        "{ours_attached}"
    );
    assert_eq!(ours.console.run("X 0").unwrap().0, "");
    assert!(pids(&ours.console.run("Attached").unwrap().0).len() < want.len());
}

/// `tool args` at `node` of server `sockname` under `timeout 20`: whether
/// it succeeded, and its stdout and stderr.
fn diag_status(sockname: &str, node: &str, tool: &str, args: &[&str]) -> (bool, String) {
    let scratch = tempfile::tempdir().unwrap();
    let out = diag_command(sockname, node, tool, args)
        .current_dir(scratch.path())
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

/// Register `addr` of `node` in the served fabric.
fn served_reg(s: &Served, node: &str, addr: u16) -> u32 {
    let node = node.to_string();
    s.probe
        .run(move |net| {
            let d = net.dev_index(&node).unwrap();
            net.read_reg(d, addr).unwrap()
        })
        .unwrap()
}

#[test]
fn console_error_corrupts_packets_on_the_cable_and_the_far_end_counts_them() {
    use vl15::model::regmap::swreg::{self, ctr as c};
    let ctr = swreg::ctr;
    let ours = Served::start(&topo(FILE));
    let dir = tempfile::tempdir().unwrap();
    let _sm = opensm_daemon(&ours.sockname, "Hca1", dir.path(), &[]);
    let sw1 = served_lid(&ours, "Switch1").to_string();
    let run = |line: &str| ours.console.run(line).unwrap().0;
    let rcv_errors = || {
        let t = diag(&ours.sockname, "Hca1", "perfquery", &[&sw1, "3"]);
        field(&perf_fields(&t), "PortRcvErrors")
    };
    // DR from Hca1: Switch1, out of its port 3, to Switch2; the answer comes
    // back into Switch1 port 3.
    let through = || {
        diag_status(
            &ours.sockname,
            "Hca1",
            "smpquery",
            &["-D", "nodeinfo", "0,1,3"],
        )
    };
    assert!(through().0, "{}", through().1);
    let e0 = rcv_errors();
    let out = run("Error \"Switch1\"[3] 100");
    assert!(
        out.starts_with("# error rate 100% of the packets into \"Switch1\"[3]: bad VCRC (seed=0x"),
        "{out}"
    );
    let (ok, text) = through();
    assert!(
        !ok,
        "smpquery through a port that corrupts every packet: {text}"
    );
    let vcrc = served_reg(&ours, "Switch1", ctr(3, c::RX_VCRC_ERR));
    assert!(vcrc > 0, "Switch1 port 3 RxVcrcErr {vcrc}");
    let e1 = rcv_errors();
    assert!(e1 > e0, "PortRcvErrors {e0} -> {e1}");
    // A given seed is printed back; Dump shows the fault and what it did.
    let out = run("Error \"Switch1\"[3] 100 truncate seed=0x2a");
    assert!(out.ends_with(": truncated (seed=0x2a)\n"), "{out}");
    assert!(!through().0);
    assert!(served_reg(&ours, "Switch1", ctr(3, c::RX_LEN_ERR)) > 0);
    let dump = run("Dump \"Switch1\"");
    assert!(
        dump.lines()
            .any(|l| l.starts_with("200000\t[3]\t\"Switch2\"[3]")
                && l.contains("# err_rate 100\t# err_class truncate\t# err_seed 0x2a")),
        "{dump}"
    );
    // A bad ICRC passes the switch's external port (no ICRC check there)
    // and is dropped by the SMI of the switch it is for (port 0's
    // PortRcvErrors), at Switch2 on the way in.
    run("Error \"Switch1\"[3] 0");
    let icrc0 = served_reg(&ours, "Switch2", ctr(0, c::P0_ICRC_ERR));
    let out = run("Error \"Switch2\"[3] 100 icrc");
    assert!(out.contains(": bad ICRC (seed=0x"), "{out}");
    assert!(!through().0);
    assert!(served_reg(&ours, "Switch2", ctr(0, c::P0_ICRC_ERR)) > icrc0);
    assert_eq!(
        served_reg(&ours, "Switch2", ctr(3, c::RX_VCRC_ERR)),
        0,
        "a bad ICRC is no link error"
    );
    // With an attribute, only MADs of it: NodeInfo (17) answers are cut,
    // PortInfo answers pass.
    run("Error \"Switch2\"[3] 0");
    let out = run("Error \"Switch1\"[3] 100 17 seed=1");
    assert!(
        out.contains(" with attribute 17: bad VCRC (seed=0x1)"),
        "{out}"
    );
    assert!(!through().0);
    let pi = diag_status(
        &ours.sockname,
        "Hca1",
        "smpquery",
        &["-D", "portinfo", "0,1,3", "3"],
    );
    assert!(pi.0, "{}", pi.1);
    run("Error \"Switch1\"[3] 0");
    run("Error \"Switch2\"[3] 100 icrc");
    // Rate 0: it recovers.
    assert_eq!(
        run("Error \"Switch2\"[3] 0"),
        "# error rate 0 at \"Switch2\"[3]: no faults\n"
    );
    let (ok, text) = through();
    assert!(ok, "{text}");
    // Bad input: one line each, and the server goes on.
    for (line, want) in [
        (
            "Error \"Nope\"[1] 5",
            "# nodeid \"Nope\" (Nope) not found\n",
        ),
        (
            "Error \"Switch1\"[3] 101",
            "# error rate must be in [0..100] range (101)\n",
        ),
        (
            "Error \"Switch1\"[9] 5",
            "# bad port number 9 at nodeid \"Switch1\"\n",
        ),
        ("Error \"Switch1\"[3]", "# error rate is missing\n"),
        ("Frob", "command 'Frob' unknown - skipped\n"),
    ] {
        assert_eq!(run(line), want, "{line}");
    }
    assert!(through().0);
}

#[test]
fn console_lid_guid_and_link_commands_and_bad_input_print_what_ibsim_prints() {
    let path = topo(FILE);
    let mut ibsim = IbsimServer::start_with_console(&path).unwrap();
    let ours = Served::start(&path);
    // Without an SM: LIDs 0, ports Init. Each line, then a Dump of what it
    // changed; errors are one line each, as ibsim words them.
    let normal = |t: String| -> Vec<String> {
        console_lines(&t, false)
            .iter()
            .map(|l| l.trim_end().to_string())
            .collect()
    };
    for line in [
        "Baselid \"Hca1\"[1] 9",
        "Dump \"Hca1\"",
        "Baselid \"Hca1\"[1] 12 2",
        "Baselid \"Switch1\"[0] 30",
        "Dump \"Switch1\"",
        "Guid \"Hca2\" 0x5555",
        "Dump \"Hca2\"",
        // (ibsim's Route knows only LIDs an SM gave: not these.)
        "Route 1 2",
        "Link \"Hca1\"[2] \"Hca2\"[2]",
        "Dump \"Hca2\"",
        "Unlink \"Hca1\"[2]",
        "Dump \"Hca1\"",
        "Clear \"Hca3\"[1]",
        "Dump \"Hca3\"",
        "Unlink \"Switch2\"",
        "Dump",
        "ReLink \"Switch2\"",
        "Dump",
        // Bad input.
        "Baselid \"Hca1\"[1]",
        "Baselid \"Hca1\"[3] 5",
        "Baselid \"Nope\"[1] 5",
        "Unlink \"Hca1\"[7]",
        "ReLink \"Hca3\"[2]",
        "Link \"Hca1\"[1] \"Hca2\"[2]",
        "Dump \"Nope\"",
        "Route 1",
        "Route 0 5",
        "X 5",
        "Verbose",
        "Error \"Hca1\"[1] 200",
        "Error \"Nope\" 1",
        "PerformanceSet \"Hca1\" PortCounters.PortRcvErrors=1",
        "PerformanceSet \"Hca1\"[1] PortCounters.PortRcvErrors",
        "PerformanceSet \"Hca1\"[1] Nope.PortRcvErrors=1",
        "PerformanceSet \"Hca1\"[1] PortCounters.Nope=1",
        "PerformanceSet \"Hca1\"[1] PortCounters.PortRcvErrors=x",
        "frobnicate \"Hca1\"",
        "# a comment",
    ] {
        let want = normal(ibsim.console(line).unwrap());
        let got = normal(ours.console.run(line).unwrap().0);
        assert_eq!(got, want, "{line}");
    }
    // ibsim names a CA's port 2 "port 1" here (it counts from 0 after
    // its check); vl15 names the port given.
    assert_eq!(
        ours.console.run("Unlink \"Hca1\"[2]").unwrap().0,
        "# port 2 at nodeid \"Hca1\" is not linked\n"
    );
    // ibsim: `# nodeid "(null)" ((null)) not found`.
    assert_eq!(
        ours.console.run("Link \"Hca1\"[1]").unwrap().0,
        "# link: no remote \"nodeid\"[port] in \"Link \"Hca1\"[1]\"\n"
    );
}

#[test]
fn the_cli_console_runs_a_script_then_stdin_and_wait_does_not_stop_the_fabric() {
    use std::io::{BufRead, BufReader, Write};
    use std::sync::{Arc, Mutex};
    let sockname = unique_sockname();
    let dir = tempfile::tempdir().unwrap();
    let inner = dir.path().join("inner");
    std::fs::write(&inner, "Dump \"Switch1\"\n").unwrap();
    let script = dir.path().join("script");
    std::fs::write(
        &script,
        format!(
            "# from the script\nUnlink \"Switch1\"[3]\n!{}\n",
            inner.display()
        ),
    )
    .unwrap();
    let mut child = Child(
        Command::new(env!("CARGO_BIN_EXE_vl15"))
            .args(["serve", "--topology"])
            .arg(topo(FILE))
            .args(["--sockname", &sockname, "--seed", "7", "--script"])
            .arg(&script)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("starting vl15 serve"),
    );
    let out = Arc::new(Mutex::new(String::new()));
    let reader = {
        let out = out.clone();
        let stdout = child.0.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let mut o = out.lock().unwrap();
                o.push_str(&line);
                o.push('\n');
            }
        })
    };
    let seen = |what: &str| out.lock().unwrap().contains(what);
    let wait_for = |what: &str| {
        for _ in 0..200 {
            if seen(what) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("vl15 serve did not print {what:?}: {}", out.lock().unwrap());
    };
    // The script ran: its comment, the Dump of its !file with port 3 down.
    wait_for("#  dumped 1 nodes");
    let text = out.lock().unwrap().clone();
    assert!(text.contains("# from the script"), "{text}");
    assert!(
        text.contains("200000\t[3]\t\t\t  4x  2.5G Down/Polling"),
        "{text}"
    );
    let mut stdin = child.0.stdin.take().unwrap();
    // Wait holds the prompt, not the fabric: ibnetdiscover is answered
    // (without the unplugged cable) before the Dump after the Wait runs.
    writeln!(stdin, "Wait 3\nDump \"Hca1\"").unwrap();
    let t0 = std::time::Instant::now();
    let exe = ibnetdiscover_path().unwrap_or_else(|e| panic!("{e:#}"));
    let f = parse(&run_tool(
        umad2sim_command(&sockname, &exe, Some("Hca2")).unwrap(),
    ));
    assert_eq!((f.nodes.len(), f.links.len()), (6, 5));
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    assert!(
        !seen("\"Hca1\"\tnodeguid"),
        "the Dump ran before Wait ended"
    );
    wait_for("\"Hca1\"\tnodeguid");
    assert!(t0.elapsed() >= Duration::from_secs(3));
    // --seed makes Error's seeds repeatable; the same line gives the same seed.
    writeln!(stdin, "Error \"Hca2\"[1] 50 0x15 icrc\nHelp\nQuit").unwrap();
    let mut status = None;
    for _ in 0..200 {
        status = child.0.try_wait().unwrap();
        if status.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(status.is_some_and(|s| s.success()), "Quit: {status:?}");
    reader.join().unwrap();
    let text = out.lock().unwrap().clone();
    // (Each answer follows ibsim's prompt, "sim> ".)
    let seeds: Vec<&str> = text
        .lines()
        .map(|l| l.trim_start_matches("sim> "))
        .filter(|l| l.starts_with("# error rate 50% of the packets into \"Hca2\"[1] with attribute 21: bad ICRC (seed=0x"))
        .collect();
    assert_eq!(seeds.len(), 1, "{text}");
    assert!(text.ends_with("Exiting network simulator.\n"), "{text}");
    // Help lists every command of ibsim's own help (Error's lines extended).
    let mut c = Command::new(sbin("ibsim"));
    c.arg("-s")
        .arg(topo(FILE))
        .stdin(std::process::Stdio::piped());
    c.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut ib = c.spawn().unwrap();
    ib.stdin.take().unwrap().write_all(b"help\nquit\n").unwrap();
    let ib = ib.wait_with_output().unwrap();
    let ib = String::from_utf8_lossy(&ib.stdout);
    let help: Vec<&str> = ib
        .lines()
        .skip_while(|l| !l.ends_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with('\t'))
        .filter(|l| !l.starts_with("\tError"))
        .collect();
    assert!(help.len() > 20, "{ib}");
    for l in help {
        assert!(
            text.lines().any(|t| t == l),
            "ibsim's help line {l:?} is missing"
        );
    }
    let seed = seeds[0].to_string();
    let again = vl15_console_once(&["Error \"Hca2\"[1] 50 0x15 icrc", "Quit"]);
    assert!(again.contains(&seed), "{again}\nwant {seed}");
}

/// The stdout of `vl15 serve --seed 7` on the usual file given `lines` on
/// its standard input.
fn vl15_console_once(lines: &[&str]) -> String {
    use std::io::Write;
    let mut c = Command::new(env!("CARGO_BIN_EXE_vl15"))
        .args(["serve", "--topology"])
        .arg(topo(FILE))
        .args(["--sockname", &unique_sockname(), "--seed", "7"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = c.stdin.take().unwrap();
    for l in lines {
        writeln!(stdin, "{l}").unwrap();
    }
    drop(stdin);
    let out = c.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn console_performance_set_writes_the_rtl_counters_that_perfquery_reads() {
    let ours = Served::start(&topo(FILE));
    let dir = tempfile::tempdir().unwrap();
    let _sm = opensm_daemon(&ours.sockname, "Hca1", dir.path(), &[]);
    let run = |line: &str| ours.console.run(line).unwrap().0;
    let perf = |node: &str, port: &str| {
        let lid = served_lid(&ours, node).to_string();
        perf_fields(&diag(&ours.sockname, "Hca1", "perfquery", &[&lid, port]))
    };
    for (node, port, field_name, value) in [
        ("Hca3", "1", "PortRcvErrors", 1234),
        ("Hca3", "1", "VL15Dropped", 7),
        ("Switch1", "3", "PortRcvErrors", 77),
        ("Switch1", "3", "PortRcvSwitchRelayErrors", 5),
        ("Switch1", "0", "PortRcvErrors", 9),
    ] {
        let line = format!("PerformanceSet \"{node}\"[{port}] PortCounters.{field_name}={value}");
        assert_eq!(
            run(&line),
            format!("{node}[{port}] PortCounters.{field_name} has been set to {value}\n")
        );
        assert_eq!(field(&perf(node, port), field_name), value, "{line}");
    }
    // Packet counters: the value plus the few packets the port sent and
    // received since (perfquery's requests and the answers before the
    // last; OpenSM's sweeps).
    run("PerformanceSet \"Hca3\"[1] PortCounters.PortXmitPkts=100");
    run("PerformanceSet \"Hca3\"[1] PortCountersExtended.PortRcvPkts=200");
    let f = perf("Hca3", "1");
    let (tx, rx) = (field(&f, "PortXmitPkts"), field(&f, "PortRcvPkts"));
    assert!(
        (100..105).contains(&tx) && (201..205).contains(&rx),
        "{tx} {rx}"
    );
    // What the RTL cannot hold, or has no counter for: one line each.
    for (line, want) in [
        (
            "PerformanceSet \"Hca3\"[1] PortCountersExtended.PortXmitData=0x100000000",
            "# value 4294967296 is over the RTL counter's 32 bits\n",
        ),
        (
            "PerformanceSet \"Hca3\"[1] PortCounters.SymbolErrorCounter=1",
            "# PortCounters.SymbolErrorCounter has no RTL counter (vl15's PMA answers 0)\n",
        ),
        (
            "PerformanceSet \"Hca3\"[1] PortCounters.PortRcvSwitchRelayErrors=1",
            "# PortCounters.PortRcvSwitchRelayErrors has no RTL counter at \"Hca3\"[1] (vl15's PMA answers 0)\n",
        ),
        (
            "PerformanceSet \"Hca3\"[1] PortVLOpData.PortVLOpData3=1",
            "# attribute PortVLOpData has no counters in the RTL (vl15's PMA answers 0)\n",
        ),
        (
            "PerformanceSet \"Hca3\"[0] PortCounters.PortRcvErrors=1",
            "# bad port number 0 at nodeid \"Hca3\"\n",
        ),
    ] {
        assert_eq!(run(line), want, "{line}");
    }
}

/// ibportstate's `down` on a switch port: the SMA retrains the link (both
/// ends Down for the retraining cycles), after which the cable carries
/// again and both ends train to Init (docs/decisions.md: Down retrains to
/// Init). The fabric looks at a port's link again when the retraining ends.
#[test]
fn ibportstate_down_retrains_the_link_and_both_ends_come_back_in_init() {
    use vl15::model::regmap::swreg;
    let ours = Served::start(&topo(FILE));
    let state = |node: &str| served_reg(&ours, node, swreg::PORT_STATE + 3);
    // No SM: every linked port is in Init.
    assert_eq!((state("Switch1"), state("Switch2")), (2, 2));
    let (ok, text) = diag_status(
        &ours.sockname,
        "Hca1",
        "ibportstate",
        &["-D", "0,1", "3", "down"],
    );
    assert!(ok, "{text}");
    assert_eq!(
        (state("Switch1"), state("Switch2")),
        (2, 2),
        "both ends back in Init after the retraining"
    );
    // The cable carries again: a directed route through it is answered.
    let (ok, text) = diag_status(
        &ours.sockname,
        "Hca1",
        "smpquery",
        &["-D", "nodeinfo", "0,1,3"],
    );
    assert!(ok, "{text}");
}
