//! Min-hop unicast routing: the linear forwarding table of every switch,
//! from the subnet as the SM discovered it.
//!
//! # The algorithm
//!
//! 1. Hop distances between switches: one breadth-first search from every
//!    switch over switch-to-switch links (`hops[s][t]`).
//! 2. Every destination LID belongs to an end port: a switch's port 0 (its
//!    one LID) or a CA port (base LID … base + 2^LMC − 1). The switch the
//!    destination hangs off (`a`) is the switch itself or the switch at the
//!    far end of the CA port's link.
//! 3. At switch `s`, LID `l`: port 0 if `l` is `s`'s own; the CA-facing port
//!    if the CA port hangs off `s`; otherwise, among the ports of `s` whose
//!    neighbour switch `t` has `hops[t][a] = hops[s][a] − 1`, the one that
//!    carries the fewest LIDs so far at `s` (ties: the lowest port number);
//!    0xFF if `a` cannot be reached from `s`.
//!
//! Every step strictly decreases the distance to `a`, so no route loops and
//! every route is a shortest path; the per-port counts spread the LIDs (and
//! the LMC paths of one port) over the equal-cost ports, as OpenSM's
//! min-hop engine does. Destinations are visited in LID order, so the
//! result depends only on the subnet, not on discovery order.

use std::collections::VecDeque;

/// No route in an LFT entry.
pub const NO_ROUTE: u8 = 0xFF;

/// One node of the routing graph.
#[derive(Debug, Clone, Default)]
pub struct RNode {
    pub switch: bool,
    /// `links[p]`: the (node, port) at the far end of port p's cable, for
    /// ports whose link is up (index 0 is the switch management port and
    /// never has one).
    pub links: Vec<Option<(usize, u8)>>,
    /// (port, base LID, LMC) of the node's end ports: port 0 of a switch,
    /// the connected ports of a CA. LID 0 = none.
    pub lids: Vec<(u8, u16, u8)>,
}

/// Switch-to-switch hop counts, `u32::MAX` for unreachable.
pub fn switch_hops(nodes: &[RNode]) -> Vec<Vec<u32>> {
    let n = nodes.len();
    let mut hops = vec![Vec::new(); n];
    for (s, node) in nodes.iter().enumerate() {
        if !node.switch {
            continue;
        }
        let mut d = vec![u32::MAX; n];
        d[s] = 0;
        let mut q = VecDeque::from([s]);
        while let Some(u) = q.pop_front() {
            for &(v, _) in nodes[u].links.iter().flatten() {
                if nodes[v].switch && d[v] == u32::MAX {
                    d[v] = d[u] + 1;
                    q.push_back(v);
                }
            }
        }
        hops[s] = d;
    }
    hops
}

/// Every destination: (LID, node, port, the switch it hangs off, hops from
/// that switch to the destination port: 0 for a switch's own LID, 1 for a
/// CA port).
fn destinations(nodes: &[RNode]) -> Vec<(u16, usize, u8, usize, u32)> {
    let mut out = Vec::new();
    for (n, node) in nodes.iter().enumerate() {
        for &(port, base, lmc) in &node.lids {
            if base == 0 {
                continue;
            }
            let (a, extra) = if node.switch {
                (n, 0)
            } else {
                match node.links.get(usize::from(port)).copied().flatten() {
                    Some((sw, _)) if nodes[sw].switch => (sw, 1),
                    // A CA cabled to a CA (or unconnected): no switch routes it.
                    _ => continue,
                }
            };
            for off in 0..(1u32 << lmc.min(7)) {
                let lid = u32::from(base) + off;
                if lid < 0xC000 {
                    out.push((lid as u16, n, port, a, extra));
                }
            }
        }
    }
    out.sort_unstable();
    out
}

/// The LFT of every switch (`None` for CAs), indexed by LID, covering LIDs
/// 0 ..= the highest LID in the subnet; unused entries are [`NO_ROUTE`].
pub fn min_hop(nodes: &[RNode]) -> Vec<Option<Vec<u8>>> {
    let hops = switch_hops(nodes);
    let dests = destinations(nodes);
    let top = dests.iter().map(|d| d.0).max().unwrap_or(0);
    let mut out = Vec::with_capacity(nodes.len());
    for (s, node) in nodes.iter().enumerate() {
        if !node.switch {
            out.push(None);
            continue;
        }
        let mut lft = vec![NO_ROUTE; usize::from(top) + 1];
        let mut load = vec![0u32; node.links.len()];
        for &(lid, n, port, a, _) in &dests {
            let egress = if n == s {
                Some(0)
            } else if a == s {
                // The CA port hangs off this switch: the port that faces it.
                node.links
                    .iter()
                    .position(|l| *l == Some((n, port)))
                    .map(|p| p as u8)
            } else {
                let want = hops[s][a];
                if want == u32::MAX {
                    None
                } else {
                    node.links
                        .iter()
                        .enumerate()
                        .filter_map(|(p, l)| l.map(|(t, _)| (p, t)))
                        .filter(|&(_, t)| nodes[t].switch && hops[t][a] == want - 1)
                        .min_by_key(|&(p, _)| (load[p], p))
                        .map(|(p, _)| p as u8)
                }
            };
            if let Some(p) = egress {
                lft[usize::from(lid)] = p;
                load[usize::from(p)] += 1;
            }
        }
        out.push(Some(lft));
    }
    out
}

/// Where a packet for `dlid` entering at switch `from` ends up by following
/// the LFTs: Ok((node, port, hops)) at the first end port that owns `dlid`,
/// or an error naming the switch where it was dropped or looped.
pub fn walk(
    nodes: &[RNode],
    lfts: &[Option<Vec<u8>>],
    from: usize,
    dlid: u16,
) -> Result<(usize, u8, u32), String> {
    let owns = |n: usize, p: u8| {
        nodes[n].lids.iter().any(|&(port, base, lmc)| {
            port == p && base != 0 && dlid >= base && u32::from(dlid) < u32::from(base) + (1 << lmc)
        })
    };
    let mut at = from;
    let mut hops = 0u32;
    loop {
        if hops > nodes.len() as u32 {
            return Err(format!("LID {dlid}: loop (more than {} hops)", nodes.len()));
        }
        let Some(lft) = lfts.get(at).and_then(|l| l.as_ref()) else {
            return Err(format!("LID {dlid}: node {at} is not a switch"));
        };
        let p = lft.get(usize::from(dlid)).copied().unwrap_or(NO_ROUTE);
        if p == 0 {
            return if owns(at, 0) {
                Ok((at, 0, hops))
            } else {
                Err(format!(
                    "LID {dlid}: switch {at} takes it to port 0, not its LID"
                ))
            };
        }
        let Some((next, np)) = nodes[at].links.get(usize::from(p)).copied().flatten() else {
            return Err(format!(
                "LID {dlid}: switch {at} has no route or a dead port ({p:#x})"
            ));
        };
        hops += 1;
        if !nodes[next].switch {
            return if owns(next, np) {
                Ok((next, np, hops))
            } else {
                Err(format!(
                    "LID {dlid}: switch {at} port {p} leads to a CA that does not own it"
                ))
            };
        }
        at = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two switches joined by two cables, two CAs on each (the shape of
    /// ibsim's net.2sw2path4hca); LIDs: switches 1, 2; CAs 3..6.
    fn two_path() -> Vec<RNode> {
        let mut n = vec![RNode::default(); 6];
        n[0].switch = true;
        n[1].switch = true;
        n[0].links = vec![None; 5];
        n[1].links = vec![None; 5];
        for p in [1u8, 2] {
            n[0].links[usize::from(p)] = Some((1, p));
            n[1].links[usize::from(p)] = Some((0, p));
        }
        for (ca, sw, p) in [(2, 0, 3), (3, 0, 4), (4, 1, 3), (5, 1, 4)] {
            n[ca].links = vec![None, Some((sw, p))];
            n[sw].links[usize::from(p)] = Some((ca, 1));
        }
        n[0].lids = vec![(0, 1, 0)];
        n[1].lids = vec![(0, 2, 0)];
        for (ca, node) in n.iter_mut().enumerate().skip(2) {
            node.lids = vec![(1, ca as u16 + 1, 0)];
        }
        n
    }

    #[test]
    fn every_lid_reaches_its_port_on_a_shortest_path() {
        let n = two_path();
        let lfts = min_hop(&n);
        for from in [0, 1] {
            for lid in 1..=6u16 {
                let (node, _, hops) = walk(&n, &lfts, from, lid).unwrap();
                assert_eq!(node, usize::from(lid - 1));
                // Hand-counted distances on this graph.
                let local = matches!((from, lid), (0, 1 | 3 | 4) | (1, 2 | 5 | 6));
                let want = match lid {
                    1 | 2 if local => 0,
                    1 | 2 => 1,
                    _ if local => 1,
                    _ => 2,
                };
                assert_eq!(hops, want, "from {from} to LID {lid}");
            }
        }
    }

    #[test]
    fn equal_cost_ports_share_the_load() {
        let n = two_path();
        let lfts = min_hop(&n);
        let lft0 = lfts[0].as_ref().unwrap();
        // LIDs 2, 5, 6 live behind switch 1: ports 1 and 2 are both one hop.
        let mut ports: Vec<u8> = [2usize, 5, 6].iter().map(|&l| lft0[l]).collect();
        ports.sort_unstable();
        assert_eq!(ports, vec![1, 1, 2]);
    }

    #[test]
    fn lmc_paths_spread_over_ports() {
        let mut n = two_path();
        // CA 4 (on switch 1) with LMC 1 at LIDs 8, 9.
        n[4].lids = vec![(1, 8, 1)];
        let lfts = min_hop(&n);
        let lft0 = lfts[0].as_ref().unwrap();
        assert_ne!(lft0[8], lft0[9]);
        for lid in [8u16, 9] {
            assert_eq!(walk(&n, &lfts, 0, lid).unwrap().0, 4);
        }
    }

    #[test]
    fn unreachable_and_unknown_lids_have_no_route() {
        let mut n = two_path();
        // Cut both inter-switch cables.
        for s in [0, 1] {
            n[s].links[1] = None;
            n[s].links[2] = None;
        }
        let lfts = min_hop(&n);
        assert_eq!(lfts[0].as_ref().unwrap()[5], NO_ROUTE);
        assert!(walk(&n, &lfts, 0, 5).is_err());
        assert!(walk(&n, &lfts, 0, 40).is_err());
        assert_eq!(walk(&n, &lfts, 0, 3).unwrap().0, 2);
    }
}
