//! Simulation traces decode in Wireshark's InfiniBand dissector (tshark 4.0)
//! with no malformed field, and the fields tshark reads are the ones the
//! spec and the scenario put on the wire. tshark must be installed
//! (`make deps`); without it this test fails and says so.

use vl15::check::scenario;
use vl15::model::trace;
use vl15::proto::pcap::LinkType;
use vl15::proto::tshark::{parse_num, tshark_fields, tshark_malformed};

const FIELDS: &[&str] = &[
    "infiniband.lrh.vl",
    "infiniband.lrh.lnh",
    "infiniband.lrh.dlid",
    "infiniband.lrh.slid",
    "infiniband.lrh.pktlen",
    "infiniband.bth.opcode",
    "infiniband.bth.p_key",
    "infiniband.bth.destqp",
    "infiniband.deth.srcqp",
    "infiniband.mad.mgmtclass",
    "infiniband.mad.method",
    "infiniband.mad.attributeid",
    "infiniband.mad.transactionid",
];

fn nums(row: &[String]) -> Vec<u64> {
    row.iter()
        .map(|f| parse_num(f).unwrap_or_else(|| panic!("field {f:?} is not a number")))
        .collect()
}

/// DR Get(NodeInfo): the request (V1) and the response (V2), both ways, in
/// both link types (247 is converted to 147 for tshark).
#[test]
fn dr_exchange_decodes_in_tshark() {
    let dir = tempfile::tempdir().unwrap();
    let o = scenario::run(scenario::find("dr_get_nodeinfo").unwrap(), 64);
    assert!(o.pass, "{}", o.detail);
    for lt in [LinkType::Infiniband, LinkType::User0] {
        let files = trace::write_pcaps(&o.trace, dir.path(), &format!("dr_{lt:?}"), lt).unwrap();
        assert_eq!(files.len(), 2);
        for f in &files {
            assert_eq!(tshark_malformed(f).unwrap(), 0, "{}", f.display());
            let rows = tshark_fields(f, FIELDS).unwrap();
            assert_eq!(rows.len(), 1, "{}", f.display());
            let v = nums(&rows[0]);
            let is_request = f.to_string_lossy().contains("sm-ca");
            // VL15, LNH 2 (ibspec §1), DLID=SLID=permissive, PktLen 72,
            // UD SEND Only 0x64, P_Key 0xFFFF, QP0 both ends (§2).
            assert_eq!(&v[..9], &[15, 2, 0xFFFF, 0xFFFF, 72, 0x64, 0xFFFF, 0, 0]);
            // Class 0x81, Get (0x01) or GetResp (0x81), NodeInfo, TID of V1.
            let method = if is_request { 0x01 } else { 0x81 };
            assert_eq!(
                &v[9..],
                &[0x81, method, 0x0011, 0x1234_5678],
                "{}",
                f.display()
            );
        }
    }
}

/// LID-routed traffic after Set(PortInfo) with LMC 1: every packet decodes,
/// and the responses come from LID 0x10 and 0x11 to the SM's LID.
#[test]
fn lid_routed_trace_decodes_in_tshark() {
    let dir = tempfile::tempdir().unwrap();
    let o = scenario::run(scenario::find("set_portinfo_lmc").unwrap(), 64);
    assert!(o.pass, "{}", o.detail);
    let files = trace::write_pcaps(&o.trace, dir.path(), "lmc", LinkType::User0).unwrap();
    let back = files
        .iter()
        .find(|f| f.to_string_lossy().contains("ca-sm"))
        .unwrap();
    for f in &files {
        assert_eq!(tshark_malformed(f).unwrap(), 0, "{}", f.display());
    }
    let rows = tshark_fields(back, FIELDS).unwrap();
    let lid_routed: Vec<Vec<u64>> = rows
        .iter()
        .map(|r| nums(r))
        .filter(|v| v[9] == 0x01)
        .collect();
    assert_eq!(lid_routed.len(), 2);
    for (v, slid) in lid_routed.iter().zip([0x10u64, 0x11]) {
        assert_eq!(v[0], 15);
        assert_eq!(v[2], u64::from(scenario::SM_LID));
        assert_eq!(v[3], slid);
        assert_eq!(v[10], 0x81);
    }
}
