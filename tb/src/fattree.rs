//! Two-level fat trees of k-port switches, written as ibsim / ibnetdiscover
//! topology text (ibspec §10), so the same file loads into vl15 and into the
//! real ibsim.
//!
//! With k ports per switch: k leaf switches, each with k/2 CAs below it and
//! one uplink to each of k/2 spine switches; every spine has one link to
//! every leaf. k = 36 gives 36 + 18 = 54 switches and 36 × 18 = 648 CAs:
//! 702 nodes, the fabric of issue 3's benchmark.
//!
//! Ports: leaf `l` port `h` (1..=k/2) ↔ CA `H-l-h` port 1; leaf `l` port
//! k/2 + `s` ↔ spine `s` port `l`.

use std::fmt::Write;

use anyhow::{bail, Result};

/// Topology text of the two-level fat tree of `k`-port switches (k even,
/// 2..=36: the RTL switch has at most 36 ports).
pub fn two_level(k: u8) -> Result<String> {
    if k < 2 || k % 2 != 0 || k > 36 {
        bail!("fat tree: switch port count must be even and 2..=36, got {k}");
    }
    let half = k / 2;
    let mut t = String::new();
    let _ = writeln!(
        t,
        "# vl15 two-level fat tree: {k} leaves and {half} spines of {k} ports, {} CAs",
        u32::from(k) * u32::from(half)
    );
    for s in 1..=half {
        let _ = writeln!(t, "\nSwitch {k} \"spine-{s}\"");
        for l in 1..=k {
            let _ = writeln!(t, "[{l}] \"leaf-{l}\"[{}]", half + s);
        }
    }
    for l in 1..=k {
        let _ = writeln!(t, "\nSwitch {k} \"leaf-{l}\"");
        for h in 1..=half {
            let _ = writeln!(t, "[{h}] \"H-{l}-{h}\"[1]");
        }
        for s in 1..=half {
            let _ = writeln!(t, "[{}] \"spine-{s}\"[{l}]", half + s);
        }
    }
    for l in 1..=k {
        for h in 1..=half {
            let _ = writeln!(t, "\nHca 1 \"H-{l}-{h}\"\n[1] \"leaf-{l}\"[{h}]");
        }
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{NodeKind, Topology};
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
    fn bad_port_counts_are_refused() {
        for k in [0, 1, 3, 38] {
            assert!(two_level(k).is_err(), "{k}");
        }
    }
}
