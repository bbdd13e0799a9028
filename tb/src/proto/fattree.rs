//! Two-level fat trees of k-port switches, written as ibsim / ibnetdiscover
//! topology text (ibspec §10), so the same file loads into vl15 and into the
//! real ibsim.
//!
//! With k ports per switch: k leaf switches, each with k/2 CAs below it and
//! one uplink to each of k/2 spine switches; every spine has one link to
//! every leaf. k = 36 gives 36 + 18 = 54 switches and 36 × 18 = 648 CAs:
//! 702 nodes; k = 64 gives 96 switches and 2,048 CAs.
//!
//! Ports: leaf `l` port `h` (1..=k/2) ↔ CA `H-l-h` port 1; leaf `l` port
//! k/2 + `s` ↔ spine `s` port `l`.
//!
//! [`two_level_leaves`] builds the same tree with fewer leaves L (L divides
//! k, L even): L/2 spines, every leaf-spine pair joined by k/L parallel
//! links (leaf `l` uplink `u` = port k/2 + `u`, 0-based `u`, goes to spine
//! `u` mod L/2 + 1, port (`u` div L/2)·L + `l`), so every switch port is still
//! cabled. k = 36, L = 18: 18 + 9 switches and 324 CAs, 351 nodes.
//!
//! [`three_level`] builds the three-level tree of k-port switches (k pods;
//! per pod k/2 edge and k/2 aggregation switches; (k/2)² core switches):
//! k³/4 CAs and 5k²/4 switches; k = 36 gives 11,664 CAs and 1,620
//! switches, 13,284 nodes. Ports: edge `p.e` port `h` (1..=k/2) ↔ CA
//! `H-p-e-h` port 1; edge `p.e` port k/2 + `a` ↔ aggregation `p.a` port
//! `e`; aggregation `p.a` port k/2 + `c` ↔ core `a.c` port `p`.

use std::fmt::Write;

use anyhow::{bail, Result};

/// A fat tree by its shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tree {
    /// [`two_level_leaves`].
    Two { k: u8, leaves: u8 },
    /// [`three_level`].
    Three { k: u8 },
}

impl Tree {
    /// Its topology text.
    pub fn text(self) -> Result<String> {
        match self {
            Tree::Two { k, leaves } => two_level_leaves(k, leaves),
            Tree::Three { k } => three_level(k),
        }
    }

    /// How it is named on a command line: 36x18, 36L3.
    pub fn name(self) -> String {
        match self {
            Tree::Two { k, leaves } => format!("{k}x{leaves}"),
            Tree::Three { k } => format!("{k}L3"),
        }
    }
}

/// Topology text of the two-level fat tree of `k`-port switches (k even,
/// 2..=64: the RTL switch has at most 64 ports).
pub fn two_level(k: u8) -> Result<String> {
    two_level_leaves(k, k)
}

/// Topology text of a two-level fat tree of `k`-port switches with
/// `leaves` leaf switches (even, dividing k) and leaves/2 spines.
pub fn two_level_leaves(k: u8, leaves: u8) -> Result<String> {
    if k < 2 || k % 2 != 0 || u32::from(k) > vl15_bindings::MAX_SWITCH_PORTS {
        bail!(
            "fat tree: switch port count must be even and 2..={}, got {k}",
            vl15_bindings::MAX_SWITCH_PORTS
        );
    }
    if leaves < 2 || leaves % 2 != 0 || k % leaves != 0 {
        bail!("fat tree: the leaf count must be even and divide the port count {k}, got {leaves}");
    }
    let half = k / 2;
    let spines = leaves / 2;
    // Uplink u (0-based) of leaf l: spine u % spines + 1, at that spine's
    // port (u / spines) * leaves + l.
    let spine_of = |u: u8| u % spines + 1;
    let spine_port = |u: u8, l: u8| (u / spines) * leaves + l;
    let mut t = String::new();
    let _ = writeln!(
        t,
        "# vl15 two-level fat tree: {leaves} leaves and {spines} spines of {k} ports, {} CAs",
        u32::from(leaves) * u32::from(half)
    );
    for s in 1..=spines {
        let _ = writeln!(t, "\nSwitch {k} \"spine-{s}\"");
        // Spine port (u / spines) * leaves + l for every leaf l and every
        // uplink u of it that lands on this spine, in port order.
        for p in 1..=k {
            let (round, l) = ((p - 1) / leaves, (p - 1) % leaves + 1);
            let u = round * spines + (s - 1);
            debug_assert_eq!(spine_port(u, l), p);
            let _ = writeln!(t, "[{p}] \"leaf-{l}\"[{}]", half + u + 1);
        }
    }
    for l in 1..=leaves {
        let _ = writeln!(t, "\nSwitch {k} \"leaf-{l}\"");
        for h in 1..=half {
            let _ = writeln!(t, "[{h}] \"H-{l}-{h}\"[1]");
        }
        for u in 0..half {
            let _ = writeln!(
                t,
                "[{}] \"spine-{}\"[{}]",
                half + u + 1,
                spine_of(u),
                spine_port(u, l)
            );
        }
    }
    for l in 1..=leaves {
        for h in 1..=half {
            let _ = writeln!(t, "\nHca 1 \"H-{l}-{h}\"\n[1] \"leaf-{l}\"[{h}]");
        }
    }
    Ok(t)
}

/// Topology text of the three-level fat tree of `k`-port switches (k
/// even, 2..=64).
pub fn three_level(k: u8) -> Result<String> {
    if k < 2 || k % 2 != 0 || u32::from(k) > vl15_bindings::MAX_SWITCH_PORTS {
        bail!(
            "fat tree: switch port count must be even and 2..={}, got {k}",
            vl15_bindings::MAX_SWITCH_PORTS
        );
    }
    let half = k / 2;
    let k32 = u32::from(k);
    let mut t = String::new();
    let _ = writeln!(
        t,
        "# vl15 three-level fat tree of {k}-port switches: {k} pods, {} core switches, {} CAs",
        u32::from(half) * u32::from(half),
        k32 * k32 * k32 / 4
    );
    for a in 1..=half {
        for c in 1..=half {
            let _ = writeln!(t, "\nSwitch {k} \"core-{a}-{c}\"");
            for p in 1..=k {
                let _ = writeln!(t, "[{p}] \"agg-{p}-{a}\"[{}]", half + c);
            }
        }
    }
    for p in 1..=k {
        for a in 1..=half {
            let _ = writeln!(t, "\nSwitch {k} \"agg-{p}-{a}\"");
            for e in 1..=half {
                let _ = writeln!(t, "[{e}] \"edge-{p}-{e}\"[{}]", half + a);
            }
            for c in 1..=half {
                let _ = writeln!(t, "[{}] \"core-{a}-{c}\"[{p}]", half + c);
            }
        }
        for e in 1..=half {
            let _ = writeln!(t, "\nSwitch {k} \"edge-{p}-{e}\"");
            for h in 1..=half {
                let _ = writeln!(t, "[{h}] \"H-{p}-{e}-{h}\"[1]");
            }
            for a in 1..=half {
                let _ = writeln!(t, "[{}] \"agg-{p}-{a}\"[{e}]", half + a);
            }
        }
    }
    for p in 1..=k {
        for e in 1..=half {
            for h in 1..=half {
                let _ = writeln!(t, "\nHca 1 \"H-{p}-{e}-{h}\"\n[1] \"edge-{p}-{e}\"[{h}]");
            }
        }
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::topology::{NodeKind, Topology};
    use std::path::Path;

    #[test]
    fn k36_has_702_nodes_and_every_link_twice_declared() {
        let text = two_level(36).unwrap();
        let t = Topology::parse(&text, Path::new("fattree")).unwrap();
        let switches = t
            .nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Switch)
            .count();
        let cas = t.nodes.iter().filter(|n| n.kind == NodeKind::Ca).count();
        assert_eq!((switches, cas), (54, 648));
        // 648 CA links + 36 leaves × 18 uplinks.
        assert_eq!(t.links.len(), 648 + 36 * 18);
        // Every switch port is cabled.
        for n in t.nodes.iter().filter(|n| n.kind == NodeKind::Switch) {
            assert!(n.ports.iter().all(|p| p.remote.is_some()), "{}", n.id);
        }
    }

    #[test]
    fn k36_with_18_leaves_has_351_nodes_and_every_link_twice_declared() {
        let text = two_level_leaves(36, 18).unwrap();
        // Topology::parse refuses a link declared differently at its ends.
        let t = Topology::parse(&text, Path::new("fattree")).unwrap();
        let kind = |k| t.nodes.iter().filter(|n| n.kind == k).count();
        assert_eq!((kind(NodeKind::Switch), kind(NodeKind::Ca)), (27, 324));
        assert_eq!(t.nodes.len(), 351);
        // 324 CA links + 18 leaves × 18 uplinks, 2 to each of the 9 spines.
        assert_eq!(t.links.len(), 324 + 18 * 18);
        for n in t.nodes.iter().filter(|n| n.kind == NodeKind::Switch) {
            assert!(n.ports.iter().all(|p| p.remote.is_some()), "{}", n.id);
        }
    }

    #[test]
    fn the_full_tree_is_the_one_with_k_leaves() {
        assert_eq!(two_level(8).unwrap(), two_level_leaves(8, 8).unwrap());
        for (k, l) in [(8, 3), (8, 6), (8, 0), (8, 16), (36, 12)] {
            let r = two_level_leaves(k, l);
            assert_eq!(r.is_ok(), l > 0 && l % 2 == 0 && k % l == 0, "{k} {l}");
        }
    }

    #[test]
    fn three_levels_of_k_ports_have_k3_over_4_cas_and_5k2_over_4_switches() {
        for k in [2u8, 4, 8, 36] {
            let text = three_level(k).unwrap();
            // Topology::parse refuses a link declared differently at its ends.
            let t = Topology::parse(&text, Path::new("fattree3")).unwrap();
            let kind = |x| t.nodes.iter().filter(|n| n.kind == x).count();
            let k = usize::from(k);
            assert_eq!(kind(NodeKind::Ca), k * k * k / 4, "k {k}");
            assert_eq!(kind(NodeKind::Switch), 5 * k * k / 4, "k {k}");
            // Every switch port is cabled: k ports on each of 5k²/4 switches,
            // plus one CA port each, every link counted at both ends.
            assert_eq!(t.links.len(), (5 * k * k / 4 * k + k * k * k / 4) / 2);
            for n in t.nodes.iter().filter(|n| n.kind == NodeKind::Switch) {
                assert!(n.ports.iter().all(|p| p.remote.is_some()), "{}", n.id);
            }
        }
        assert_eq!(
            Topology::parse(&three_level(36).unwrap(), Path::new("f"))
                .unwrap()
                .nodes
                .len(),
            13_284
        );
        for k in [0, 1, 3, 66] {
            assert!(three_level(k).is_err(), "{k}");
        }
    }

    #[test]
    fn bad_port_counts_are_refused() {
        // odd, or more ports than the RTL switch has (64)
        for k in [0, 1, 3, 37, 66, 255] {
            assert!(two_level(k).is_err(), "{k}");
        }
        for k in [2, 36, 40, 64] {
            assert!(two_level(k).is_ok(), "{k}");
        }
    }
}
