//! Functional coverage of what a node's SMA does with the requests the RTL
//! hands it: one cell per method × attribute × routing × outcome, counted
//! in coverage runs (`VL15_COVERAGE_DIR`, docs/coverage.md) next to the
//! models' own points.
//!
//! - method: Get, Set (every attribute below) and TrapRepress (Notice);
//! - attribute: each one the SMA answers, and `Other` for the rest;
//! - routing: `LID` (class 0x01), `DR` (class 0x81 with DrSLID and DrDLID
//!   permissive) and `LIDDR` (class 0x81 with a LID-routed part: DrSLID or
//!   DrDLID not permissive; IBA 14.2.2);
//! - outcome: `answered` (a response goes back), `dropped` (none does) and
//!   `trap` (the RTL flagged an M_Key violation: Trap 256 instead).
//!
//! Each cell is a cover point named `CELL_<method>_<attr>_<routing>_<outcome>`
//! of the module `sma_cells`; every thread that counts one lists the whole
//! set, so that the report knows the cells no run reached.

use std::cell::Cell;
use std::sync::OnceLock;

use crate::proto::mad::{self, Mad};
use crate::proto::packet::consts::*;

/// What the SMA did with one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Answered,
    Dropped,
    Trap,
}

impl Outcome {
    const ALL: [Outcome; 3] = [Outcome::Answered, Outcome::Dropped, Outcome::Trap];
    fn name(self) -> &'static str {
        match self {
            Outcome::Answered => "answered",
            Outcome::Dropped => "dropped",
            Outcome::Trap => "trap",
        }
    }
}

/// The attributes of Get and Set cells; any other is `Other`.
const ATTRS: [(u16, &str); 11] = [
    (ATTR_NODE_DESC, "NodeDescription"),
    (ATTR_NODE_INFO, "NodeInfo"),
    (ATTR_SWITCH_INFO, "SwitchInfo"),
    (ATTR_GUID_INFO, "GUIDInfo"),
    (ATTR_PORT_INFO, "PortInfo"),
    (ATTR_P_KEY_TABLE, "P_KeyTable"),
    (ATTR_SL_TO_VL_TABLE, "SLtoVLMappingTable"),
    (ATTR_VL_ARB_TABLE, "VLArbitrationTable"),
    (ATTR_LINEAR_FWD_TABLE, "LinearForwardingTable"),
    (ATTR_MCAST_FWD_TABLE, "MulticastForwardingTable"),
    (ATTR_MLNX_EXT_PORT_INFO, "MlnxExtPortInfo"),
];

const ROUTINGS: [&str; 3] = ["LID", "DR", "LIDDR"];

/// The cell name of one request and outcome; None for a MAD that is no
/// request to an SMA (a response, a Trap, another class).
pub fn cell(req: &Mad, outcome: Outcome) -> Option<String> {
    let routing = match mad::class(req) {
        CLASS_SUBN_LID => "LID",
        CLASS_SUBN_DR => {
            let be = |o: usize| u16::from_be_bytes([req[o], req[o + 1]]);
            if be(mad::off::DR_SLID) == PERMISSIVE_LID && be(mad::off::DR_DLID) == PERMISSIVE_LID {
                "DR"
            } else {
                "LIDDR"
            }
        }
        _ => return None,
    };
    let attr = mad::attr_id(req);
    let (method, attr) = match mad::method(req) {
        METHOD_GET | METHOD_SET => {
            let m = if mad::method(req) == METHOD_GET {
                "Get"
            } else {
                "Set"
            };
            let a = ATTRS
                .iter()
                .find(|(id, _)| *id == attr)
                .map_or("Other", |(_, n)| *n);
            (m, a)
        }
        METHOD_TRAP_REPRESS => ("TrapRepress", "Notice"),
        _ => return None,
    };
    Some(format!("CELL_{method}_{attr}_{routing}_{}", outcome.name()))
}

/// Every cell, in a fixed order.
pub fn universe() -> Vec<String> {
    let mut v = Vec::new();
    for routing in ROUTINGS {
        for o in Outcome::ALL {
            for m in ["Get", "Set"] {
                for (_, a) in ATTRS.iter().chain(&[(0, "Other")]) {
                    v.push(format!("CELL_{m}_{a}_{routing}_{}", o.name()));
                }
            }
            v.push(format!("CELL_TrapRepress_Notice_{routing}_{}", o.name()));
        }
    }
    v
}

/// The `C '<keys>'` text of one cell, as Verilator writes a cover point.
fn key(name: &str) -> String {
    format!(
        "C '\x01f\x02tb/src/model/cells.rs\x01l\x021\x01t\x02user\x01page\x02v_user/sma_cells\x01o\x02{name}\x01h\x02sma_cells'"
    )
}

fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("VL15_COVERAGE_DIR").is_some_and(|d| !d.is_empty()))
}

thread_local! {
    /// The whole set of cells is listed in this thread's file.
    static LISTED: Cell<bool> = const { Cell::new(false) };
}

/// Count one request's cell, in a coverage run.
pub fn record(req: &Mad, outcome: Outcome) {
    if !enabled() {
        return;
    }
    let Some(name) = cell(req, outcome) else {
        return;
    };
    if !LISTED.with(|l| l.replace(true)) {
        for c in universe() {
            vl15_bindings::coverage_add_host(&key(&c), 0);
        }
    }
    vl15_bindings::coverage_add_host(&key(&name), 1);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn smp(class: u8, method: u8, attr: u16) -> Mad {
        let mut m: Mad = [0; 256];
        m[mad::off::MGMT_CLASS] = class;
        m[mad::off::METHOD] = method;
        m[mad::off::ATTR_ID..mad::off::ATTR_ID + 2].copy_from_slice(&attr.to_be_bytes());
        m[mad::off::DR_SLID..mad::off::DR_SLID + 2].copy_from_slice(&[0xFF, 0xFF]);
        m[mad::off::DR_DLID..mad::off::DR_DLID + 2].copy_from_slice(&[0xFF, 0xFF]);
        m
    }

    #[test]
    fn cells_name_method_attribute_routing_and_outcome() {
        let get_pi = smp(CLASS_SUBN_DR, METHOD_GET, ATTR_PORT_INFO);
        assert_eq!(
            cell(&get_pi, Outcome::Answered).as_deref(),
            Some("CELL_Get_PortInfo_DR_answered")
        );
        let mut lid_dr = get_pi;
        lid_dr[mad::off::DR_SLID..mad::off::DR_SLID + 2].copy_from_slice(&[0, 5]);
        assert_eq!(
            cell(&lid_dr, Outcome::Trap).as_deref(),
            Some("CELL_Get_PortInfo_LIDDR_trap")
        );
        let set_other = smp(CLASS_SUBN_LID, METHOD_SET, ATTR_SM_INFO);
        assert_eq!(
            cell(&set_other, Outcome::Dropped).as_deref(),
            Some("CELL_Set_Other_LID_dropped")
        );
        let repress = smp(CLASS_SUBN_LID, METHOD_TRAP_REPRESS, ATTR_NOTICE);
        assert_eq!(
            cell(&repress, Outcome::Dropped).as_deref(),
            Some("CELL_TrapRepress_Notice_LID_dropped")
        );
        // responses, traps and other classes are no SMA requests
        assert_eq!(
            cell(
                &smp(CLASS_SUBN_LID, 0x81, ATTR_PORT_INFO),
                Outcome::Answered
            ),
            None
        );
        assert_eq!(
            cell(
                &smp(CLASS_SUBN_LID, METHOD_TRAP, ATTR_NOTICE),
                Outcome::Answered
            ),
            None
        );
        assert_eq!(
            cell(&smp(0x04, METHOD_GET, ATTR_PORT_INFO), Outcome::Answered),
            None
        );
    }

    #[test]
    fn the_universe_holds_every_cell_once() {
        let u = universe();
        // (Get, Set) × 12 attributes + TrapRepress, × 3 routings × 3 outcomes
        assert_eq!(u.len(), (2 * 12 + 1) * 3 * 3);
        let set: std::collections::BTreeSet<_> = u.iter().collect();
        assert_eq!(set.len(), u.len());
        for (m, a) in [
            (METHOD_GET, ATTR_NODE_INFO),
            (METHOD_SET, ATTR_LINEAR_FWD_TABLE),
            (METHOD_GET, 0x1234),
        ] {
            for class in [CLASS_SUBN_LID, CLASS_SUBN_DR] {
                for o in Outcome::ALL {
                    let c = cell(&smp(class, m, a), o).unwrap();
                    assert!(set.contains(&c), "{c}");
                }
            }
        }
    }
}
