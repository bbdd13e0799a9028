// The GSI receive checks of a data-VL packet as ibspec states them (§3.1
// ICRC, §6 GMP (QP1) checks, §2 QP1 key rules: P_Key against the port's
// table with the rxe pkey_match rule, Q_Key 0x80010000), and the link
// layer's verdict (§1 PktLen, LVer, LNH; §3.2 VCRC): the independent model of
// the gsi_rx_check and ib_ca_top harnesses. Packets are LRH..VCRC.
#pragma once
#include <vector>

#include "tb_util.h"

static uint32_t gsi_crc32(const uint8_t* p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : (c >> 1);
  }
  return c ^ 0xFFFFFFFFu;
}

// ---------------------------------------------------------------------------
// Packet model
// ---------------------------------------------------------------------------
static int lnh_of(const Bytes& p) { return p[1] & 3; }
static int pktlen_of(const Bytes& p) { return ((p[4] & 7) << 8) | p[5]; }
static int hdr_off(const Bytes& p) { return lnh_of(p) == 3 ? 40 : 0; }

// ICRC over LRH..payload with the variant fields as 1s (ibspec §3.1).
static uint32_t icrc_calc(const Bytes& p) {
  size_t n = size_t(pktlen_of(p)) * 4 - 4;
  Bytes m(p.begin(), p.begin() + n);
  if (lnh_of(p) == 3) {
    for (int i = 0; i < 8; i++) m[i] = 0xFF;  // LRH
    m[8] |= 0x0F;                             // TClass[7:4]
    m[9] = m[10] = m[11] = 0xFF;              // TClass[3:0], FlowLabel
    m[15] = 0xFF;                             // HopLmt
    if (n > 52) m[52] = 0xFF;                 // BTH.resv8a
  } else {
    m[0] |= 0xF0;                             // VL
    m[12] = 0xFF;                             // BTH.resv8a
  }
  return gsi_crc32(m.data(), m.size());
}
static uint32_t icrc_in(const Bytes& p) {
  size_t o = size_t(pktlen_of(p)) * 4 - 4;
  return p[o] | (p[o + 1] << 8) | (p[o + 2] << 16) | (uint32_t(p[o + 3]) << 24);
}
// Set PktLen from the size, then the ICRC and the VCRC.
static void finish_pkt(Bytes& p, bool good_icrc = true) {
  int pl = int(p.size() - 2) / 4;
  p[4] = (p[4] & 0xF8) | ((pl >> 8) & 7);
  p[5] = pl & 0xFF;
  uint32_t c = icrc_calc(p);
  if (!good_icrc) c ^= 1u << urand(32);
  size_t o = size_t(pl) * 4 - 4;
  for (int i = 0; i < 4; i++) p[o + i] = (c >> (8 * i)) & 0xFF;
  fix_vcrc(p);
}

enum Ev { EvNone, EvIcrc, EvHdr, EvPkey, EvQkey, EvGmp, NumEv };
static const char* kEvName[] = {"none", "icrc_err", "bad_hdr", "pkey_viol", "qkey_viol", "gmp"};
// gsi_reason_e (ib_pkg): why a packet is discarded, with tlast.
enum Reason { RsOk, RsLinkDrop, RsIcrc, RsHdr, RsPkey, RsQkey };
struct Want {
  bool discard;
  Ev ev;
  Reason reason;
};
// A P_Key table (PortInfo P_KeyTable entries, bit 15 = full member). The
// default: entry 0 = 0xFFFF, every other entry 0 (invalid).
using PkeyTable = std::vector<uint16_t>;
static PkeyTable default_pkeys(size_t n) {
  PkeyTable t(n, 0);
  if (n) t[0] = 0xFFFF;
  return t;
}
// IBA / Linux rxe pkey_match: the low 15 bits equal and non-zero, and at
// least one of the two a full member.
static bool pkey_match(uint16_t a, uint16_t b) {
  return (a & 0x7FFF) != 0 && (a & 0x7FFF) == (b & 0x7FFF) && ((a | b) & 0x8000);
}
static bool pkey_in(const PkeyTable& t, uint16_t k) {
  for (uint16_t e : t)
    if (pkey_match(e, k)) return true;
  return false;
}
// The spec's verdict on a packet (tuser = the link discarded it), for a port
// whose P_Key table is `pkeys`. Order: ICRC (a corrupted packet's fields are
// not trusted), header validity, P_Key, Q_Key.
static Want model(const Bytes& p, bool tuser, const PkeyTable& pkeys = default_pkeys(64)) {
  if (tuser) return {true, EvNone, RsLinkDrop};
  int o = hdr_off(p), pl = pktlen_of(p);
  bool grh = lnh_of(p) == 3;
  // a GRH packet with no room for GRH + BTH + ICRC: no BTH, no ICRC rule
  if (grh && pl < 16) return {true, EvHdr, RsHdr};
  if (icrc_calc(p) != icrc_in(p)) return {true, EvIcrc, RsIcrc};
  if (grh && p[14] != 0x1B) return {true, EvHdr, RsHdr};
  uint32_t qp = (p[13 + o] << 16) | (p[14 + o] << 8) | p[15 + o];
  if (qp == 0) return {true, EvHdr, RsHdr};
  if (qp != 1) return {false, EvNone, RsOk};
  if (pl != (grh ? 82 : 72)) return {true, EvHdr, RsHdr};  // the payload is not one 256-byte MAD
  bool ok = p[8 + o] == 0x64 && (p[9 + o] & 0x3F) == 0 && p[28 + o] == 1 && p[29 + o] != 0x01 &&
            p[29 + o] != 0x81;
  if (!ok) return {true, EvHdr, RsHdr};
  uint16_t pkey = uint16_t((p[10 + o] << 8) | p[11 + o]);
  if (!pkey_in(pkeys, pkey)) return {true, EvPkey, RsPkey};
  uint32_t qkey = (uint32_t(p[20 + o]) << 24) | (p[21 + o] << 16) | (p[22 + o] << 8) | p[23 + o];
  if (qkey != 0x80010000u) return {true, EvQkey, RsQkey};
  return {false, EvGmp, RsOk};
}

// The link layer's verdict (ib_link_rx): length = 4 * PktLen + 2, PktLen
// >= 6, LVer 0, LNH 2 or 3, VCRC (LSB first) good.
static bool link_good(const Bytes& p) {
  if (p.size() < 8) return false;
  int pl = pktlen_of(p);
  if (pl < 6 || p.size() != size_t(pl) * 4 + 2 || (p[0] & 0x0F) != 0 || lnh_of(p) < 2) return false;
  uint16_t v = crc16(p.data(), p.size() - 2);
  return p[p.size() - 2] == (v & 0xFF) && p[p.size() - 1] == (v >> 8);
}
