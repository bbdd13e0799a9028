//! Fabric discovery against the real ibsim, checked against the real
//! ibnetdiscover (Debian 12 infiniband-diags) on the same simulated fabric.
//!
//! For every ibsim example topology in tests/topologies/ (and a few extra
//! fabrics below that exercise LIDs, LMC, enhanced port 0, vendor/device IDs,
//! QDR/MlnxExtPortInfo ordering, system image GUIDs and CA start nodes):
//! start ibsim, run `vl15::agents::discover` through `IbsimClient`, run
//! `LD_PRELOAD=libumad2sim.so ibnetdiscover` against the same ibsim, and
//! require the texts to be byte-for-byte equal except for the date on the
//! `# Topology file: generated on …` line (the only time-dependent line;
//! both dates are replaced by `<date>` before comparing).
//!
//! A second test sends DR Get(NodeInfo) through `IbsimClient` to every node
//! along a path computed from the topology file and checks the GUIDs,
//! types and ports against what `vl15::proto::topology` computes for the file (an
//! independent check of the GUID defaults).
//!
//! Needs ibsim-utils, libumad2sim0 and infiniband-diags (`make deps`);
//! without them these tests fail and say so.

mod common;
use common::*;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use vl15::agents::discover::{
    discover, discover_with, format_ibnetdiscover, normalize_generated_line, DiscoverConfig,
    Discovered,
};
use vl15::agents::ibsim::IbsimServer;
use vl15::proto::mad;
use vl15::proto::packet::attr::NodeInfo;
use vl15::proto::packet::consts::{ATTR_NODE_INFO, METHOD_GET, METHOD_GET_RESP, NODE_TYPE_SWITCH};
use vl15::proto::topology::{NodeKind, Topology};

/// Extra fabrics, in ibsim's file format.
///
/// `mlx`: Mellanox DeviceIDs (switch 0xc738, CA 0x1003) so ibnetdiscover
/// queries MlnxExtPortInfo on the QDR link (which reorders its CA list),
/// explicit switch/CA LIDs and LMC, enhanced and base port 0, vendid,
/// sysimgguid, a 4-port switch, a 1-port CA, a CA cabled to two switches.
const MLX: &str = r#"
vendid=0x2c9
devid=0xc738
sysimgguid=0x1234
switchguid=0x300000
Switch	8 "Sw-A"	# "big switch A" enhanced port 0 lid 7 lmc 0
[1]	"Ca-1"[2]	# lid 9 4xQDR
[2]	"Sw-B"[3]
[4]	"Ca-2"[1]

devid=0xc738
vendid=0x2c9
Switch	4 "Sw-B"	# "switch B" base port 0 lid 8 lmc 2
[3]	"Sw-A"[2]
[4]	"Ca-2"[2]
[1]	"Ca-3"[1]

vendid=0x2c9
devid=0x1003
caguid=0x500000
Hca	2 "Ca-1"	# "host one mlx4_0"
[2]	"Sw-A"[1]	# lid 9 lmc 1 "Sw-A" lid 7 4xQDR

devid=0x1003
Hca	2 "Ca-2"
[1]	"Sw-A"[4]
[2]	"Sw-B"[4]

Hca	1 "Ca-3"
[1]	"Sw-B"[1]
"#;

/// `ring`: three switches in a loop with parallel links; link widths and
/// speeds set by port options (`w=` LinkWidthEnabled, `s=`
/// LinkSpeedEnabled, `e=` LinkSpeedExtEnabled masks) so the text shows 1x,
/// 12x, DDR, QDR and EDR; a CA first in the file (ibsim's default port is
/// then a CA port).
const RING: &str = r#"
Hca	1 "first-ca"
[1]	"R1"[8] w=11 s=7

Switch	8 "R1"
[1]	"R2"[1] w=1
[2]	"R2"[2]
[3]	"R3"[3] s=3
[8]	"first-ca"[1] w=11 s=7

Switch	8 "R2"
[1]	"R1"[1] w=1
[2]	"R1"[2]
[5]	"R3"[5] s=7 e=3
[6]	"other-ca"[2]

Switch	8 "R3"
[3]	"R1"[3] s=3
[5]	"R2"[5] s=7 e=3

Hca	2 "other-ca"
[2]	"R2"[6]
"#;

fn extra_topologies(dir: &Path) -> Vec<PathBuf> {
    [("mlx", MLX), ("ring", RING)]
        .iter()
        .map(|(name, text)| {
            let p = dir.join(name);
            std::fs::write(&p, text).unwrap();
            p
        })
        .collect()
}

fn ours(server: &IbsimServer, node: Option<&str>) -> (Discovered, String) {
    let mut client = server.connect(node).unwrap_or_else(|e| panic!("{e:#}"));
    let d = discover(&mut client).unwrap_or_else(|e| panic!("{e:#}"));
    let text = format_ibnetdiscover(&d);
    (d, text)
}

/// Compare; returns ibnetdiscover's text.
fn compare(topology: &Path, node: Option<&str>) -> String {
    let server = IbsimServer::start(topology).unwrap_or_else(|e| panic!("{e:#}"));
    let real = real_ibnetdiscover(&server, node);
    let (d, mine) = ours(&server, node);
    assert!(
        d.errors.is_empty(),
        "{} from {node:?}: query errors {:?}",
        topology.display(),
        d.errors
    );
    let (real_n, mine_n) = (
        normalize_generated_line(&real),
        normalize_generated_line(&mine),
    );
    if real_n != mine_n {
        panic!(
            "{} from {node:?}: discover differs from ibnetdiscover\n--- ibnetdiscover\n{real}\n--- vl15\n{mine}",
            topology.display()
        );
    }
    // Exactly one line was normalized, and it is line 2.
    let diff: Vec<usize> = real
        .lines()
        .zip(mine.lines())
        .enumerate()
        .filter(|(_, (a, b))| a != b)
        .map(|(i, _)| i)
        .collect();
    assert!(diff.iter().all(|&i| i == 1), "{diff:?}");
    real
}

#[test]
fn discover_matches_ibnetdiscover_on_ibsim_examples() {
    for name in EXAMPLES {
        let real = compare(&topo_dir().join(name), None);
        assert!(
            real.contains("\nSwitch\t8 \"S-0000000000200000\""),
            "{real}"
        );
    }
}

#[test]
fn discover_matches_ibnetdiscover_from_other_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let extra = extra_topologies(dir.path());
    let cases: &[(&Path, Option<&str>)] = &[
        (&extra[0], None),
        (&extra[0], Some("Sw-B")),
        (&extra[0], Some("Ca-3")),
        // Ca-1's port 1 is not cabled: ibnetdiscover sees only Ca-1.
        (&extra[0], Some("Ca-1")),
        (&extra[1], None),
        (&extra[1], Some("R3")),
        (&extra[1], Some("other-ca")),
    ];
    let mut all = String::new();
    for (topo, node) in cases {
        all.push_str(&compare(topo, *node));
    }
    // The extra fabrics do reach these printing paths.
    for want in [
        "1xSDR",
        "4xDDR",
        "12xQDR",
        "4xEDR",
        "4xQDR",
        "enhanced port 0 lid 7 lmc 0",
        "base port 0 lid 8 lmc 2",
        "# lid 9 lmc 1",
        "sysimgguid=0x1234",
        "vendid=0x2c9",
        "Ca\t1 ",
    ] {
        assert!(all.contains(want), "no {want:?} in\n{all}");
    }
    let two_port = topo_dir().join("net.2sw2path4hca2port");
    compare(&two_port, Some("Hca2"));
    compare(&two_port, Some("Switch2"));
}

/// The comparison is sensitive to query order: without the MlnxExtPortInfo
/// step ibnetdiscover takes on Mellanox QDR ports, Ca-1 is found before
/// Ca-2 and the CA list comes out in another order.
#[test]
fn mlnx_ext_port_info_step_changes_node_order() {
    let dir = tempfile::tempdir().unwrap();
    let mlx = &extra_topologies(dir.path())[0];
    let server = IbsimServer::start(mlx).unwrap_or_else(|e| panic!("{e:#}"));
    let real = normalize_generated_line(&real_ibnetdiscover(&server, None));
    let mut client = server.connect(None).unwrap();
    let d = discover_with(
        &mut client,
        DiscoverConfig {
            mlx_epi: false,
            ..DiscoverConfig::default()
        },
    )
    .unwrap();
    let without = normalize_generated_line(&format_ibnetdiscover(&d));
    assert_ne!(real, without);
    let mut sorted_real: Vec<&str> = real.lines().collect();
    let mut sorted_without: Vec<&str> = without.lines().collect();
    sorted_real.sort_unstable();
    sorted_without.sort_unstable();
    assert_eq!(sorted_real, sorted_without, "same lines, other order");
    let (d, _) = ours(&server, None);
    let ca1 = d.find(0x50_0000).unwrap();
    let ext = d.nodes[d.find(0x30_0000).unwrap()].port(1).unwrap();
    assert!(
        ext.ext_info.is_some(),
        "MlnxExtPortInfo of Sw-A port 1 queried"
    );
    assert!(d.find(0x50_0003).unwrap() < ca1, "Ca-2 found before Ca-1");
}

/// DR paths from ibsim's attach port to every node (switches only as
/// intermediate hops), by breadth-first search over the file's links.
fn dr_paths(t: &Topology, start: (usize, u8)) -> Vec<Option<(Vec<u8>, u8)>> {
    // (path, port the node is entered by)
    let mut out: Vec<Option<(Vec<u8>, u8)>> = vec![None; t.nodes.len()];
    out[start.0] = Some((Vec::new(), start.1));
    let mut q = VecDeque::new();
    if t.nodes[start.0].kind == NodeKind::Switch {
        q.push_back(start.0);
    } else if let Some((rn, rp)) = t.remote(start.0, start.1) {
        if out[rn].is_none() {
            out[rn] = Some((vec![start.1], rp));
            if t.nodes[rn].kind == NodeKind::Switch {
                q.push_back(rn);
            }
        }
    }
    while let Some(n) = q.pop_front() {
        let base = out[n].clone().unwrap().0;
        for p in 1..=t.nodes[n].nports {
            if let Some((rn, rp)) = t.remote(n, p) {
                if out[rn].is_none() {
                    let mut path = base.clone();
                    path.push(p);
                    out[rn] = Some((path, rp));
                    if t.nodes[rn].kind == NodeKind::Switch {
                        q.push_back(rn);
                    }
                }
            }
        }
    }
    out
}

fn check_guids(topology: &Path) {
    let t = Topology::load(topology).unwrap();
    let server = IbsimServer::start(topology).unwrap_or_else(|e| panic!("{e:#}"));
    let mut client = server.connect(None).unwrap_or_else(|e| panic!("{e:#}"));
    let start = t.default_port().unwrap();
    assert_eq!(client.node_id(), t.nodes[start.0].id);
    let paths = dr_paths(&t, start);
    let mut checked = 0;
    for (i, n) in t.nodes.iter().enumerate() {
        let Some((path, in_port)) = &paths[i] else {
            continue;
        };
        let tid = 0x1000 + i as u64;
        let req = mad::dr_request(METHOD_GET, ATTR_NODE_INFO, 0, tid, path);
        let resp = client
            .smp(&req, 0xFFFF)
            .unwrap_or_else(|e| panic!("{}: {e:#}", n.id));
        assert_eq!(mad::method(&resp), METHOD_GET_RESP, "{}", n.id);
        assert_eq!(mad::status(&resp), 0, "{}", n.id);
        assert_eq!(mad::tid(&resp) & 0xFFFF_FFFF_FFFF, tid, "{}", n.id);
        let ni = NodeInfo::decode(mad::data(&resp)).unwrap();
        let what = format!("{} node {} via {path:?}", topology.display(), n.id);
        assert_eq!(ni.node_guid, n.node_guid, "{what}");
        assert_eq!(ni.sys_guid, n.sys_image_guid, "{what}");
        assert_eq!(ni.num_ports, n.nports, "{what}");
        assert_eq!(ni.local_port_num, *in_port, "{what}");
        assert_eq!(ni.port_guid, n.port_guid(*in_port).unwrap(), "{what}");
        assert_eq!(ni.vendor_id, n.vendor_id, "{what}");
        assert_eq!(ni.device_id, n.device_id, "{what}");
        let want_type = match n.kind {
            NodeKind::Switch => NODE_TYPE_SWITCH,
            NodeKind::Ca => 1,
            NodeKind::Router => 3,
        };
        assert_eq!(ni.node_type, want_type, "{what}");
        checked += 1;
    }
    // Every example fabric is connected: every node was reached.
    assert_eq!(checked, t.nodes.len(), "{}", topology.display());
}

#[test]
fn dr_nodeinfo_guids_match_topology_defaults() {
    for name in EXAMPLES {
        check_guids(&topo_dir().join(name));
    }
    let dir = tempfile::tempdir().unwrap();
    for p in extra_topologies(dir.path()) {
        check_guids(&p);
    }
}

#[test]
fn ibsim_errors_are_reported_not_panics() {
    let server = IbsimServer::start(&topo_dir().join("net.1")).unwrap_or_else(|e| panic!("{e:#}"));
    // Unknown SIM_HOST: ibsim refuses the CONNECT.
    let e = server.connect(Some("no-such-node")).err().unwrap();
    assert!(format!("{e:#}").contains("refused"), "{e:#}");
    let mut c = server.connect(None).unwrap();
    // A DR path through a CA port that is not cabled: ibsim cannot deliver.
    let req = mad::dr_request(METHOD_GET, ATTR_NODE_INFO, 0, 7, &[2, 1]);
    let e = c.smp(&req, 0xFFFF).unwrap_err();
    assert!(format!("{e:#}").contains("ibsim"), "{e:#}");
    // BaseVersion 2: ibsim drops it silently → timeout.
    let mut bad = mad::dr_request(METHOD_GET, ATTR_NODE_INFO, 0, 8, &[]);
    bad[0] = 2;
    c.set_timeout(std::time::Duration::from_millis(100));
    let e = c.smp(&bad, 0xFFFF).unwrap_err();
    assert!(format!("{e:#}").contains("no response"), "{e:#}");
    // The client still works afterwards.
    let ok = mad::dr_request(METHOD_GET, ATTR_NODE_INFO, 0, 9, &[]);
    c.set_timeout(std::time::Duration::from_secs(1));
    let r = c.smp(&ok, 0xFFFF).unwrap();
    assert_eq!(
        NodeInfo::decode(mad::data(&r)).unwrap().node_guid,
        0x20_0000
    );
}

#[test]
fn missing_topology_is_a_clear_error() {
    let e = IbsimServer::start(Path::new("/nonexistent/topology"))
        .err()
        .unwrap();
    assert!(format!("{e:#}").contains("/nonexistent/topology"), "{e:#}");
}
