//! One line of text per packet: the form `vl15 decode` prints and the trace
//! snapshots hold. Stable and human-readable; fields in this order:
//!
//! ```text
//! c=<cycle, 6+ digits> <dir> VL<vl> SL<sl> <slid>-><dlid> len<PktLen> <opcode> qp<src>-><dest> psn<psn>
//!   | <LID|DR|class> <method>(<attribute>) tid=<tid> st=<status> [D= hp= hc= drslid= drdlid=]
//!   [| <attribute summary>] | icrc=<ok|BAD> vcrc=<ok|BAD>
//! ```
//! A packet that does not parse gives `c=… dir <LRH if readable> | ERR <why>
//! | icrc=… vcrc=…`. The CRC verdicts are always recomputed from the bytes.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;

use crate::proto::crc;
use crate::proto::packet::attr::{phys_state_name, port_state_name};
use crate::proto::packet::consts::*;
use crate::proto::packet::{Lrh, NodeDescription, NodeInfo, Packet, PortInfo};
use crate::proto::pcap::{read_pcap, Direction};

/// Name of a management class.
pub fn class_name(class: u8) -> String {
    match class {
        CLASS_SUBN_LID => "LID".into(),
        CLASS_SUBN_DR => "DR".into(),
        CLASS_SA => "SA".into(),
        CLASS_PERF => "PerfMgt".into(),
        CLASS_BM => "BM".into(),
        CLASS_DEV_MGT => "DevMgt".into(),
        CLASS_CM => "CM".into(),
        CLASS_SNMP => "SNMP".into(),
        CLASS_DEV_ADM => "DevAdm".into(),
        CLASS_BIS => "BIS".into(),
        CLASS_CC => "CC".into(),
        0x09..=0x0F | 0x30..=0x4F => format!("Vendor{class:#04x}"),
        c => format!("Class{c:#04x}"),
    }
}

/// Name of a method; SM classes get the "Subn" prefix as Wireshark shows.
pub fn method_name(class: u8, method: u8) -> String {
    let base = match method {
        METHOD_GET => "Get",
        METHOD_SET => "Set",
        METHOD_SEND => "Send",
        METHOD_TRAP => "Trap",
        METHOD_REPORT => "Report",
        METHOD_TRAP_REPRESS => "TrapRepress",
        METHOD_GET_TABLE => "GetTable",
        METHOD_GET_TRACE_TABLE => "GetTraceTable",
        METHOD_GET_MULTI => "GetMulti",
        METHOD_DELETE => "Delete",
        METHOD_GET_RESP => "GetResp",
        METHOD_REPORT_RESP => "ReportResp",
        METHOD_GET_TABLE_RESP => "GetTableResp",
        METHOD_GET_MULTI_RESP => "GetMultiResp",
        m => return format!("Method{m:#04x}"),
    };
    if class == CLASS_SUBN_LID || class == CLASS_SUBN_DR {
        format!("Subn{base}")
    } else {
        base.into()
    }
}

/// Name of an attribute (SM attributes for the SM classes; the common
/// ones for every class).
pub fn attr_name(class: u8, attr: u16) -> String {
    let sm = class == CLASS_SUBN_LID || class == CLASS_SUBN_DR;
    let n = match attr {
        ATTR_CLASS_PORT_INFO if !sm => "ClassPortInfo",
        ATTR_NOTICE => "Notice",
        ATTR_INFORM_INFO if !sm => "InformInfo",
        ATTR_NODE_DESC if sm => "NodeDescription",
        ATTR_NODE_INFO if sm => "NodeInfo",
        ATTR_SWITCH_INFO if sm => "SwitchInfo",
        ATTR_GUID_INFO if sm => "GUIDInfo",
        ATTR_PORT_INFO if sm => "PortInfo",
        ATTR_P_KEY_TABLE if sm => "P_KeyTable",
        ATTR_SL_TO_VL_TABLE if sm => "SLtoVLMappingTable",
        ATTR_VL_ARB_TABLE if sm => "VLArbitrationTable",
        ATTR_LINEAR_FWD_TABLE if sm => "LinearForwardingTable",
        ATTR_RANDOM_FWD_TABLE if sm => "RandomForwardingTable",
        ATTR_MCAST_FWD_TABLE if sm => "MulticastForwardingTable",
        ATTR_SM_INFO if sm => "SMInfo",
        ATTR_VENDOR_DIAG if sm => "VendorDiag",
        ATTR_LED_INFO if sm => "LedInfo",
        ATTR_MLNX_EXT_PORT_INFO if sm => "MlnxExtPortInfo",
        a => return format!("{a:#06x}"),
    };
    n.into()
}

fn opcode_name(op: u8) -> String {
    match op {
        OPCODE_UD_SEND_ONLY => "UD_SEND_ONLY".into(),
        OPCODE_UD_SEND_ONLY_IMM => "UD_SEND_ONLY_IMM".into(),
        o => format!("op{o:#04x}"),
    }
}

fn node_type_name(t: u8) -> String {
    match t {
        NODE_TYPE_CA => "CA".into(),
        NODE_TYPE_SWITCH => "Switch".into(),
        NODE_TYPE_ROUTER => "Router".into(),
        t => format!("{t}"),
    }
}

fn lrh_text(l: &Lrh) -> String {
    format!(
        "VL{} SL{} {:#06x}->{:#06x} len{}",
        l.vl, l.sl, l.slid, l.dlid, l.pkt_len
    )
}

/// A short summary of the SMP attribute data, for the attributes that have
/// one, when the data carries a value (every method but Get).
fn attr_summary(class: u8, method: u8, attr: u16, data: &[u8]) -> Option<String> {
    if !(class == CLASS_SUBN_LID || class == CLASS_SUBN_DR) || method == METHOD_GET {
        return None;
    }
    match attr {
        ATTR_NODE_INFO => NodeInfo::decode(data).ok().map(|n| {
            format!(
                "ntype={} nports={} nguid={:#018x} port={}",
                node_type_name(n.node_type),
                n.num_ports,
                n.node_guid,
                n.local_port_num
            )
        }),
        ATTR_NODE_DESC => NodeDescription::decode(data)
            .ok()
            .map(|d| format!("desc={:?}", d.text())),
        ATTR_PORT_INFO => PortInfo::decode(data).ok().map(|p| {
            format!(
                "lid={:#06x} smlid={:#06x} lmc={} state={} phys={}",
                p.lid,
                p.master_sm_lid,
                p.lmc,
                port_state_name(p.port_state),
                phys_state_name(p.port_phys_state)
            )
        }),
        ATTR_SM_INFO if data.len() >= 21 => {
            let mut g = [0u8; 8];
            g.copy_from_slice(&data[..8]);
            let act = u32::from_be_bytes([data[16], data[17], data[18], data[19]]);
            Some(format!(
                "smguid={:#018x} actcount={} prio={} smstate={}",
                u64::from_be_bytes(g),
                act,
                data[20] >> 4,
                data[20] & 0xF
            ))
        }
        ATTR_NOTICE if data.len() >= 8 => Some(format!(
            "generic={} type={} trap={} issuer={:#06x}",
            data[0] >> 7,
            data[0] & 0x7F,
            u16::from_be_bytes([data[4], data[5]]),
            u16::from_be_bytes([data[6], data[7]])
        )),
        _ => None,
    }
}

fn crc_text(bytes: &[u8]) -> String {
    match crc::check_wire(bytes) {
        Some((i, v)) => format!(
            "icrc={} vcrc={}",
            if i { "ok" } else { "BAD" },
            if v { "ok" } else { "BAD" }
        ),
        None => "icrc=? vcrc=?".into(),
    }
}

/// The one-line text of a packet (LRH..VCRC) seen at `cycle` going `dir`
/// (e.g. "TX", "RX"). Never panics; bad packets give an `ERR` line.
pub fn decode_line(cycle: u64, dir: &str, bytes: &[u8]) -> String {
    let mut s = format!("c={cycle:06} {dir} ");
    let p = match Packet::parse(bytes) {
        Ok(p) => p,
        Err(e) => {
            if let Ok(l) = Lrh::decode(bytes) {
                s.push_str(&lrh_text(&l));
                s.push(' ');
            }
            let _ = write!(s, "| ERR {e} ({} bytes) | {}", bytes.len(), crc_text(bytes));
            return s;
        }
    };
    s.push_str(&lrh_text(&p.lrh));
    let _ = write!(
        s,
        " {} qp{}->{} psn{}",
        opcode_name(p.bth.opcode),
        p.deth.src_qp,
        p.bth.dest_qp,
        p.bth.psn
    );
    let h = p.mad_header();
    let m = &p.mad;
    let _ = write!(
        s,
        " | {} {}({}) tid={:#x}",
        class_name(h.mgmt_class),
        method_name(h.mgmt_class, h.method),
        attr_name(h.mgmt_class, h.attr_id),
        h.tid
    );
    if h.mgmt_class == CLASS_SUBN_DR {
        let _ = write!(
            s,
            " st={:#06x} D={} hp={} hc={} drslid={:#06x} drdlid={:#06x}",
            h.status & SMP_STATUS_MASK,
            u8::from(h.status & SMP_DIRECTION != 0),
            m[6],
            m[7],
            u16::from_be_bytes([m[32], m[33]]),
            u16::from_be_bytes([m[34], m[35]])
        );
    } else {
        let _ = write!(s, " st={:#06x}", h.status);
    }
    if h.attr_mod != 0 {
        let _ = write!(s, " mod={:#x}", h.attr_mod);
    }
    if let Some(sum) = attr_summary(h.mgmt_class, h.method, h.attr_id, &m[64..128]) {
        let _ = write!(s, " | {sum}");
    }
    let _ = write!(s, " | {}", crc_text(bytes));
    s
}

/// Decode every packet of a pcap file (cycles from the timestamps). A pcap
/// has no direction, so `dir` is "--"; see `decode_pcap_dir`.
pub fn decode_pcap(path: impl AsRef<Path>) -> Result<Vec<String>> {
    decode_pcap_dir(path, "--")
}

/// `decode_pcap` with the direction text to print.
pub fn decode_pcap_dir(path: impl AsRef<Path>, dir: &str) -> Result<Vec<String>> {
    let path = path.as_ref();
    let cap = read_pcap(path)?;
    Ok(cap
        .records
        .iter()
        .map(|r| match (&r.port, r.dir) {
            // pcapng traces: "port>" out of the port, ">port" into it.
            (Some(p), Some(Direction::Outbound)) => decode_line(r.cycle, &format!("{p}>"), &r.data),
            (Some(p), Some(Direction::Inbound)) => decode_line(r.cycle, &format!(">{p}"), &r.data),
            (Some(p), None) => decode_line(r.cycle, p, &r.data),
            (None, _) => decode_line(r.cycle, dir, &r.data),
        })
        .collect())
}
