//! SMP attribute payloads (the 64-byte SMP data, ibspec §8): NodeInfo,
//! NodeDescription and PortInfo. PortInfo's sub-byte fields use the
//! MSB-first bit offsets of libibmad (`BITSOFFS`, bit 0 = MSB of byte 0),
//! read and written through a bitvec `BitSlice<u8, Msb0>`.

use bitvec::prelude::*;
use serde::{Deserialize, Serialize};

use super::consts::*;
use super::{byte_array, need, PacketError};

/// Size of every SMP attribute payload.
pub const SMP_DATA_BYTES: usize = 64;

fn be_u64(b: &[u8], o: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[o..o + 8]);
    u64::from_be_bytes(a)
}

/// NodeInfo (attribute 0x0011).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NodeInfo {
    pub base_version: u8,
    pub class_version: u8,
    /// 1 CA, 2 switch, 3 router.
    pub node_type: u8,
    pub num_ports: u8,
    pub sys_guid: u64,
    pub node_guid: u64,
    pub port_guid: u64,
    pub partition_cap: u16,
    pub device_id: u16,
    pub revision: u32,
    /// The port the SMP arrived on.
    pub local_port_num: u8,
    /// 24 bits.
    pub vendor_id: u32,
}

impl NodeInfo {
    pub fn encode(&self) -> [u8; SMP_DATA_BYTES] {
        let mut d = [0u8; SMP_DATA_BYTES];
        d[0] = self.base_version;
        d[1] = self.class_version;
        d[2] = self.node_type;
        d[3] = self.num_ports;
        d[4..12].copy_from_slice(&self.sys_guid.to_be_bytes());
        d[12..20].copy_from_slice(&self.node_guid.to_be_bytes());
        d[20..28].copy_from_slice(&self.port_guid.to_be_bytes());
        d[28..30].copy_from_slice(&self.partition_cap.to_be_bytes());
        d[30..32].copy_from_slice(&self.device_id.to_be_bytes());
        d[32..36].copy_from_slice(&self.revision.to_be_bytes());
        d[36] = self.local_port_num;
        d[37..40].copy_from_slice(&self.vendor_id.to_be_bytes()[1..]);
        d
    }

    /// Decode from the SMP data (at least 40 bytes are read; bytes 40..63
    /// are reserved).
    pub fn decode(d: &[u8]) -> Result<Self, PacketError> {
        need("NodeInfo", d, 40)?;
        Ok(NodeInfo {
            base_version: d[0],
            class_version: d[1],
            node_type: d[2],
            num_ports: d[3],
            sys_guid: be_u64(d, 4),
            node_guid: be_u64(d, 12),
            port_guid: be_u64(d, 20),
            partition_cap: u16::from_be_bytes([d[28], d[29]]),
            device_id: u16::from_be_bytes([d[30], d[31]]),
            revision: u32::from_be_bytes([d[32], d[33], d[34], d[35]]),
            local_port_num: d[36],
            vendor_id: u32::from_be_bytes([0, d[37], d[38], d[39]]),
        })
    }
}

/// NodeDescription (attribute 0x0010): 64 bytes of UTF-8, not
/// NUL-terminated when all 64 are used. Kept as raw bytes so that decode →
/// encode is exact; `text()` gives the string up to the first NUL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeDescription(#[serde(with = "byte_array")] pub [u8; SMP_DATA_BYTES]);

impl Default for NodeDescription {
    fn default() -> Self {
        NodeDescription([0; SMP_DATA_BYTES])
    }
}

impl NodeDescription {
    /// From a string: truncated to 64 bytes at a character boundary, padded
    /// with NULs.
    pub fn new(s: &str) -> Self {
        let mut end = s.len().min(SMP_DATA_BYTES);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        let mut d = [0u8; SMP_DATA_BYTES];
        d[..end].copy_from_slice(&s.as_bytes()[..end]);
        NodeDescription(d)
    }

    /// The text up to the first NUL (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        let n = self
            .0
            .iter()
            .position(|&c| c == 0)
            .unwrap_or(SMP_DATA_BYTES);
        String::from_utf8_lossy(&self.0[..n]).into_owned()
    }

    pub fn encode(&self) -> [u8; SMP_DATA_BYTES] {
        self.0
    }

    pub fn decode(d: &[u8]) -> Result<Self, PacketError> {
        need("NodeDescription", d, SMP_DATA_BYTES)?;
        let mut a = [0u8; SMP_DATA_BYTES];
        a.copy_from_slice(&d[..SMP_DATA_BYTES]);
        Ok(NodeDescription(a))
    }
}

/// Declares PortInfo from one table of (field, type, MSB-first bit offset,
/// width), so the struct, decode, encode and the field list cannot disagree.
macro_rules! port_info {
    ($( $(#[$doc:meta])* $name:ident : $ty:ty = $off:literal, $w:literal; )*) => {
        /// PortInfo (attribute 0x0015), every field of ibspec §8.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
        pub struct PortInfo {
            $( $(#[$doc])* pub $name: $ty, )*
        }

        impl PortInfo {
            /// (name, MSB-first bit offset, width in bits) of every field,
            /// reserved ones included; together they cover all 512 bits.
            pub const FIELDS: &'static [(&'static str, usize, usize)] =
                &[$( (stringify!($name), $off, $w), )*];

            /// Decode from the SMP data (64 bytes).
            pub fn decode(d: &[u8]) -> Result<Self, PacketError> {
                need("PortInfo", d, SMP_DATA_BYTES)?;
                let bits = d[..SMP_DATA_BYTES].view_bits::<Msb0>();
                Ok(PortInfo {
                    $( $name: bits[$off..$off + $w].load_be::<$ty>(), )*
                })
            }

            /// Wire bytes; values wider than their field are truncated.
            pub fn encode(&self) -> [u8; SMP_DATA_BYTES] {
                let mut d = [0u8; SMP_DATA_BYTES];
                let bits = d.view_bits_mut::<Msb0>();
                $( bits[$off..$off + $w].store_be::<$ty>(self.$name); )*
                d
            }
        }
    };
}

port_info! {
    m_key: u64 = 0, 64;
    gid_prefix: u64 = 64, 64;
    /// Base LID.
    lid: u16 = 128, 16;
    master_sm_lid: u16 = 144, 16;
    capability_mask: u32 = 160, 32;
    diag_code: u16 = 192, 16;
    m_key_lease_period: u16 = 208, 16;
    local_port_num: u8 = 224, 8;
    link_width_enabled: u8 = 232, 8;
    link_width_supported: u8 = 240, 8;
    link_width_active: u8 = 248, 8;
    link_speed_supported: u8 = 256, 4;
    /// 0 NoChange, 1 Down, 2 Init, 3 Armed, 4 Active, 5 ActDefer.
    port_state: u8 = 260, 4;
    /// 0 NoChange, 1 Sleep, 2 Polling, 3 Disabled, 4 Training, 5 LinkUp, …
    port_phys_state: u8 = 264, 4;
    link_down_default_state: u8 = 268, 4;
    m_key_protect_bits: u8 = 272, 2;
    /// Byte 34 bits 5:3, reserved.
    resv_34: u8 = 274, 3;
    lmc: u8 = 277, 3;
    link_speed_active: u8 = 280, 4;
    link_speed_enabled: u8 = 284, 4;
    neighbor_mtu: u8 = 288, 4;
    master_sm_sl: u8 = 292, 4;
    vl_cap: u8 = 296, 4;
    init_type: u8 = 300, 4;
    vl_high_limit: u8 = 304, 8;
    vl_arbitration_high_cap: u8 = 312, 8;
    vl_arbitration_low_cap: u8 = 320, 8;
    init_type_reply: u8 = 328, 4;
    mtu_cap: u8 = 332, 4;
    vl_stall_count: u8 = 336, 3;
    hoq_life: u8 = 339, 5;
    operational_vls: u8 = 344, 4;
    partition_enforcement_inbound: u8 = 348, 1;
    partition_enforcement_outbound: u8 = 349, 1;
    filter_raw_inbound: u8 = 350, 1;
    filter_raw_outbound: u8 = 351, 1;
    m_key_violations: u16 = 352, 16;
    p_key_violations: u16 = 368, 16;
    q_key_violations: u16 = 384, 16;
    guid_cap: u8 = 400, 8;
    client_reregister: u8 = 408, 1;
    multicast_pkey_trap_suppression_enabled: u8 = 409, 2;
    subnet_timeout: u8 = 411, 5;
    /// Byte 52 bits 7:5, reserved.
    resv_52: u8 = 416, 3;
    resp_time_value: u8 = 419, 5;
    local_phy_errors: u8 = 424, 4;
    overrun_errors: u8 = 428, 4;
    max_credit_hint: u16 = 432, 16;
    /// Byte 56, reserved.
    resv_56: u8 = 448, 8;
    /// 24 bits.
    link_round_trip_latency: u32 = 456, 24;
    capability_mask2: u16 = 480, 16;
    link_speed_ext_active: u8 = 496, 4;
    link_speed_ext_supported: u8 = 500, 4;
    /// Byte 63 bits 7:5, reserved.
    resv_63: u8 = 504, 3;
    link_speed_ext_enabled: u8 = 507, 5;
}

/// Short names for the PortState encoding.
pub fn port_state_name(s: u8) -> String {
    match s {
        PORT_STATE_NO_CHANGE => "NoChange".into(),
        PORT_STATE_DOWN => "Down".into(),
        PORT_STATE_INIT => "Init".into(),
        PORT_STATE_ARMED => "Armed".into(),
        PORT_STATE_ACTIVE => "Active".into(),
        PORT_STATE_ACT_DEFER => "ActDefer".into(),
        s => format!("state{s}"),
    }
}

/// Short names for the PortPhysicalState encoding.
pub fn phys_state_name(s: u8) -> String {
    match s {
        PHYS_STATE_NO_CHANGE => "NoChange".into(),
        PHYS_STATE_SLEEP => "Sleep".into(),
        PHYS_STATE_POLLING => "Polling".into(),
        PHYS_STATE_DISABLED => "Disabled".into(),
        PHYS_STATE_TRAINING => "Training".into(),
        PHYS_STATE_LINK_UP => "LinkUp".into(),
        PHYS_STATE_ERROR_RECOVERY => "ErrorRecovery".into(),
        PHYS_STATE_PHY_TEST => "PhyTest".into(),
        s => format!("phys{s}"),
    }
}
