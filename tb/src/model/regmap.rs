//! The RTL's register maps, mirrored from `rtl/ib_pkg.sv` (the CA port and
//! the switch) and `rtl/ib_ca_mp_top.sv` (the multiport CA): addresses,
//! identification values, counter indices and names. The tests below read
//! the SystemVerilog and fail on any drift.

/// Register word addresses and counter indices, mirroring `rtl/ib_pkg.sv`.
pub mod reg {
    pub const ID: u8 = 0x00;
    pub const PORT_LID: u8 = 0x01;
    pub const PORT_LMC: u8 = 0x02;
    pub const MASTER_SM_LID: u8 = 0x03;
    pub const MASTER_SM_SL: u8 = 0x04;
    pub const PORT_STATE: u8 = 0x05;
    pub const PORT_NUM: u8 = 0x06;
    pub const CAPS: u8 = 0x07;
    pub const RX_DEPTH: u8 = 0x08;
    /// Write-only: clears counter i for every set bit i of the written word.
    pub const CTR_CLEAR_SEL: u8 = 0x0E;
    /// Write-only: any write clears every counter.
    pub const CTR_CLEAR: u8 = 0x0F;
    /// Counter i at `CTR_BASE + i`: read-only; writable in simulation
    /// (test-only, flip-flop counters): a write of V sets counter i to V.
    pub const CTR_BASE: u8 = 0x10;
    pub const ID_VALUE: u32 = 0x564C_3135;
    /// P_Key table (gsi_rx_check): size (RO), entry index, entry data (a
    /// write also steps the index).
    pub const PKEY_CAP: u8 = 0x40;
    pub const PKEY_IDX: u8 = 0x41;
    pub const PKEY_DATA: u8 = 0x42;
    /// Index in [`COUNTERS`] of the QP1 key-violation counters.
    pub const CTR_PKEY_VIOL: u8 = 25;
    pub const CTR_QKEY_VIOL: u8 = 26;

    /// M_Key state (`smi_mkey_chk`): M_Key low word (staged until the high
    /// word is written), high word (commits both), M_KeyProtectBits,
    /// M_KeyLeasePeriod (seconds), clock cycles per lease second,
    /// M_KeyViolations, lease status (RO: bit 16 running, 15:0 seconds).
    pub const MKEY_LO: u8 = 0x30;
    pub const MKEY_HI: u8 = 0x31;
    pub const MKEY_PROT: u8 = 0x32;
    pub const MKEY_LEASE: u8 = 0x33;
    pub const MKEY_TICK: u8 = 0x34;
    pub const MKEY_VIOLS: u8 = 0x35;
    pub const MKEY_LEASE_ST: u8 = 0x36;
    /// Reset value of MKEY_TICK: a 125 MHz clock.
    pub const MKEY_TICK_RESET: u32 = 125_000_000;

    /// Counter names in `ib_pkg::ctr_e` order.
    pub const COUNTERS: [&str; 27] = [
        "rx_pkts",
        "rx_vcrc_err",
        "rx_lver_err",
        "rx_lnh_err",
        "rx_len_err",
        "rx_data_pkts",
        "vl15_dropped",
        "smi_icrc_err",
        "smi_bad_hdr",
        "smi_lid_err",
        "smi_dr_discard",
        "smi_port_down",
        "smi_to_sma",
        "smi_to_sm",
        "sq_dr_discard",
        "sq_local",
        "sq_pkts",
        "tx_vl15_pkts",
        "tx_data_pkts",
        // GSI receive checks on the data VLs (gsi_rx_check); these packets
        // are also counted in rx_data_pkts
        "data_icrc_err",
        "gsi_bad_hdr",
        "gsi_gmps",
        // IBA PortRcvData / PortXmitData: sums of LRH.PktLen (4-byte words)
        "rx_words",
        "tx_words",
        // SMPs for the SMA dropped by the M_Key check (smi_mkey_chk)
        "mkey_viol",
        // QP1 key checks (gsi_rx_check): PortInfo P_KeyViolations /
        // Q_KeyViolations
        "pkey_viol",
        "qkey_viol",
    ];
}

/// Why `gsi_rx_check` discarded a data-VL packet (`ib_pkg::gsi_reason_e`),
/// as the port delivers it with tlast (`drx_reason`, a switch's
/// `gmp_rx_reason`).
pub mod gsi_reason {
    pub const OK: u8 = 0;
    pub const LINK_DROP: u8 = 1;
    pub const ICRC_ERR: u8 = 2;
    pub const BAD_HDR: u8 = 3;
    pub const PKEY_VIOL: u8 = 4;
    pub const QKEY_VIOL: u8 = 5;
}

/// Multiport CA register map: register `a` of port `p` ([`reg`]).
pub mod mpreg {
    /// RO: [`ID_VALUE`] ("VLMP").
    pub const ID: u16 = 0x0000;
    pub const ID_VALUE: u32 = 0x564C_4D50;
    /// SMA/SM/trap sends with a port tag out of range (32-bit, wrapping;
    /// any write clears it).
    pub const BAD_TAG: u16 = 0x0001;
    pub fn port(p: u8, a: u8) -> u16 {
        0x0100 * u16::from(p) + u16::from(a)
    }
}

/// The port whose register `a` is, where it is one port's: for a CA
/// (`ib_ca_top`, `ib_ca_mp_top`) the port of [`mpreg::port`]; for a switch
/// an external port's state or counter (1..N), or port 0's M_Key, P_Key
/// and GMP counter registers (0).
pub fn port_of_reg(switch: bool, a: u16) -> Option<u8> {
    if !switch {
        return (a >= 0x0100).then_some((a >> 8) as u8);
    }
    match a {
        swreg::MKEY_BASE..=swreg::PKEY_DATA => Some(0),
        swreg::PORT_STATE..=0x01FF => Some((a - swreg::PORT_STATE) as u8),
        swreg::CTR_BASE..=0x06FF => Some(((a - swreg::CTR_BASE) / 16) as u8),
        swreg::CTR0G_BASE..=0x07FF => Some(0),
        _ => None,
    }
}

/// Switch register map (docs/fabric.md, "ib_switch_top register map").
pub mod swreg {
    pub const ID: u16 = 0x0000;
    pub const ID_VALUE: u32 = 0x564C_5357;
    pub const PORT0_LID: u16 = 0x0001;
    pub const MASTER_SM_LID: u16 = 0x0003;
    pub const MASTER_SM_SL: u16 = 0x0004;
    pub const NUM_PORTS: u16 = 0x0006;
    pub const NUM_PORTS_MAX: u16 = 0x0007;
    pub const LINEAR_FDB_TOP: u16 = 0x0008;
    pub const PORT_STATE_CHANGE: u16 = 0x0009;
    pub const LFT_DEPTH: u16 = 0x000A;
    pub const CTR_CLEAR: u16 = 0x000F;
    pub const PORT_STATE: u16 = 0x0100;
    /// Counter c of port p at `CTR_BASE + 16p + c`: read-only; writable in
    /// simulation (test-only): a write of V sets the counter to V.
    pub const CTR_BASE: u16 = 0x0200;
    /// Port 0's GMP counter bank: counter c at `CTR0G_BASE + c`; read-only,
    /// writable in simulation as `CTR_BASE`'s.
    pub const CTR0G_BASE: u16 = 0x0700;
    /// `CTR_CLEAR_SEL + p` (w): clears counter c of port p for every set
    /// bit c of `[15:0]`; for p = 0, bits `[31:16]` name the GMP bank.
    pub const CTR_CLEAR_SEL: u16 = 0x0800;
    pub const LFT_BASE: u16 = 0x1000;
    /// Port 0's M_Key state (`smi_mkey_chk`), `MKEY_BASE + idx` with the
    /// CA's indexes (`reg::MKEY_LO - reg::MKEY_LO` …): M_Key low (staged) and
    /// high word, protect bits, lease period, cycles per lease second,
    /// M_KeyViolations, lease status.
    pub const MKEY_BASE: u16 = 0x0010;
    /// Switch register of CA M_Key register `ca_addr` (`reg::MKEY_*`).
    pub fn mkey(ca_addr: u8) -> u16 {
        MKEY_BASE + u16::from(ca_addr - super::reg::MKEY_LO)
    }
    /// External port counter: good VL15 packet dropped, input slots full.
    pub const CTR_VL15_DROPPED: u8 = 5;
    /// Port 0's P_Key table: size (RO), entry index, entry data (a write
    /// also steps the index).
    pub const PKEY_CAP: u16 = 0x0020;
    pub const PKEY_IDX: u16 = 0x0021;
    pub const PKEY_DATA: u16 = 0x0022;
    /// Counter c of port 0's GMP bank.
    pub fn ctr0g(c: u8) -> u16 {
        CTR0G_BASE + u16::from(c)
    }
    /// Port-0 counter: SMI receive buffer full.
    pub const CTR0_VL15_DROPPED: u8 = 8;
    /// Counter c of port p.
    pub fn ctr(p: u8, c: u8) -> u16 {
        CTR_BASE + 16 * u16::from(p) + u16::from(c)
    }
    /// Counter indices (`ib_pkg::sw_ctr_e`, `sw_ctr0_e`, `sw_ctr0g_e`).
    pub mod ctr {
        // External ports.
        pub const RX_PKTS: u8 = 0;
        pub const RX_VCRC_ERR: u8 = 1;
        pub const RX_LEN_ERR: u8 = 2;
        pub const RX_LVER_ERR: u8 = 3;
        pub const RX_LNH_ERR: u8 = 4;
        pub const VL15_DROPPED: u8 = 5;
        pub const DATA_DROPPED: u8 = 6;
        pub const LINK_DOWN_DROP: u8 = 7;
        pub const NO_ROUTE: u8 = 8;
        pub const LOOP_DROP: u8 = 9;
        pub const STATE_DROP: u8 = 10;
        pub const FWD_PKTS: u8 = 11;
        pub const TX_VL15_PKTS: u8 = 12;
        pub const TX_DATA_PKTS: u8 = 13;
        pub const RX_WORDS: u8 = 14;
        pub const TX_WORDS: u8 = 15;
        pub const EXT_NAMES: [&str; 16] = [
            "RxPkts",
            "RxVcrcErr",
            "RxLenErr",
            "RxLverErr",
            "RxLnhErr",
            "Vl15Dropped",
            "DataDropped",
            "LinkDownDrop",
            "NoRoute",
            "LoopDrop",
            "StateDrop",
            "FwdPkts",
            "TxVl15Pkts",
            "TxDataPkts",
            "RxWords",
            "TxWords",
        ];
        // Port 0, the SMI.
        pub const P0_TO_SMA: u8 = 0;
        pub const P0_TO_SM: u8 = 1;
        pub const P0_ICRC_ERR: u8 = 2;
        pub const P0_BAD_HDR: u8 = 3;
        pub const P0_LID_ERR: u8 = 4;
        pub const P0_DR_DISCARD: u8 = 5;
        pub const P0_DR_FORWARDED: u8 = 6;
        pub const P0_PORT_DOWN: u8 = 7;
        pub const P0_VL15_DROPPED: u8 = 8;
        pub const P0_SQ_PKTS: u8 = 9;
        pub const P0_SQ_DR_DISCARD: u8 = 10;
        pub const P0_SQ_LOCAL: u8 = 11;
        pub const P0_NO_ROUTE: u8 = 12;
        pub const P0_LOOP_DROP: u8 = 13;
        pub const P0_STATE_DROP: u8 = 14;
        pub const P0_MKEY_VIOL: u8 = 15;
        pub const P0_NAMES: [&str; 16] = [
            "ToSma",
            "ToSm",
            "IcrcErr",
            "BadHdr",
            "LidErr",
            "DrDiscard",
            "DrForwarded",
            "PortDown",
            "Vl15Dropped",
            "SqPkts",
            "SqDrDiscard",
            "SqLocal",
            "NoRoute",
            "LoopDrop",
            "StateDrop",
            "MkeyViol",
        ];
        // Port 0, the GMP bank.
        pub const G_RX_PKTS: u8 = 0;
        pub const G_ICRC_ERR: u8 = 1;
        pub const G_BAD_HDR: u8 = 2;
        pub const G_GMPS: u8 = 3;
        pub const G_TX_PKTS: u8 = 4;
        pub const G_TX_DROP: u8 = 5;
        pub const G_RX_WORDS: u8 = 6;
        pub const G_TX_WORDS: u8 = 7;
        pub const G_PKEY_VIOL: u8 = 8;
        pub const G_QKEY_VIOL: u8 = 9;
        pub const G_NAMES: [&str; 10] = [
            "RxPkts", "IcrcErr", "BadHdr", "Gmps", "TxPkts", "TxDrop", "RxWords", "TxWords",
            "PkeyViol", "QkeyViol",
        ];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_of_reg_names_the_port_of_a_register() {
        assert_eq!(port_of_reg(false, mpreg::port(2, reg::PORT_STATE)), Some(2));
        assert_eq!(port_of_reg(false, mpreg::port(1, reg::MKEY_LO)), Some(1));
        assert_eq!(port_of_reg(false, mpreg::BAD_TAG), None);
        assert_eq!(
            port_of_reg(true, swreg::ctr(5, swreg::ctr::RX_PKTS)),
            Some(5)
        );
        assert_eq!(port_of_reg(true, swreg::ctr(64, 15)), Some(64));
        assert_eq!(port_of_reg(true, swreg::ctr0g(3)), Some(0));
        assert_eq!(port_of_reg(true, swreg::PORT_STATE + 7), Some(7));
        assert_eq!(port_of_reg(true, swreg::mkey(reg::MKEY_LO)), Some(0));
        assert_eq!(port_of_reg(true, swreg::PKEY_DATA), Some(0));
        assert_eq!(port_of_reg(true, swreg::LFT_BASE + 3), None);
        assert_eq!(port_of_reg(true, swreg::MASTER_SM_LID), None);
    }

    /// `localparam logic [..] <prefix><Name> = <w>'h<hex>;` of `sv`, as
    /// (Name, value): every such parameter, so a register added to the RTL
    /// without its mirror here fails the map's test.
    fn sv_hex_params(sv: &str, decl: &str) -> Vec<(String, u64)> {
        let mut v = Vec::new();
        for line in sv.lines() {
            let code = line.trim_start().split("//").next().unwrap_or("");
            let Some(rest) = code.strip_prefix(decl) else {
                continue;
            };
            let Some((name, val)) = rest.split_once('=') else {
                continue;
            };
            let val = val.trim().trim_end_matches(';').replace('_', "");
            if let Some((_, h)) = val.split_once("'h") {
                v.push((name.trim().to_string(), u64::from_str_radix(h, 16).unwrap()));
            }
        }
        v
    }

    /// The members `<prefix><Name> = <w>'d<v>` of the enum `ty` in `sv`.
    fn sv_enum(sv: &str, ty: &str, prefix: &str) -> Vec<(String, u8)> {
        let end = sv
            .find(&format!("}} {ty};"))
            .unwrap_or_else(|| panic!("no enum {ty}"));
        let start = sv[..end].rfind("typedef enum").expect("typedef enum");
        sv[start..end]
            .lines()
            .filter_map(|l| {
                let code = l.trim_start().split("//").next().unwrap_or("");
                let (name, val) = code.strip_prefix(prefix)?.split_once('=')?;
                let (_, d) = val.trim().trim_end_matches(',').split_once("'d")?;
                Some((name.trim().to_string(), d.trim().parse().ok()?))
            })
            .collect()
    }

    /// Every name of `sv` in `table` with the same value, and every entry of
    /// `table` in `sv`.
    fn same_map(what: &str, sv: &[(String, u64)], table: &[(&str, u64)]) {
        for (name, v) in sv {
            let mirror = table.iter().find(|(n, _)| n == name);
            assert_eq!(
                mirror.map(|(_, m)| *m),
                Some(*v),
                "{what}: {name} = {v:#x} in the RTL"
            );
        }
        for (name, _) in table {
            assert!(
                sv.iter().any(|(n, _)| n == name),
                "{what}: {name} is not in the RTL"
            );
        }
    }

    /// `swreg` mirrors `ib_pkg.sv`: every `SwReg*` address and the ID value,
    /// and the three counter enums (`sw_ctr_e`, `sw_ctr0_e`, `sw_ctr0g_e`)
    /// member by member, index and name.
    #[test]
    fn switch_register_map_mirrors_ib_pkg() {
        let pkg = include_str!("../../../rtl/ib_pkg.sv");
        let a = |v: u16| u64::from(v);
        same_map(
            "switch register",
            &sv_hex_params(pkg, "localparam logic [15:0] SwReg"),
            &[
                ("Id", a(swreg::ID)),
                ("Port0Lid", a(swreg::PORT0_LID)),
                ("MasterSmLid", a(swreg::MASTER_SM_LID)),
                ("MasterSmSl", a(swreg::MASTER_SM_SL)),
                ("NumPorts", a(swreg::NUM_PORTS)),
                ("NumPortsMax", a(swreg::NUM_PORTS_MAX)),
                ("LinearTop", a(swreg::LINEAR_FDB_TOP)),
                ("PortChange", a(swreg::PORT_STATE_CHANGE)),
                ("LftDepth", a(swreg::LFT_DEPTH)),
                ("CtrClear", a(swreg::CTR_CLEAR)),
                ("MkeyBase", a(swreg::MKEY_BASE)),
                ("PkeyCap", a(swreg::PKEY_CAP)),
                ("PkeyIdx", a(swreg::PKEY_IDX)),
                ("PkeyData", a(swreg::PKEY_DATA)),
                ("PortState", a(swreg::PORT_STATE)),
                ("CtrBase", a(swreg::CTR_BASE)),
                ("Ctr0GBase", a(swreg::CTR0G_BASE)),
                ("CtrClrSel", a(swreg::CTR_CLEAR_SEL)),
                ("LftBase", a(swreg::LFT_BASE)),
            ],
        );
        same_map(
            "switch ID",
            &sv_hex_params(pkg, "localparam logic [31:0] SwReg"),
            &[("IdValue", u64::from(swreg::ID_VALUE))],
        );
        // The M_Key registers of port 0 at the CA's indexes.
        assert_eq!(swreg::mkey(reg::MKEY_LO), swreg::MKEY_BASE);
        assert_eq!(
            swreg::mkey(reg::MKEY_LEASE_ST),
            swreg::MKEY_BASE + u16::from(reg::MKEY_LEASE_ST - reg::MKEY_LO)
        );
        for (ty, prefix, names) in [
            ("sw_ctr_e", "SwCtr", &swreg::ctr::EXT_NAMES[..]),
            ("sw_ctr0_e", "SwCtr0", &swreg::ctr::P0_NAMES[..]),
            ("sw_ctr0g_e", "SwCtr0g", &swreg::ctr::G_NAMES[..]),
        ] {
            let members = sv_enum(pkg, ty, prefix);
            assert_eq!(members.len(), names.len(), "{ty}: {members:?}");
            for (name, i) in &members {
                assert_eq!(names[usize::from(*i)], name, "{ty} member {i}");
            }
        }
        use swreg::ctr;
        let idx = |ty: &str, prefix: &str, n: &str| {
            sv_enum(pkg, ty, prefix)
                .into_iter()
                .find(|(k, _)| k == n)
                .map(|(_, i)| i)
        };
        for (n, v) in [
            ("RxPkts", ctr::RX_PKTS),
            ("RxVcrcErr", ctr::RX_VCRC_ERR),
            ("RxLenErr", ctr::RX_LEN_ERR),
            ("RxLverErr", ctr::RX_LVER_ERR),
            ("RxLnhErr", ctr::RX_LNH_ERR),
            ("Vl15Dropped", ctr::VL15_DROPPED),
            ("DataDropped", ctr::DATA_DROPPED),
            ("LinkDownDrop", ctr::LINK_DOWN_DROP),
            ("NoRoute", ctr::NO_ROUTE),
            ("LoopDrop", ctr::LOOP_DROP),
            ("StateDrop", ctr::STATE_DROP),
            ("FwdPkts", ctr::FWD_PKTS),
            ("TxVl15Pkts", ctr::TX_VL15_PKTS),
            ("TxDataPkts", ctr::TX_DATA_PKTS),
            ("RxWords", ctr::RX_WORDS),
            ("TxWords", ctr::TX_WORDS),
        ] {
            assert_eq!(idx("sw_ctr_e", "SwCtr", n), Some(v), "SwCtr{n}");
        }
        assert_eq!(swreg::CTR_VL15_DROPPED, ctr::VL15_DROPPED);
        for (n, v) in [
            ("ToSma", ctr::P0_TO_SMA),
            ("ToSm", ctr::P0_TO_SM),
            ("IcrcErr", ctr::P0_ICRC_ERR),
            ("BadHdr", ctr::P0_BAD_HDR),
            ("LidErr", ctr::P0_LID_ERR),
            ("DrDiscard", ctr::P0_DR_DISCARD),
            ("DrForwarded", ctr::P0_DR_FORWARDED),
            ("PortDown", ctr::P0_PORT_DOWN),
            ("Vl15Dropped", ctr::P0_VL15_DROPPED),
            ("SqPkts", ctr::P0_SQ_PKTS),
            ("SqDrDiscard", ctr::P0_SQ_DR_DISCARD),
            ("SqLocal", ctr::P0_SQ_LOCAL),
            ("NoRoute", ctr::P0_NO_ROUTE),
            ("LoopDrop", ctr::P0_LOOP_DROP),
            ("StateDrop", ctr::P0_STATE_DROP),
            ("MkeyViol", ctr::P0_MKEY_VIOL),
        ] {
            assert_eq!(idx("sw_ctr0_e", "SwCtr0", n), Some(v), "SwCtr0{n}");
        }
        assert_eq!(swreg::CTR0_VL15_DROPPED, ctr::P0_VL15_DROPPED);
        for (n, v) in [
            ("RxPkts", ctr::G_RX_PKTS),
            ("IcrcErr", ctr::G_ICRC_ERR),
            ("BadHdr", ctr::G_BAD_HDR),
            ("Gmps", ctr::G_GMPS),
            ("TxPkts", ctr::G_TX_PKTS),
            ("TxDrop", ctr::G_TX_DROP),
            ("RxWords", ctr::G_RX_WORDS),
            ("TxWords", ctr::G_TX_WORDS),
            ("PkeyViol", ctr::G_PKEY_VIOL),
            ("QkeyViol", ctr::G_QKEY_VIOL),
        ] {
            assert_eq!(idx("sw_ctr0g_e", "SwCtr0g", n), Some(v), "SwCtr0g{n}");
        }
        // 65 ports of 16 counters end below the GMP bank, which ends below
        // the clear-select registers.
        assert!(swreg::ctr(64, 15) < swreg::CTR0G_BASE);
        assert!(swreg::ctr0g(15) < swreg::CTR_CLEAR_SEL);
    }

    /// `mpreg` mirrors `ib_ca_mp_top.sv`: its own registers, its ID value,
    /// and port p's registers at 0x0100·p (the decode of `reg_addr_i[15:8]`).
    #[test]
    fn multiport_ca_register_map_mirrors_ib_ca_mp_top() {
        let top = include_str!("../../../rtl/ib_ca_mp_top.sv");
        same_map(
            "multiport CA register",
            &sv_hex_params(top, "localparam logic [15:0] RegMp"),
            &[
                ("Id", u64::from(mpreg::ID)),
                ("BadTag", u64::from(mpreg::BAD_TAG)),
            ],
        );
        same_map(
            "multiport CA ID",
            &sv_hex_params(top, "localparam logic [31:0] Mp"),
            &[("IdValue", u64::from(mpreg::ID_VALUE))],
        );
        assert!(top.contains("assign reg_port = reg_addr_i[15:8];"));
        assert!(top.contains(".reg_addr_i         (reg_addr_i[7:0]),"));
        for p in 1..=2u8 {
            assert_eq!(mpreg::port(p, reg::PORT_LID), 0x0100 * u16::from(p) + 0x01);
        }
    }

    /// `reg` mirrors `rtl/ib_pkg.sv`: every `ctr_e` member (CamelCase after
    /// `Ctr`, as snake_case) at its index, and the register addresses.
    #[test]
    fn register_map_mirrors_ib_pkg() {
        let pkg = include_str!("../../../rtl/ib_pkg.sv");
        // ctr_e members, CamelCase after `Ctr`, as snake_case.
        let ctrs: Vec<(usize, String)> = sv_enum(pkg, "ctr_e", "Ctr")
            .into_iter()
            .map(|(name, i)| {
                let mut snake = String::new();
                for (k, ch) in name.chars().enumerate() {
                    if ch.is_ascii_uppercase() && k > 0 {
                        snake.push('_');
                    }
                    snake.push(ch.to_ascii_lowercase());
                }
                (usize::from(i), snake)
            })
            .collect();
        // Indices ctr_e leaves unused are named reserved_<i> here.
        let reserved = reg::COUNTERS
            .iter()
            .enumerate()
            .filter(|(i, n)| **n == format!("reserved_{i}"))
            .count();
        assert_eq!(ctrs.len() + reserved, reg::COUNTERS.len(), "{ctrs:?}");
        for (i, name) in &ctrs {
            assert_eq!(reg::COUNTERS[*i], name, "counter {i}");
        }
        assert_eq!(reg::COUNTERS[usize::from(reg::CTR_PKEY_VIOL)], "pkey_viol");
        assert_eq!(reg::COUNTERS[usize::from(reg::CTR_QKEY_VIOL)], "qkey_viol");
        let a = |v: u8| u64::from(v);
        same_map(
            "CA register",
            &sv_hex_params(pkg, "localparam logic [7:0] Reg"),
            &[
                ("Id", a(reg::ID)),
                ("PortLid", a(reg::PORT_LID)),
                ("PortLmc", a(reg::PORT_LMC)),
                ("MasterSmLid", a(reg::MASTER_SM_LID)),
                ("MasterSmSl", a(reg::MASTER_SM_SL)),
                ("PortState", a(reg::PORT_STATE)),
                ("PortNum", a(reg::PORT_NUM)),
                ("Caps", a(reg::CAPS)),
                ("RxDepth", a(reg::RX_DEPTH)),
                ("CtrClearSel", a(reg::CTR_CLEAR_SEL)),
                ("CtrClear", a(reg::CTR_CLEAR)),
                ("PkeyCap", a(reg::PKEY_CAP)),
                ("PkeyIdx", a(reg::PKEY_IDX)),
                ("PkeyData", a(reg::PKEY_DATA)),
                ("CtrBase", a(reg::CTR_BASE)),
                ("MkeyBase", a(reg::MKEY_LO)),
                ("MkeyEnd", a(reg::MKEY_LEASE_ST) + 2),
            ],
        );
        same_map(
            "CA ID",
            &sv_hex_params(pkg, "localparam logic [31:0] Reg"),
            &[("IdValue", u64::from(reg::ID_VALUE))],
        );
        // gsi_reason_e
        let reasons = sv_enum(pkg, "gsi_reason_e", "");
        assert_eq!(reasons.len(), 6, "{reasons:?}");
        let reason = |n: &str| reasons.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
        assert_eq!(reason("GsiOk"), Some(gsi_reason::OK));
        assert_eq!(reason("GsiLinkDrop"), Some(gsi_reason::LINK_DROP));
        assert_eq!(reason("GsiIcrcErr"), Some(gsi_reason::ICRC_ERR));
        assert_eq!(reason("GsiBadHdr"), Some(gsi_reason::BAD_HDR));
        assert_eq!(reason("GsiPkeyViol"), Some(gsi_reason::PKEY_VIOL));
        assert_eq!(reason("GsiQkeyViol"), Some(gsi_reason::QKEY_VIOL));
        // the counters end below the board's registers (0xC0)
        assert!(usize::from(reg::CTR_BASE) + reg::COUNTERS.len() <= 0xC0);
    }
}
