//! The built-in SM brings fabrics of RTL switches and CAs up.
//!
//! Every check reads the devices, not the SM: the state dump takes LIDs,
//! LMC, PortState and LFTs from the RTL registers, and the expectations
//! come from the spec — every cabled port Active (ibspec §8 PortState),
//! LIDs unique and LMC-aligned, and for every pair of CA ports the LFT walk
//! reaches the destination port without a loop in exactly the hop count of
//! a shortest path, which a breadth-first search over the cables (written
//! here, independent of `routing.rs`) gives.

mod common;
use common::*;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::Path;

use vl15::agents::simrun::{bring_up, dump_state, SimOptions};
use vl15::proto::state::{Guid, NodeDump, PortState, StateDump};
use vl15::proto::topology::NodeKind;

/// (node index, port) of every port GUID + port number.
fn index(d: &StateDump) -> HashMap<(Guid, u8), (usize, u8)> {
    let mut m = HashMap::new();
    for (n, node) in d.nodes.iter().enumerate() {
        for p in &node.ports {
            m.insert((p.guid, p.port), (n, p.port));
        }
    }
    m
}

fn far_end(
    d: &StateDump,
    idx: &HashMap<(Guid, u8), (usize, u8)>,
    n: usize,
    p: u8,
) -> Option<(usize, u8)> {
    let port = d.nodes[n].ports.iter().find(|x| x.port == p)?;
    let nb = port.neighbour.as_ref()?;
    idx.get(&(nb.guid, nb.port)).copied()
}

/// Hops (cables crossed) from every node to every node, by BFS over cables.
fn bfs_hops(d: &StateDump, idx: &HashMap<(Guid, u8), (usize, u8)>, from: usize) -> Vec<u32> {
    let mut dist = vec![u32::MAX; d.nodes.len()];
    dist[from] = 0;
    let mut q = VecDeque::from([from]);
    while let Some(u) = q.pop_front() {
        // CAs do not forward: only the start may be a CA.
        if u != from && d.nodes[u].kind == NodeKind::Ca {
            continue;
        }
        for p in &d.nodes[u].ports {
            if let Some((v, _)) = far_end(d, idx, u, p.port) {
                if dist[v] == u32::MAX {
                    dist[v] = dist[u] + 1;
                    q.push_back(v);
                }
            }
        }
    }
    dist
}

fn check_subnet(name: &str, d: &StateDump, lmc: u8) {
    let idx = index(d);
    // Every cabled port Active; LIDs unique and aligned.
    let mut owner: BTreeMap<u16, (usize, u8)> = BTreeMap::new();
    for (n, node) in d.nodes.iter().enumerate() {
        for p in &node.ports {
            if p.neighbour.is_some() {
                assert_eq!(
                    p.state,
                    PortState::Active,
                    "{name}: {} port {} not Active",
                    node.id,
                    p.port
                );
            }
            let Some(lid) = p.lid else { continue };
            let want_lmc = if node.kind == NodeKind::Ca { lmc } else { 0 };
            if node.kind == NodeKind::Ca && p.neighbour.is_none() {
                continue;
            }
            assert_ne!(lid, 0, "{name}: {} port {} has no LID", node.id, p.port);
            assert_eq!(
                p.lmc,
                Some(want_lmc),
                "{name}: {} port {} LMC",
                node.id,
                p.port
            );
            assert_eq!(lid % (1 << want_lmc), 0, "{name}: LID {lid} not aligned");
            for l in lid..lid + (1 << want_lmc) {
                assert!(
                    owner.insert(l, (n, p.port)).is_none(),
                    "{name}: LID {l} given twice"
                );
            }
        }
    }
    // Every CA port to every CA port LID: the LFT walk.
    let cas: Vec<(usize, u8)> = d
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.kind == NodeKind::Ca)
        .flat_map(|(n, node)| {
            node.ports
                .iter()
                .filter(|p| p.neighbour.is_some())
                .map(move |p| (n, p.port))
        })
        .collect();
    for &(src, sp) in &cas {
        let hops = bfs_hops(d, &idx, src);
        for (&lid, &(dn, dp)) in &owner {
            if d.nodes[dn].kind != NodeKind::Ca || (dn, dp) == (src, sp) {
                continue;
            }
            let (got_n, got_p, h) = walk(d, &idx, src, sp, lid)
                .unwrap_or_else(|e| panic!("{name}: {} → LID {lid}: {e}", d.nodes[src].id));
            assert_eq!(
                (got_n, got_p),
                (dn, dp),
                "{name}: LID {lid} reached the wrong port"
            );
            // Shortest: a CA port's path leaves through its own port
            // (hops from src), and a CA never forwards.
            let min = hops[dn];
            if dn != src {
                assert_eq!(
                    h, min,
                    "{name}: {} → LID {lid} took {h} hops, min-hop is {min}",
                    d.nodes[src].id
                );
            }
        }
    }
}

/// Follow the LFTs from CA `src` port `sp` to `lid`: (node, port, cables).
fn walk(
    d: &StateDump,
    idx: &HashMap<(Guid, u8), (usize, u8)>,
    src: usize,
    sp: u8,
    lid: u16,
) -> Result<(usize, u8, u32), String> {
    let (mut at, mut inport) = far_end(d, idx, src, sp).ok_or("source port has no cable")?;
    let mut cables = 1;
    loop {
        let node: &NodeDump = &d.nodes[at];
        if node.kind == NodeKind::Ca {
            return Ok((at, inport, cables));
        }
        if cables > d.nodes.len() as u32 {
            return Err("loop".into());
        }
        let lft = node.lft.as_ref().ok_or("switch without LFT")?;
        let out = *lft
            .get(usize::from(lid))
            .ok_or_else(|| format!("{}: LID above LinearFDBTop", node.id))?;
        if out == 0 || out == 255 {
            return Err(format!("{}: LFT entry {out}", node.id));
        }
        if out == inport {
            return Err(format!("{}: sends it back out its input port", node.id));
        }
        let (n, p) = far_end(d, idx, at, out)
            .ok_or_else(|| format!("{}: port {out} has no cable", node.id))?;
        at = n;
        inport = p;
        cables += 1;
    }
}

fn bring_up_and_check(path: &Path, lmc: u8) -> vl15::agents::simrun::Summary {
    let mut opts = SimOptions::default();
    opts.sm.lmc = lmc;
    let (mut net, sm, summary) =
        bring_up(path, &opts).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
    assert_eq!(
        sm.stats.errors,
        0,
        "{}: SM errors: {:#?}",
        path.display(),
        sm.log
    );
    let dump = dump_state(&mut net).unwrap();
    check_subnet(&path.display().to_string(), &dump, lmc);
    assert_eq!(summary.active_ports, summary.linked_ports);
    summary
}

#[test]
fn every_ibsim_example_comes_up_routed() {
    for name in EXAMPLES {
        bring_up_and_check(&topo(name), 0);
    }
}

#[test]
fn lmc_2_gives_aligned_blocks_and_every_path_routes() {
    bring_up_and_check(&topo("net.2sw2path4hca2port"), 2);
}

#[test]
fn fat_tree_of_8_port_switches_comes_up_routed() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("ft8");
    std::fs::write(&p, vl15::proto::fattree::two_level(8).unwrap()).unwrap();
    let s = bring_up_and_check(&p, 0);
    assert_eq!(s.nodes, 8 / 2 + 8 + 32);
}

#[test]
fn the_dump_names_every_node_and_the_summary_counts_them() {
    let (mut net, _, summary) =
        bring_up(&topo("net.2sw2path4hca"), &SimOptions::default()).unwrap();
    let dump = dump_state(&mut net).unwrap();
    assert_eq!(dump.nodes.len(), summary.nodes);
    assert_eq!(summary.switches, 2);
    assert_eq!(summary.cas, 4);
    // 2 cables between the switches, 4 CA cables: 12 port ends.
    assert_eq!(summary.linked_ports, 12);
    let json = serde_json::to_value(&dump).unwrap();
    assert_eq!(json["nodes"][0]["type"], "switch");
    assert!(json["nodes"][0]["lft"].as_array().unwrap().len() > 6);
    // PortState by its IBA name: Switch1 port 1 is cabled to Hca1.
    assert_eq!(json["nodes"][0]["ports"][1]["port"], 1);
    assert_eq!(json["nodes"][0]["ports"][1]["state"], "Active");
    assert!(json["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n["type"] == "ca"));
}

/// LID of every port, by GUID and port number.
fn lids(d: &StateDump) -> BTreeMap<(Guid, u8), Option<u16>> {
    d.nodes
        .iter()
        .flat_map(|n| n.ports.iter().map(|p| ((p.guid, p.port), p.lid)))
        .collect()
}

/// Switch1 ports 3 and 5 are the two cables to Switch2 in
/// net.2sw2path4hca: routes between the switches use both (balanced).
fn inter_switch_ports_used(d: &StateDump) -> Vec<u8> {
    let s1 = d.nodes.iter().find(|n| n.id == "Switch1").unwrap();
    let mut used: Vec<u8> = s1
        .lft
        .as_ref()
        .unwrap()
        .iter()
        .copied()
        .filter(|&p| p == 3 || p == 5)
        .collect();
    used.sort_unstable();
    used.dedup();
    used
}

/// net.2sw2path4hca brought up by the default SM: the fabric, the SM, the
/// state dump right after, and the light-sweep interval.
fn up_with_default_sm() -> (
    vl15::agents::node_sma::Net,
    Vec<vl15::agents::subnet_sm::SubnetManager>,
    StateDump,
    u64,
) {
    let opts = SimOptions::default();
    let (mut net, sm, _) = bring_up(&topo("net.2sw2path4hca"), &opts).unwrap();
    let before = dump_state(&mut net).unwrap();
    (net, vec![sm], before, opts.sm.sweep_interval)
}

#[test]
fn a_link_that_goes_down_is_routed_around_and_used_again_when_it_returns() {
    use vl15::agents::subnet_sm::run_for;
    let (mut net, mut sms, before, interval) = up_with_default_sm();
    assert_eq!(inter_switch_ports_used(&before), vec![3, 5]);

    net.console(r#"Unlink "Switch1"[5]"#).unwrap();
    run_for(&mut net, &mut sms, 3 * interval).unwrap();
    let down = dump_state(&mut net).unwrap();
    // A light sweep saw PortStateChange and a heavy sweep re-routed: every
    // CA pair still routes (the walk fails on a port without a cable), only
    // over port 3, and no LID changed.
    check_subnet("after Unlink", &down, 0);
    assert_eq!(inter_switch_ports_used(&down), vec![3]);
    assert_eq!(lids(&down), lids(&before));
    assert!(sms[0].stats.heavy_sweeps >= 2, "{:#?}", sms[0].log);

    net.console(r#"ReLink "Switch1"[5]"#).unwrap();
    run_for(&mut net, &mut sms, 3 * interval).unwrap();
    let up = dump_state(&mut net).unwrap();
    check_subnet("after ReLink", &up, 0);
    assert_eq!(inter_switch_ports_used(&up), vec![3, 5]);
    assert_eq!(lids(&up), lids(&before));
}

/// A CA leaves (every cable of it down) and comes back: while it is gone the
/// others still route and keep their LIDs; back, it gets its old LID again
/// (the SM remembers LIDs by port GUID) and every pair routes again.
#[test]
fn a_node_that_leaves_and_returns_keeps_its_lid() {
    use vl15::agents::subnet_sm::run_for;
    let (mut net, mut sms, before, interval) = up_with_default_sm();
    let hca3 = |d: &StateDump| d.nodes.iter().find(|n| n.id == "Hca3").unwrap().ports[0].clone();
    let lid3 = hca3(&before).lid.unwrap();

    net.console(r#"Unlink "Hca3""#).unwrap();
    run_for(&mut net, &mut sms, 3 * interval).unwrap();
    let gone = dump_state(&mut net).unwrap();
    assert!(hca3(&gone).neighbour.is_none());
    assert_eq!(
        sms[0].subnet.nodes.len(),
        before.nodes.len() - 1,
        "{:#?}",
        sms[0].log
    );
    check_subnet("Hca3 gone", &gone, 0);
    let mut others = lids(&before);
    others.retain(|(g, _), _| *g != hca3(&before).guid);
    let mut now = lids(&gone);
    now.retain(|(g, _), _| *g != hca3(&before).guid);
    assert_eq!(now, others, "no other LID changed");

    net.console(r#"ReLink "Hca3""#).unwrap();
    run_for(&mut net, &mut sms, 3 * interval).unwrap();
    let back = dump_state(&mut net).unwrap();
    check_subnet("Hca3 back", &back, 0);
    assert_eq!(hca3(&back).lid, Some(lid3));
    assert_eq!(lids(&back), lids(&before));
}

#[test]
fn a_link_down_raises_trap_128_which_is_repressed_and_answered_by_a_sweep() {
    use vl15::agents::subnet_sm::run_for;
    let path = topo("net.2sw2path4hca");
    let mut opts = SimOptions::default();
    // No light sweep in this test: only the trap can start a heavy sweep.
    opts.sm.sweep_interval = u64::MAX / 4;
    let trap_interval = opts.net.trap_interval;
    let (mut net, sm, _) = bring_up(&path, &opts).unwrap();
    let mut sms = vec![sm];
    let sweeps = sms[0].stats.heavy_sweeps;
    let traps_sent =
        |net: &vl15::agents::node_sma::Net| -> u64 { net.devs.iter().map(|d| d.traps_sent).sum() };
    assert_eq!(traps_sent(&net), 0, "no link edge after the LIDs were set");

    net.console(r#"Unlink "Switch1"[5]"#).unwrap();
    run_for(&mut net, &mut sms, trap_interval / 2).unwrap();
    // Both switches saw the edge: two traps, each answered.
    assert_eq!(sms[0].stats.traps, 2, "{:#?}", sms[0].log);
    assert!(sms[0].stats.heavy_sweeps > sweeps);
    let down = dump_state(&mut net).unwrap();
    check_subnet("after the trap", &down, 0);
    assert_eq!(inter_switch_ports_used(&down), vec![3]);
    // Repressed: nothing is sent again over several repeat intervals.
    let sent = traps_sent(&net);
    assert_eq!(sent, 2);
    run_for(&mut net, &mut sms, 5 * trap_interval).unwrap();
    assert_eq!(traps_sent(&net), sent);
    assert_eq!(sms[0].stats.traps, 2);
}

#[test]
fn a_trap_nobody_represses_is_sent_again_every_interval() {
    let path = topo("net.2sw2path4hca");
    let opts = SimOptions::default();
    let trap_interval = opts.net.trap_interval;
    let (mut net, _sm, _) = bring_up(&path, &opts).unwrap();
    // The SM is not stepped any more: nobody answers.
    net.console(r#"Unlink "Switch1"[5]"#).unwrap();
    net.run(4 * trap_interval + 10).unwrap();
    let sent: u64 = net.devs.iter().map(|d| d.traps_sent).sum();
    // Each switch: the first trap at the edge, then one every interval.
    assert_eq!(sent, 2 * 5);
}

#[test]
fn bring_up_report_times_both_the_rtl_and_opensm_on_ibsim() {
    let text = vl15::proto::fattree::two_level(8).unwrap();
    let r = vl15::run::netbench::bring_up_report(&text, 8).unwrap();
    eprintln!("{r}");
    assert!(r.contains("44 nodes, 128/128 ports Active"), "{r}");
    // OpenSM reached SUBNET UP on ibsim for the same file (opensm is
    // installed by make deps), so the ratio is printed.
    assert!(r.contains("OpenSM -o on ibsim, same file:"), "{r}");
}

/// Another CA asks the SM for its SMInfo by directed route: the request
/// crosses the RTL to the SM's CA, whose RTL hands SMInfo Get to the SM (not
/// the SMA); the SM's GetResp goes back through the RTL's send rules.
#[test]
fn the_sm_answers_sminfo_get_through_the_rtl() {
    use vl15::agents::qp0::{Event, Transactions, TxOptions};
    use vl15::model::device::AddressHandle;
    use vl15::proto::mad;
    use vl15::proto::packet::consts::{ATTR_SM_INFO, METHOD_GET, METHOD_GET_RESP};
    let path = topo("net.2sw2path4hca");
    let (mut net, mut sm, _) = bring_up(&path, &SimOptions::default()).unwrap();
    let master = sm.dev;
    let other = net
        .devs
        .iter()
        .position(|d| !d.is_switch && d.name != net.devs[master].name)
        .unwrap();
    net.attach_sm(other, 1).unwrap();
    let route = vl15::run::netbench::dr_paths(&net.topo, other, 1)[master]
        .clone()
        .unwrap();
    let mut q: Transactions<()> = Transactions::new(other, 1, 0x99, TxOptions::default());
    q.submit(
        AddressHandle::directed(),
        mad::dr_request(METHOD_GET, ATTR_SM_INFO, 0, 0, &route),
        (),
    );
    let mut got = None;
    for _ in 0..200_000 {
        sm.step(&mut net).unwrap();
        for e in q.pump(&mut net).unwrap() {
            if let Event::Response { resp, .. } = e {
                got = Some(resp);
            }
        }
        if got.is_some() {
            break;
        }
        net.step().unwrap();
    }
    let r = got.expect("an SMInfo response");
    assert_eq!(mad::method(&r), METHOD_GET_RESP);
    assert_eq!(mad::status(&r), 0);
    let d = mad::data(&r);
    let guid = u64::from_be_bytes(d[0..8].try_into().unwrap());
    assert_eq!(guid, net.devs[master].agent().identity().port_guid(1));
    assert_eq!(d[20] & 0x0F, 3, "SMState Master");
    assert_eq!(d[20] >> 4, 0, "priority 0");
    assert!(
        u32::from_be_bytes(d[16..20].try_into().unwrap()) > 0,
        "ActCount"
    );
}

/// One switch, two CAs: the whole bring-up on the wire, as a reviewed
/// snapshot (any change of SM behaviour or RTL timing shows in its diff).
/// Checked from the spec first: every packet is a VL15 SMP with good ICRC
/// and VCRC, and the requests are the SM's phases in order.
#[test]
fn bring_up_trace_of_a_small_fabric() {
    for w in vl15_bindings::DEV_DATA_WIDTHS {
        bring_up_trace_at(w);
    }
}

fn bring_up_trace_at(w: u32) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tiny");
    std::fs::write(
        &path,
        "Switch 4 \"S\"\n[1] \"A\"[1]\n[2] \"B\"[1]\n\nHca 1 \"A\"\n[1] \"S\"[1]\n\nHca 1 \"B\"\n[1] \"S\"[2]\n",
    )
    .unwrap();
    let mut opts = SimOptions::default();
    opts.net.trace = true;
    opts.net.data_w = w;
    let (net, _sm, s) = bring_up(&path, &opts).unwrap();
    assert_eq!((s.active_ports, s.linked_ports), (4, 4));
    let mut t = net.trace.clone();
    t.sort_by_key(|e| e.cycle);
    for e in &t {
        assert_eq!(e.bytes[0] >> 4, 15, "{}: VL15", e.dir);
        assert_eq!(
            vl15::proto::crc::check_wire(&e.bytes),
            Some((true, true)),
            "{}",
            e.dir
        );
    }
    // Requests leave A (the SM) in phase order: the last Set is a PortInfo
    // Set to Active, and no LFT Set comes before the last NodeInfo Get.
    let text = vl15::model::trace::text(&t);
    let from_a: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" A[1]>S[1] ") && !l.contains("GetResp"))
        .collect();
    let last_ni = from_a
        .iter()
        .rposition(|l| l.contains("SubnGet(NodeInfo)"))
        .unwrap();
    let first_lft = from_a
        .iter()
        .position(|l| l.contains("LinearForwardingTable"))
        .unwrap();
    assert!(last_ni < first_lft);
    insta::assert_snapshot!(format!("bring_up_tiny_w{w}"), text);
}
