//! Every InfiniBand constant the testbench uses, in one place (ibspec §1-§9).
//! Byte sizes of the packet parts, LID ranges, LNH values, BTH opcodes,
//! Q_Keys, MAD classes, methods, status codes, attribute IDs and the PortInfo
//! encodings.

// ---- Packet layout (ibspec §1, §2, §11) ----
pub const LRH_BYTES: usize = 8;
pub const BTH_BYTES: usize = 12;
pub const DETH_BYTES: usize = 8;
pub const MAD_BYTES: usize = 256;
pub const ICRC_BYTES: usize = 4;
pub const VCRC_BYTES: usize = 2;
/// Offset of the MAD in a local (no GRH) UD packet: LRH + BTH + DETH.
pub const MAD_OFFSET: usize = LRH_BYTES + BTH_BYTES + DETH_BYTES;
/// An SMP/GMP packet LRH..ICRC (288 bytes).
pub const SMP_PKT_BYTES: usize = MAD_OFFSET + MAD_BYTES + ICRC_BYTES;
/// An SMP/GMP packet on the wire, VCRC included (290 bytes).
pub const SMP_WIRE_BYTES: usize = SMP_PKT_BYTES + VCRC_BYTES;
/// LRH.PktLen of an SMP/GMP (LRH..ICRC in 4-byte words).
pub const SMP_PKT_LEN: u16 = (SMP_PKT_BYTES / 4) as u16;
/// Packet byte offset of BTH.resv8a (masked to 1s in the ICRC).
pub const BTH_RESV8A_OFFSET: usize = LRH_BYTES + 4;

// ---- LRH ----
/// The management virtual lane.
pub const VL15: u8 = 15;
pub const LNH_RAW: u8 = 0;
pub const LNH_IP_NON_IBA: u8 = 1;
pub const LNH_IBA_LOCAL: u8 = 2;
pub const LNH_IBA_GLOBAL: u8 = 3;

// ---- LIDs ([ib_types]) ----
pub const PERMISSIVE_LID: u16 = 0xFFFF;
pub const UNICAST_LID_MAX: u16 = 0xBFFF;
pub const MULTICAST_LID_BASE: u16 = 0xC000;
/// LMC is 3 bits; 7 at most ([ib_types] IB_PORT_LMC_MAX).
pub const LMC_MAX: u8 = 7;

// ---- BTH / DETH ----
pub const OPCODE_UD_SEND_ONLY: u8 = 0x64;
pub const OPCODE_UD_SEND_ONLY_IMM: u8 = 0x65;
pub const DEFAULT_P_KEY: u16 = 0xFFFF;
pub const QP0: u32 = 0;
pub const QP1: u32 = 1;
pub const MULTICAST_QPN: u32 = 0xFF_FFFF;
/// Q_Key of QP1 (GSI) ([ib_types] IB_QP1_WELL_KNOWN_Q_KEY).
pub const QP1_Q_KEY: u32 = 0x8001_0000;
pub const PRIVILEGED_Q_KEY: u32 = 0x8000_0000;

// ---- MAD classes (ibspec §7) ----
pub const BASE_VERSION: u8 = 1;
pub const CLASS_SUBN_LID: u8 = 0x01;
pub const CLASS_SUBN_DR: u8 = 0x81;
pub const CLASS_SA: u8 = 0x03;
pub const CLASS_PERF: u8 = 0x04;
pub const CLASS_BM: u8 = 0x05;
pub const CLASS_DEV_MGT: u8 = 0x06;
pub const CLASS_CM: u8 = 0x07;
pub const CLASS_SNMP: u8 = 0x08;
pub const CLASS_DEV_ADM: u8 = 0x10;
pub const CLASS_BIS: u8 = 0x12;
pub const CLASS_CC: u8 = 0x21;
/// ClassVersion of the SM classes ([ibsim] "sma ver is 1").
pub const SM_CLASS_VERSION: u8 = 1;

// ---- Methods ----
pub const METHOD_GET: u8 = 0x01;
pub const METHOD_SET: u8 = 0x02;
pub const METHOD_SEND: u8 = 0x03;
pub const METHOD_TRAP: u8 = 0x05;
pub const METHOD_REPORT: u8 = 0x06;
pub const METHOD_TRAP_REPRESS: u8 = 0x07;
pub const METHOD_GET_TABLE: u8 = 0x12;
pub const METHOD_GET_TRACE_TABLE: u8 = 0x13;
pub const METHOD_GET_MULTI: u8 = 0x14;
pub const METHOD_DELETE: u8 = 0x15;
pub const METHOD_GET_RESP: u8 = 0x81;
pub const METHOD_REPORT_RESP: u8 = 0x86;
pub const METHOD_GET_TABLE_RESP: u8 = 0x92;
pub const METHOD_GET_MULTI_RESP: u8 = 0x94;
/// The R (response) bit of the method byte.
pub const METHOD_RESP_BIT: u8 = 0x80;

// ---- Status (ibspec §7) ----
pub const STATUS_OK: u16 = 0x0000;
pub const STATUS_BUSY: u16 = 0x0001;
pub const STATUS_REDIRECT: u16 = 0x0002;
pub const STATUS_BAD_VERSION: u16 = 0x0004;
pub const STATUS_METHOD_UNSUPPORTED: u16 = 0x0008;
pub const STATUS_ATTR_UNSUPPORTED: u16 = 0x000C;
pub const STATUS_INVALID_FIELD: u16 = 0x001C;
/// DR SMP status bit 15: the D (direction) bit.
pub const SMP_DIRECTION: u16 = 0x8000;
/// DR SMP status bits 14:0.
pub const SMP_STATUS_MASK: u16 = 0x7FFF;
/// Hop count limit: valid hop counts are 0..63 (C14-6).
pub const SMP_MAX_PATH_HOPS: u8 = 64;

// ---- Attribute IDs (ibspec §8) ----
pub const ATTR_CLASS_PORT_INFO: u16 = 0x0001;
pub const ATTR_NOTICE: u16 = 0x0002;
pub const ATTR_INFORM_INFO: u16 = 0x0003;
pub const ATTR_NODE_DESC: u16 = 0x0010;
pub const ATTR_NODE_INFO: u16 = 0x0011;
pub const ATTR_SWITCH_INFO: u16 = 0x0012;
pub const ATTR_GUID_INFO: u16 = 0x0014;
pub const ATTR_PORT_INFO: u16 = 0x0015;
pub const ATTR_P_KEY_TABLE: u16 = 0x0016;
pub const ATTR_SL_TO_VL_TABLE: u16 = 0x0017;
pub const ATTR_VL_ARB_TABLE: u16 = 0x0018;
pub const ATTR_LINEAR_FWD_TABLE: u16 = 0x0019;
pub const ATTR_RANDOM_FWD_TABLE: u16 = 0x001A;
pub const ATTR_MCAST_FWD_TABLE: u16 = 0x001B;
pub const ATTR_SM_INFO: u16 = 0x0020;
pub const ATTR_VENDOR_DIAG: u16 = 0x0030;
pub const ATTR_LED_INFO: u16 = 0x0031;
pub const ATTR_MLNX_EXT_PORT_INFO: u16 = 0xFF90;

// ---- NodeInfo ----
pub const NODE_TYPE_CA: u8 = 1;
pub const NODE_TYPE_SWITCH: u8 = 2;
pub const NODE_TYPE_ROUTER: u8 = 3;

// ---- PortInfo encodings ----
pub const PORT_STATE_NO_CHANGE: u8 = 0;
pub const PORT_STATE_DOWN: u8 = 1;
pub const PORT_STATE_INIT: u8 = 2;
pub const PORT_STATE_ARMED: u8 = 3;
pub const PORT_STATE_ACTIVE: u8 = 4;
pub const PORT_STATE_ACT_DEFER: u8 = 5;
pub const PHYS_STATE_NO_CHANGE: u8 = 0;
pub const PHYS_STATE_SLEEP: u8 = 1;
pub const PHYS_STATE_POLLING: u8 = 2;
pub const PHYS_STATE_DISABLED: u8 = 3;
pub const PHYS_STATE_TRAINING: u8 = 4;
pub const PHYS_STATE_LINK_UP: u8 = 5;
pub const PHYS_STATE_ERROR_RECOVERY: u8 = 6;
pub const PHYS_STATE_PHY_TEST: u8 = 7;

// ---- SMInfo ----
pub const SM_STATE_NOT_ACTIVE: u8 = 0;
pub const SM_STATE_DISCOVERING: u8 = 1;
pub const SM_STATE_STANDBY: u8 = 2;
pub const SM_STATE_MASTER: u8 = 3;
pub const SMINFO_ATTR_MOD_HANDOVER: u32 = 1;
pub const SMINFO_ATTR_MOD_ACKNOWLEDGE: u32 = 2;
pub const SMINFO_ATTR_MOD_DISABLE: u32 = 3;
pub const SMINFO_ATTR_MOD_STANDBY: u32 = 4;
pub const SMINFO_ATTR_MOD_DISCOVER: u32 = 5;
