//! The packet library against the reference vectors (ibspec §3.3): field
//! values, CRCs, exact re-encoding, pcap reading/writing; and property
//! tests: decoders never panic, encoders and decoders are inverse.

// Vector index i pairs several parallel tables (NAMES, ICRC_WIRE, VCRC_VALUE).
#![allow(clippy::needless_range_loop)]

use proptest::prelude::*;
use vl15::proto::crc::{icrc, vcrc};
use vl15::proto::decode::decode_line;
use vl15::proto::packet::consts::*;
use vl15::proto::packet::{
    Bth, Deth, DrSmp, Lrh, NodeDescription, NodeInfo, Packet, PortInfo, Smp,
};
use vl15::proto::pcap::{
    encode_pcap, parse_pcap, read_pcap, write_pcap, LinkType, PcapError, PcapRecord,
};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/vectors/");
const NAMES: [&str; 4] = [
    "V1_dr_get_nodeinfo.bin",
    "V2_dr_getresp_nodeinfo.bin",
    "V3_qp1_vl0.bin",
    "V4_qp1_vl3.bin",
];

fn vector(i: usize) -> Vec<u8> {
    std::fs::read(format!("{DIR}{}", NAMES[i])).expect("reference vector")
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A 290-byte vector from the ibspec §3.3 `@offset:hex` runs.
fn sparse(runs: &[(usize, &str)]) -> Vec<u8> {
    let mut v = vec![0u8; 290];
    for (off, h) in runs {
        let b = hex(h);
        v[*off..*off + b.len()].copy_from_slice(&b);
    }
    v
}

/// ibspec §3.3, non-zero bytes of V1..V4.
fn spec_vectors() -> [Vec<u8>; 4] {
    let v1 = sparse(&[
        (0, "f002ffff"),
        (5, "48ffff64"),
        (10, "ffff"),
        (28, "01810101"),
        (34, "0101"),
        (40, "12345678"),
        (45, "11"),
        (60, "ffffffff"),
        (157, "01"),
        (284, "ce237d26ba75"),
    ]);
    let v2 = sparse(&[
        (0, "f002ffff"),
        (5, "48ffff64"),
        (10, "ffff"),
        (28, "0181018180"),
        (34, "0101"),
        (40, "12345678"),
        (45, "11"),
        (60, "ffffffff"),
        (92, "01010101"),
        (97, "02c903"),
        (102, "1230"),
        (105, "02c903"),
        (110, "1230"),
        (113, "02c903"),
        (118, "1231"),
        (121, "801003"),
        (128, "01"),
        (130, "02c9"),
        (157, "01"),
        (221, "01"),
        (284, "298280480367"),
    ]);
    let v3 = sparse(&[
        (1, "02"),
        (3, "04"),
        (5, "48"),
        (7, "0164"),
        (10, "ffff"),
        (15, "01"),
        (17, "1234568001"),
        (27, "0101040101"),
        (41, "abcdef"),
        (45, "01"),
        (284, "1618c9b563c9"),
    ]);
    let mut v4 = v3.clone();
    v4[0] = 0x30;
    v4[288] = 0x0a;
    v4[289] = 0x11;
    [v1, v2, v3, v4]
}

#[test]
fn vector_files_match_ibspec_table() {
    for (i, want) in spec_vectors().iter().enumerate() {
        assert_eq!(&vector(i), want, "{}", NAMES[i]);
    }
}

/// ICRC (wire bytes, LSB first) and VCRC value of each vector (§3.3 table).
const ICRC_WIRE: [[u8; 4]; 4] = [
    [0xce, 0x23, 0x7d, 0x26],
    [0x29, 0x82, 0x80, 0x48],
    [0x16, 0x18, 0xc9, 0xb5],
    [0x16, 0x18, 0xc9, 0xb5],
];
const VCRC_VALUE: [u16; 4] = [0x75BA, 0x6703, 0xC963, 0x110A];

#[test]
fn crcs_match_ibspec_table() {
    for i in 0..4 {
        let v = vector(i);
        assert_eq!(v.len(), SMP_WIRE_BYTES);
        let ic = icrc(&v[..284]);
        assert_eq!(ic.to_le_bytes(), ICRC_WIRE[i], "ICRC of {}", NAMES[i]);
        assert_eq!(vcrc(&v[..288]), VCRC_VALUE[i], "VCRC of {}", NAMES[i]);
        // §3.2: over LRH..ICRC||VCRC (LSB first) the CRC-16 gives 0xAA90.
        assert_eq!(vcrc(&v), 0xAA90);
        // §3.1 residue check over masked LRH..payload || ICRC.
        let mut masked = v[..288].to_vec();
        masked[0] |= 0xF0;
        masked[12] = 0xFF;
        let d = ::crc::Crc::<u32>::new(&::crc::CRC_32_ISO_HDLC).checksum(&masked);
        assert_eq!(d, 0x2144_DF1C);
        let p = Packet::parse(&v).unwrap();
        assert!(p.icrc_ok() && p.vcrc_ok(), "{}", NAMES[i]);
        assert_eq!(p.icrc.to_le_bytes(), ICRC_WIRE[i]);
        assert_eq!(p.vcrc, VCRC_VALUE[i]);
    }
    // V3/V4 differ only in VL: VL is outside the ICRC, inside the VCRC.
    assert_eq!(ICRC_WIRE[2], ICRC_WIRE[3]);
}

#[test]
fn v1_fields() {
    let p = Packet::parse(&vector(0)).unwrap();
    assert_eq!(
        p.lrh,
        Lrh {
            vl: 15,
            lver: 0,
            sl: 0,
            resv2: 0,
            lnh: 2,
            dlid: 0xFFFF,
            resv5: 0,
            pkt_len: 72,
            slid: 0xFFFF
        }
    );
    assert_eq!(p.bth.opcode, 0x64);
    assert_eq!(p.bth.p_key, 0xFFFF);
    assert_eq!(p.bth.dest_qp, 0);
    assert_eq!(
        p.deth,
        Deth {
            q_key: 0,
            resv8: 0,
            src_qp: 0
        }
    );
    let Smp::Dr(s) = p.decode_smp().unwrap() else {
        panic!("V1 is a DR SMP")
    };
    assert_eq!(
        (s.base_version, s.mgmt_class, s.class_version),
        (1, 0x81, 1)
    );
    assert_eq!(s.method, METHOD_GET);
    assert!(!s.d);
    assert_eq!(s.status, 0);
    assert_eq!((s.hop_ptr, s.hop_cnt), (1, 1));
    assert_eq!(s.tid, 0x1234_5678);
    assert_eq!(s.attr_id, ATTR_NODE_INFO);
    assert_eq!((s.dr_slid, s.dr_dlid), (0xFFFF, 0xFFFF));
    assert_eq!(s.initial_path[1], 1);
    assert!(s.return_path.iter().all(|&b| b == 0));
}

#[test]
fn v2_fields() {
    let p = Packet::parse(&vector(1)).unwrap();
    assert_eq!((p.lrh.vl, p.lrh.dlid, p.lrh.slid), (15, 0xFFFF, 0xFFFF));
    assert_eq!((p.bth.dest_qp, p.deth.q_key, p.deth.src_qp), (0, 0, 0));
    let Smp::Dr(s) = p.decode_smp().unwrap() else {
        panic!("V2 is a DR SMP")
    };
    assert_eq!(s.method, METHOD_GET_RESP);
    assert!(s.d, "status 0x8000 = D bit");
    assert_eq!(s.status, 0);
    assert_eq!((s.hop_ptr, s.hop_cnt), (1, 1));
    assert_eq!(s.tid, 0x1234_5678);
    assert_eq!(s.initial_path[1], 1);
    assert_eq!(s.return_path[1], 1);
    let ni = NodeInfo::decode(&s.data).unwrap();
    assert_eq!(
        ni,
        NodeInfo {
            base_version: 1,
            class_version: 1,
            node_type: NODE_TYPE_CA,
            num_ports: 1,
            sys_guid: 0x0002_c903_0000_1230,
            node_guid: 0x0002_c903_0000_1230,
            port_guid: 0x0002_c903_0000_1231,
            partition_cap: 128,
            device_id: 0x1003,
            revision: 0,
            local_port_num: 1,
            vendor_id: 0x0002C9,
        }
    );
    assert_eq!(ni.encode(), s.data);
}

#[test]
fn v3_v4_fields() {
    for (i, vl) in [(2, 0), (3, 3)] {
        let p = Packet::parse(&vector(i)).unwrap();
        assert_eq!(p.lrh.vl, vl);
        assert_eq!(
            (p.lrh.dlid, p.lrh.slid, p.lrh.lnh, p.lrh.pkt_len),
            (4, 1, 2, 72)
        );
        assert_eq!(
            (p.bth.dest_qp, p.bth.psn, p.bth.p_key),
            (1, 0x12_3456, 0xFFFF)
        );
        assert_eq!((p.deth.q_key, p.deth.src_qp), (QP1_Q_KEY, 1));
        let h = p.mad_header();
        assert_eq!(
            (h.base_version, h.mgmt_class, h.class_version, h.method),
            (1, CLASS_PERF, 1, 1)
        );
        assert_eq!(h.tid, 0xab_cdef);
        assert_eq!(h.attr_id, ATTR_CLASS_PORT_INFO);
        assert!(matches!(
            p.decode_smp(),
            Err(vl15::proto::packet::PacketError::NotSmp(4))
        ));
    }
}

#[test]
fn reencode_reproduces_vectors() {
    for i in 0..4 {
        let v = vector(i);
        let p = Packet::parse(&v).unwrap();
        assert_eq!(p.to_bytes(), v, "{}", NAMES[i]);
        // From the typed parts, CRCs recomputed.
        let again = Packet::new(
            Lrh::decode(&p.lrh.encode()).unwrap(),
            Bth::decode(&p.bth.encode()).unwrap(),
            Deth::decode(&p.deth.encode()).unwrap(),
            p.mad,
        );
        assert_eq!(again.to_bytes(), v, "{}", NAMES[i]);
    }
    // V1/V2 from the DR SMP struct through the SMP builder.
    for i in 0..2 {
        let v = vector(i);
        let s = DrSmp::decode(&v[28..284]).unwrap();
        assert_eq!(
            Packet::smp(15, 0, 0xFFFF, 0xFFFF, s.encode()),
            v,
            "{}",
            NAMES[i]
        );
    }
    // V3/V4 through the GMP builder.
    let mut mad = [0u8; 256];
    mad.copy_from_slice(&vector(2)[28..284]);
    assert_eq!(Packet::gmp(0, 0, 4, 1, 0x12_3456, mad), vector(2));
    assert_eq!(Packet::gmp(3, 0, 4, 1, 0x12_3456, mad), vector(3));
}

#[test]
fn serde_round_trip() {
    let p = Packet::parse(&vector(1)).unwrap();
    let j = serde_json::to_string(&p).unwrap();
    assert_eq!(serde_json::from_str::<Packet>(&j).unwrap(), p);
    let s = p.decode_smp().unwrap();
    let j = serde_json::to_string(&s).unwrap();
    assert_eq!(serde_json::from_str::<Smp>(&j).unwrap(), s);
    let pi = PortInfo::default();
    assert_eq!(
        serde_json::from_str::<PortInfo>(&serde_json::to_string(&pi).unwrap()).unwrap(),
        pi
    );
}

#[test]
fn parse_errors() {
    use vl15::proto::packet::PacketError as E;
    let v = vector(0);
    assert!(matches!(Packet::parse(&v[..5]), Err(E::TooShort { .. })));
    let mut g = v.clone();
    g[1] = 0x03; // LNH 3
    let e = Packet::parse(&g).unwrap_err();
    assert_eq!(e, E::Grh);
    assert!(e.to_string().contains("GRH"));
    let mut r = v.clone();
    r[1] = 0x00;
    assert_eq!(Packet::parse(&r).unwrap_err(), E::Lnh(0));
    let mut l = v.clone();
    l[0] = 0xF1;
    assert_eq!(Packet::parse(&l).unwrap_err(), E::LVer(1));
    assert!(matches!(
        Packet::parse(&v[..289]),
        Err(E::Length {
            pkt_len: 72,
            bytes: 289
        })
    ));
    let mut o = v.clone();
    o[8] = 0x65;
    assert_eq!(Packet::parse(&o).unwrap_err(), E::Opcode(0x65));
    let mut t = v.clone();
    t[9] = 0x01;
    assert_eq!(Packet::parse(&t).unwrap_err(), E::TVer(1));
}

#[test]
fn bad_crcs_are_reported_not_fatal() {
    let mut v = vector(1);
    v[100] ^= 1;
    let p = Packet::parse(&v).unwrap();
    assert!(!p.icrc_ok());
    assert!(!p.vcrc_ok());
    let mut w = vector(1);
    w[0] = 0x00; // VL 15 → 0: ICRC unchanged, VCRC wrong
    let p = Packet::parse(&w).unwrap();
    assert!(p.icrc_ok());
    assert!(!p.vcrc_ok());
}

#[test]
fn port_info_layout_per_ibspec() {
    // Every bit of the 64 bytes belongs to exactly one field.
    let mut seen = [false; 512];
    for (name, off, w) in PortInfo::FIELDS {
        for b in *off..off + w {
            assert!(!seen[b], "bit {b} of {name} overlaps");
            seen[b] = true;
        }
    }
    assert!(seen.iter().all(|&s| s));
    // Hand-built bytes following the ibspec §8 table.
    let mut d = [0u8; 64];
    d[0..8].copy_from_slice(&0x1122_3344_5566_7788u64.to_be_bytes());
    d[16..18].copy_from_slice(&[0x00, 0x12]); // LID
    d[18..20].copy_from_slice(&[0x00, 0x01]); // MasterSMLID
    d[20..24].copy_from_slice(&0x0040_C048u32.to_be_bytes());
    d[28] = 1; // LocalPortNum
    d[32] = 0x14; // LinkSpeedSupported 1, PortState 4
    d[33] = 0x52; // PortPhysicalState 5, LinkDownDefaultState 2
    d[34] = 0xC5; // M_KeyProtectBits 3, LMC 5
    d[35] = 0x1F; // LinkSpeedActive 1, LinkSpeedEnabled 15
    d[36] = 0x4A; // NeighborMTU 4, MasterSMSL 10
    d[37] = 0x43; // VLCap 4, InitType 3
    d[41] = 0x25; // InitTypeReply 2, MTUCap 5
    d[42] = 0xF2; // VLStallCount 7, HOQLife 0x12
    d[43] = 0x4A; // OperationalVLs 4, PEIn 1, PEOut 0, FRIn 1, FROut 0
    d[51] = 0xB2; // ClientReregister 1, McastPKeyTrapSupp 1, SubnetTimeOut 0x12
    d[52] = 0x13; // RespTimeValue 0x13
    d[53] = 0x8C; // LocalPhyErrors 8, OverrunErrors 12
    d[57..60].copy_from_slice(&[0x12, 0x34, 0x56]); // LinkRoundTripLatency
    d[60..62].copy_from_slice(&[0xAB, 0xCD]); // CapabilityMask2
    d[62] = 0x21; // LinkSpeedExtActive 2, LinkSpeedExtSupported 1
    d[63] = 0x1F; // LinkSpeedExtEnabled 31
    let p = PortInfo::decode(&d).unwrap();
    assert_eq!(p.m_key, 0x1122_3344_5566_7788);
    assert_eq!(
        (p.lid, p.master_sm_lid, p.capability_mask),
        (0x12, 1, 0x0040_C048)
    );
    assert_eq!(p.local_port_num, 1);
    assert_eq!(
        (p.link_speed_supported, p.port_state),
        (1, PORT_STATE_ACTIVE)
    );
    assert_eq!(
        (p.port_phys_state, p.link_down_default_state),
        (PHYS_STATE_LINK_UP, 2)
    );
    assert_eq!((p.m_key_protect_bits, p.resv_34, p.lmc), (3, 0, 5));
    assert_eq!((p.link_speed_active, p.link_speed_enabled), (1, 15));
    assert_eq!((p.neighbor_mtu, p.master_sm_sl), (4, 10));
    assert_eq!((p.vl_cap, p.init_type), (4, 3));
    assert_eq!((p.init_type_reply, p.mtu_cap), (2, 5));
    assert_eq!((p.vl_stall_count, p.hoq_life), (7, 0x12));
    assert_eq!(
        (
            p.operational_vls,
            p.partition_enforcement_inbound,
            p.partition_enforcement_outbound,
            p.filter_raw_inbound,
            p.filter_raw_outbound
        ),
        (4, 1, 0, 1, 0)
    );
    assert_eq!(
        (
            p.client_reregister,
            p.multicast_pkey_trap_suppression_enabled,
            p.subnet_timeout
        ),
        (1, 1, 0x12)
    );
    assert_eq!(p.resp_time_value, 0x13);
    assert_eq!((p.local_phy_errors, p.overrun_errors), (8, 12));
    assert_eq!(p.link_round_trip_latency, 0x12_3456);
    assert_eq!(p.capability_mask2, 0xABCD);
    assert_eq!(
        (p.link_speed_ext_active, p.link_speed_ext_supported),
        (2, 1)
    );
    assert_eq!((p.resv_63, p.link_speed_ext_enabled), (0, 31));
    assert_eq!(p.encode(), d);
}

#[test]
fn node_description() {
    let d = NodeDescription::new("vl15 CA");
    assert_eq!(d.text(), "vl15 CA");
    assert_eq!(&d.encode()[..8], b"vl15 CA\0");
    let full = NodeDescription::decode(&[b'a'; 64]).unwrap();
    assert_eq!(full.text().len(), 64, "64 bytes, not NUL-terminated");
    assert_eq!(NodeDescription::new(&"é".repeat(40)).text(), "é".repeat(32));
}

#[test]
fn decode_lines() {
    let l = decode_line(123, "TX", &vector(1));
    assert_eq!(
        l,
        "c=000123 TX VL15 SL0 0xffff->0xffff len72 UD_SEND_ONLY qp0->0 psn0 | DR SubnGetResp(NodeInfo) \
         tid=0x12345678 st=0x0000 D=1 hp=1 hc=1 drslid=0xffff drdlid=0xffff | ntype=CA nports=1 \
         nguid=0x0002c90300001230 port=1 | icrc=ok vcrc=ok"
    );
    let l = decode_line(7, "RX", &vector(0));
    assert!(
        l.contains("DR SubnGet(NodeInfo) tid=0x12345678 st=0x0000 D=0 hp=1 hc=1"),
        "{l}"
    );
    assert!(
        !l.contains("ntype"),
        "a Get carries no attribute value: {l}"
    );
    let l = decode_line(1, "RX", &vector(3));
    assert!(l.contains("VL3 SL0 0x0001->0x0004 len72 UD_SEND_ONLY qp1->1 psn1193046 | PerfMgt Get(ClassPortInfo) tid=0xabcdef"), "{l}");
    let mut bad = vector(1);
    bad[1] = 0x03;
    let l = decode_line(2, "RX", &bad);
    assert!(l.contains("ERR") && l.contains("GRH"), "{l}");
    let mut bad = vector(1);
    bad[50] ^= 0xFF;
    assert!(decode_line(3, "RX", &bad).ends_with("icrc=BAD vcrc=BAD"));
    assert!(decode_line(4, "RX", &[]).contains("ERR"));
}

// ---------------- pcap ----------------

#[test]
fn reference_pcaps_hold_the_vectors() {
    for (file, lt) in [
        ("ibvec.pcap", LinkType::Infiniband),
        ("ibvec_user0.pcap", LinkType::User0),
    ] {
        let cap = read_pcap(format!("{DIR}{file}")).unwrap();
        assert_eq!(cap.link_type, lt);
        assert_eq!(cap.records.len(), 4);
        for (i, r) in cap.records.iter().enumerate() {
            assert_eq!(r.data, vector(i), "{file} record {i}");
        }
    }
}

#[test]
fn pcap_write_read_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let cycles = [0u64, 999_999, 1_000_000, 1_234_567_890];
    let recs: Vec<PcapRecord> = cycles
        .iter()
        .enumerate()
        .map(|(i, &c)| PcapRecord {
            cycle: c,
            data: vector(i),
            ..Default::default()
        })
        .collect();
    for lt in [LinkType::Infiniband, LinkType::User0] {
        let path = dir.path().join(format!("{lt:?}.pcap"));
        write_pcap(&path, lt, &recs).unwrap();
        let raw = std::fs::read(&path).unwrap();
        // Global header: DLT at bytes 20..24.
        assert_eq!(
            u32::from_le_bytes(raw[20..24].try_into().unwrap()),
            lt.dlt()
        );
        // Last record's timestamp: seconds = cycle / 10^6, µs = cycle % 10^6.
        let off = 24 + 3 * (16 + 290);
        assert_eq!(
            u32::from_le_bytes(raw[off..off + 4].try_into().unwrap()),
            1234
        );
        assert_eq!(
            u32::from_le_bytes(raw[off + 4..off + 8].try_into().unwrap()),
            567_890
        );
        let cap = read_pcap(&path).unwrap();
        assert_eq!(cap.link_type, lt);
        assert_eq!(cap.records, recs);
    }
    assert!(matches!(
        encode_pcap(
            LinkType::User0,
            &[PcapRecord {
                cycle: u64::MAX,
                ..Default::default()
            }]
        ),
        Err(PcapError::CycleTooLarge(_))
    ));
}

/// A pcap in big-endian byte order, or with the nanosecond magic, by hand.
fn hand_pcap(big: bool, nano: bool, dlt: u32, sec: u32, frac: u32, data: &[u8]) -> Vec<u8> {
    let w32 = |v: u32| {
        if big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let w16 = |v: u16| {
        if big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let mut f = Vec::new();
    f.extend_from_slice(&w32(if nano { 0xA1B2_3C4D } else { 0xA1B2_C3D4 }));
    f.extend_from_slice(&w16(2));
    f.extend_from_slice(&w16(4));
    f.extend_from_slice(&w32(0));
    f.extend_from_slice(&w32(0));
    f.extend_from_slice(&w32(65535));
    f.extend_from_slice(&w32(dlt));
    f.extend_from_slice(&w32(sec));
    f.extend_from_slice(&w32(frac));
    f.extend_from_slice(&w32(data.len() as u32));
    f.extend_from_slice(&w32(data.len() as u32));
    f.extend_from_slice(data);
    f
}

#[test]
fn pcap_byte_orders_and_nanoseconds() {
    let v = vector(0);
    for big in [false, true] {
        let cap = parse_pcap(&hand_pcap(big, false, 147, 2, 5, &v)).unwrap();
        assert_eq!(cap.link_type, LinkType::User0);
        assert_eq!(
            cap.records,
            vec![PcapRecord {
                cycle: 2_000_005,
                data: v.clone(),
                ..Default::default()
            }]
        );
        let cap = parse_pcap(&hand_pcap(big, true, 247, 3, 7_000, &v)).unwrap();
        assert_eq!(cap.link_type, LinkType::Infiniband);
        assert_eq!(cap.records[0].cycle, 3_000_007);
    }
}

#[test]
fn pcap_errors_are_clear() {
    let good = encode_pcap(
        LinkType::Infiniband,
        &[PcapRecord {
            cycle: 5,
            data: vector(0),
            ..Default::default()
        }],
    )
    .unwrap();
    let e = parse_pcap(b"this is not a capture file at all").unwrap_err();
    assert!(matches!(e, PcapError::NotPcap(_)), "{e}");
    assert!(e.to_string().contains("not a pcap"));
    // pcapng is read; a section header cut short is truncated
    let e = parse_pcap(&[0x0A, 0x0D, 0x0D, 0x0A, 0, 0, 0, 0]).unwrap_err();
    assert!(matches!(e, PcapError::Truncated { .. }), "{e}");
    let e = parse_pcap(&good[..10]).unwrap_err();
    assert!(matches!(e, PcapError::Truncated { .. }), "{e}");
    let e = parse_pcap(&good[..good.len() - 1]).unwrap_err();
    assert!(
        e.to_string().contains("truncated") && e.to_string().contains("data of record 1"),
        "{e}"
    );
    let e = parse_pcap(&good[..30]).unwrap_err();
    assert!(e.to_string().contains("header of record 1"), "{e}");
    let mut eth = good.clone();
    eth[20] = 1; // DLT 1 = Ethernet
    let e = parse_pcap(&eth).unwrap_err();
    assert!(matches!(e, PcapError::UnsupportedLinkType(1)), "{e}");
    let e = read_pcap("/nonexistent/x.pcap").unwrap_err();
    assert!(e.to_string().contains("/nonexistent/x.pcap"));
    assert!(parse_pcap(&[]).is_err());
}

// ---------------- properties ----------------

fn lrh_strategy() -> impl Strategy<Value = Lrh> {
    (
        0u8..16,
        0u8..16,
        0u8..16,
        0u8..4,
        0u8..4,
        any::<u16>(),
        0u8..32,
        0u16..2048,
        any::<u16>(),
    )
        .prop_map(
            |(vl, lver, sl, resv2, lnh, dlid, resv5, pkt_len, slid)| Lrh {
                vl,
                lver,
                sl,
                resv2,
                lnh,
                dlid,
                resv5,
                pkt_len,
                slid,
            },
        )
}

fn bth_strategy() -> impl Strategy<Value = Bth> {
    (
        any::<u8>(),
        any::<bool>(),
        any::<bool>(),
        0u8..4,
        0u8..16,
        any::<u16>(),
        any::<u8>(),
        0u32..1 << 24,
        any::<bool>(),
        0u8..128,
        0u32..1 << 24,
    )
        .prop_map(
            |(opcode, se, migreq, pad_cnt, tver, p_key, resv8a, dest_qp, ack_req, resv7, psn)| {
                Bth {
                    opcode,
                    se,
                    migreq,
                    pad_cnt,
                    tver,
                    p_key,
                    resv8a,
                    dest_qp,
                    ack_req,
                    resv7,
                    psn,
                }
            },
        )
}

fn mad_strategy() -> impl Strategy<Value = [u8; 256]> {
    proptest::collection::vec(any::<u8>(), 256).prop_map(|v| v.try_into().unwrap())
}

proptest! {
    #[test]
    fn decoders_never_panic(b in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = Packet::parse(&b);
        let _ = Smp::decode(&b);
        let _ = NodeInfo::decode(&b);
        let _ = NodeDescription::decode(&b);
        let _ = PortInfo::decode(&b);
        let _ = decode_line(0, "RX", &b);
        let _ = parse_pcap(&b);
        let _ = icrc(&b);
        let _ = vcrc(&b);
    }

    #[test]
    fn mutated_vectors_never_panic(i in 0usize..4, edits in proptest::collection::vec((0usize..290, any::<u8>()), 1..8), cut in 0usize..291) {
        let mut v = vector(i);
        for (o, x) in edits { v[o] = x; }
        v.truncate(cut);
        let _ = Packet::parse(&v);
        let _ = decode_line(9, "TX", &v);
    }

    #[test]
    fn pcap_reader_never_panics(tail in proptest::collection::vec(any::<u8>(), 0..200), big in any::<bool>(), nano in any::<bool>()) {
        let mut f = hand_pcap(big, nano, 247, 0, 0, &[]);
        f.truncate(24);
        f.extend_from_slice(&tail);
        let _ = parse_pcap(&f);
    }

    #[test]
    fn lrh_round_trip(l in lrh_strategy()) {
        prop_assert_eq!(Lrh::decode(&l.encode()).unwrap(), l);
    }

    #[test]
    fn bth_round_trip(b in bth_strategy()) {
        prop_assert_eq!(Bth::decode(&b.encode()).unwrap(), b);
    }

    #[test]
    fn deth_round_trip(q_key in any::<u32>(), resv8 in any::<u8>(), src_qp in 0u32..1 << 24) {
        let d = Deth { q_key, resv8, src_qp };
        prop_assert_eq!(Deth::decode(&d.encode()).unwrap(), d);
    }

    #[test]
    fn dr_smp_round_trip(mut mad in mad_strategy()) {
        mad[1] = CLASS_SUBN_DR;
        let s = DrSmp::decode(&mad).unwrap();
        prop_assert_eq!(s.encode(), mad);
        prop_assert_eq!(DrSmp::decode(&s.encode()).unwrap(), s.clone());
        prop_assert_eq!(Smp::decode(&mad).unwrap(), Smp::Dr(s));
    }

    #[test]
    fn port_info_round_trip(d in proptest::collection::vec(any::<u8>(), 64)) {
        let p = PortInfo::decode(&d).unwrap();
        prop_assert_eq!(&p.encode()[..], &d[..]);
        prop_assert_eq!(PortInfo::decode(&p.encode()).unwrap(), p);
    }

    #[test]
    fn packet_round_trip(l in lrh_strategy(), b in bth_strategy(), q in any::<u32>(), sq in 0u32..1 << 24, mad in mad_strategy()) {
        let l = Lrh { lver: 0, lnh: LNH_IBA_LOCAL, pkt_len: SMP_PKT_LEN, ..l };
        let b = Bth { opcode: OPCODE_UD_SEND_ONLY, tver: 0, ..b };
        let p = Packet::new(l, b, Deth { q_key: q, resv8: 0, src_qp: sq }, mad);
        let bytes = p.to_bytes();
        prop_assert_eq!(bytes.len(), SMP_WIRE_BYTES);
        let back = Packet::parse(&bytes).unwrap();
        prop_assert!(back.icrc_ok() && back.vcrc_ok());
        prop_assert_eq!(back, p);
    }
}
