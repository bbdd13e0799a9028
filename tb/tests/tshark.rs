//! Wireshark's InfiniBand dissector reads our pcap files and shows the
//! reference vectors' header values (ibspec §3.3, §11). Fails, not skips,
//! when tshark is missing: `make deps` installs it (CI does).

use vl15::proto::pcap::{write_pcap, LinkType, PcapRecord};
use vl15::proto::tshark::{parse_num, tshark_fields, tshark_malformed, tshark_path};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/vectors/");
const NAMES: [&str; 4] = [
    "V1_dr_get_nodeinfo.bin",
    "V2_dr_getresp_nodeinfo.bin",
    "V3_qp1_vl0.bin",
    "V4_qp1_vl3.bin",
];

fn records() -> Vec<PcapRecord> {
    NAMES
        .iter()
        .enumerate()
        .map(|(i, n)| PcapRecord {
            cycle: 100 * i as u64,
            data: std::fs::read(format!("{DIR}{n}")).expect("reference vector"),
            ..Default::default()
        })
        .collect()
}

/// Field, then the value for V1..V4 (None = the dissector shows nothing).
/// Values from ibspec §3.3 (vector contents) and §11 (what tshark shows:
/// ICRC/VCRC as big-endian numbers of the wire bytes, DR status 0x8000 for
/// the D bit).
#[allow(clippy::type_complexity)]
fn expected() -> Vec<(&'static str, [Option<u64>; 4])> {
    let all = |v: u64| [Some(v); 4];
    let dr = |a: u64, b: u64| [Some(a), Some(b), None, None];
    vec![
        ("infiniband.lrh.vl", [Some(15), Some(15), Some(0), Some(3)]),
        ("infiniband.lrh.lver", all(0)),
        ("infiniband.lrh.lnh", all(2)),
        ("infiniband.lrh.pktlen", all(72)),
        (
            "infiniband.lrh.dlid",
            [Some(0xFFFF), Some(0xFFFF), Some(4), Some(4)],
        ),
        (
            "infiniband.lrh.slid",
            [Some(0xFFFF), Some(0xFFFF), Some(1), Some(1)],
        ),
        ("infiniband.bth.opcode", all(0x64)),
        ("infiniband.bth.p_key", all(0xFFFF)),
        (
            "infiniband.bth.destqp",
            [Some(0), Some(0), Some(1), Some(1)],
        ),
        (
            "infiniband.bth.psn",
            [Some(0), Some(0), Some(0x12_3456), Some(0x12_3456)],
        ),
        (
            "infiniband.deth.q_key",
            [Some(0), Some(0), Some(0x8001_0000), Some(0x8001_0000)],
        ),
        (
            "infiniband.deth.srcqp",
            [Some(0), Some(0), Some(1), Some(1)],
        ),
        ("infiniband.mad.baseversion", all(1)),
        (
            "infiniband.mad.mgmtclass",
            [Some(0x81), Some(0x81), Some(4), Some(4)],
        ),
        (
            "infiniband.mad.method",
            [Some(0x01), Some(0x81), Some(0x01), Some(0x01)],
        ),
        (
            "infiniband.mad.transactionid",
            [
                Some(0x1234_5678),
                Some(0x1234_5678),
                Some(0xab_cdef),
                Some(0xab_cdef),
            ],
        ),
        (
            "infiniband.mad.attributeid",
            [Some(0x11), Some(0x11), Some(1), Some(1)],
        ),
        ("infiniband.smpdirected.smpstatus", dr(0, 0x8000)),
        ("infiniband.smpdirected.hoppointer", dr(1, 1)),
        ("infiniband.smpdirected.hopcount", dr(1, 1)),
        ("infiniband.smpdirected.drslid", dr(0xFFFF, 0xFFFF)),
        ("infiniband.smpdirected.drdlid", dr(0xFFFF, 0xFFFF)),
        ("infiniband.nodeinfo.nodetype", dr(0, 1)),
        ("infiniband.nodeinfo.numports", dr(0, 1)),
        ("infiniband.nodeinfo.nodeguid", dr(0, 0x0002_c903_0000_1230)),
        ("infiniband.nodeinfo.portguid", dr(0, 0x0002_c903_0000_1231)),
        ("infiniband.nodeinfo.partitioncap", dr(0, 128)),
        ("infiniband.nodeinfo.deviceid", dr(0, 0x1003)),
        ("infiniband.nodeinfo.localportnum", dr(0, 1)),
        ("infiniband.nodeinfo.vendorid", dr(0, 0x0002C9)),
        ("infiniband.invariant.crc", dr(0xce23_7d26, 0x2982_8048)),
        ("infiniband.variant.crc", dr(0xba75, 0x0367)),
    ]
}

fn check(pcap: &std::path::Path) {
    let exp = expected();
    let fields: Vec<&str> = exp.iter().map(|(f, _)| *f).collect();
    let rows = tshark_fields(pcap, &fields).expect("tshark_fields");
    assert_eq!(rows.len(), 4, "tshark shows 4 packets");
    for (i, row) in rows.iter().enumerate() {
        for (j, (f, want)) in exp.iter().enumerate() {
            let got = &row[j];
            match want[i] {
                Some(w) => assert_eq!(
                    parse_num(got),
                    Some(w),
                    "{} {f}: tshark shows {got:?}",
                    NAMES[i]
                ),
                None => assert_eq!(got, "", "{} {f}", NAMES[i]),
            }
        }
    }
    assert_eq!(
        tshark_malformed(pcap).expect("tshark_malformed"),
        0,
        "malformed packets"
    );
}

#[test]
fn tshark_decodes_the_vectors() {
    if let Err(e) = tshark_path() {
        panic!("{e:#}");
    }
    let dir = tempfile::tempdir().unwrap();
    let user0 = dir.path().join("user0.pcap");
    write_pcap(&user0, LinkType::User0, &records()).unwrap();
    check(&user0);
    // An INFINIBAND (247) capture is read through a USER0 copy.
    let ib = dir.path().join("ib.pcap");
    write_pcap(&ib, LinkType::Infiniband, &records()).unwrap();
    check(&ib);
}

#[test]
fn tshark_counts_malformed_packets() {
    tshark_path().unwrap_or_else(|e| panic!("{e:#}"));
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.pcap");
    let mut recs = records();
    recs[1].data.truncate(12); // cut inside the BTH
    write_pcap(&p, LinkType::User0, &recs).unwrap();
    assert!(tshark_malformed(&p).unwrap() >= 1);
}
