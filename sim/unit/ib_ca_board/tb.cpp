// Unit harness for ib_ca_board: the whole board top (CA port + UART + framing)
// driven through its serial pins by a C++ model of the host (docs/uart.md).
// Expected values come from the reference vectors, ibspec and the framing
// spec: V1 as a WIRE_RX frame -> an SMA_RX frame with V1's MAD after the DR
// receive rules (hop pointer 2, ReturnPath[1] = port 1) and meta
// slid = dlid = 0xFFFF, port 1, class 0x81; the SMA's V2-style response as an
// SMA_TX frame -> a WIRE_TX frame whose payload is exactly V2. A frame with a
// bad CRC is dropped and counted, a frame that lost a byte is abandoned after
// the idle timeout and counted, RegId reads 0x564C3135 over the UART, and the
// internal loopback carries an SM request to the SMA and the answer back.
// The host transmits 1.5 % slow to exercise the receiver's bit timing.
#include <deque>
#include <memory>

#include "Vib_ca_board.h"
#include "tb_util.h"
#include "verilated.h"

#ifndef CLK_HZ
#define CLK_HZ 48000000
#endif
#ifndef BAUD
#define BAUD 3000000
#endif
#ifndef TIMEOUT_US
#define TIMEOUT_US 10000
#endif
#ifndef GSI_CHK
#define GSI_CHK 1  // the board's GsiChk parameter
#endif
static constexpr int kClksPerBit = (CLK_HZ + BAUD / 2) / BAUD;
static constexpr uint64_t kTimeoutClks = uint64_t(CLK_HZ / 1000000) * TIMEOUT_US;

// Framing (docs/uart.md)
static constexpr uint8_t kSync = 0xA5;
enum : uint8_t {
  FtWireRx = 0x01, FtSmaTx = 0x02, FtSmTx = 0x03, FtTrapTx = 0x04, FtRegWrite = 0x05, FtRegRead = 0x06,
  FtWireTx = 0x81, FtSmaRx = 0x82, FtSmRx = 0x83, FtRegReadResp = 0x86,
};
enum : uint8_t {
  kRegId = 0x00, kRegPortState = 0x05, kRegCtrClear = 0x0F, kRegCtrBase = 0x10,
  kRegBoardCtrl = 0xC0, kRegBoardFramesOk = 0xC1, kRegBoardCrcErr = 0xC2, kRegBoardFrameErr = 0xC3,
  kRegBoardOverrun = 0xC4, kRegBoardTxFrames = 0xC5, kRegBoardTxDrop = 0xC6, kRegBoardCaps = 0xC7,
  kRegBoardProfile = 0xC8,
};
static constexpr int kCtrRxPkts = 0, kCtrRxVcrcErr = 1, kCtrRxDataPkts = 5, kCtrSmiToSma = 12, kCtrSmiToSm = 13,
                     kCtrTxVl15Pkts = 17, kCtrGsiGmps = 21;
static constexpr int kMad = 28;

// Frame CRC: the VCRC CRC-16 (tb_util.h crc16), over TYPE, LEN, payload.
static Bytes make_frame(uint8_t type, const Bytes& payload) {
  Bytes f{kSync, type, uint8_t(payload.size() & 0xFF), uint8_t(payload.size() >> 8)};
  f.insert(f.end(), payload.begin(), payload.end());
  uint16_t c = crc16(f.data() + 1, f.size() - 1);
  f.push_back(c & 0xFF);
  f.push_back(c >> 8);
  return f;
}
static Bytes le16(uint16_t v) { return Bytes{uint8_t(v & 0xFF), uint8_t(v >> 8)}; }
static Bytes tx_meta(uint16_t a, uint16_t b, uint8_t sl, uint8_t pb) {
  Bytes m = le16(a);
  Bytes bb = le16(b);
  m.insert(m.end(), bb.begin(), bb.end());
  m.push_back(sl);
  m.push_back(pb);
  m.push_back(0);
  m.push_back(0);
  return m;
}
static Bytes cat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
static Bytes mad_of(const Bytes& p) { return Bytes(p.begin() + kMad, p.begin() + kMad + 256); }

// ---------------------------------------------------------------------------
// Host model: a UART transmitter (1.5 % slow) and receiver, a frame parser
// ---------------------------------------------------------------------------
static std::unique_ptr<Vib_ca_board> top;
static uint64_t cycle = 0;

struct Frame {
  uint8_t type;
  Bytes payload;
};
static std::deque<uint8_t> host_tx;  // bytes to send
static double tx_bit_clks = kClksPerBit * 1.015;
static double tx_t = 0;      // clocks into the current bit
static int tx_bit = -1;      // -1 idle, 0 start, 1..8 data, 9 stop
static uint8_t tx_byte = 0;
static int rx_state = -1;    // -1 idle, else clocks since the start edge
static uint16_t rx_shift = 0;
static Bytes rx_bytes;       // raw bytes from the board
static std::vector<Frame> frames;
static int bad_up_frames = 0;

static void host_tx_step() {
  if (tx_bit < 0) {
    top->uart_rx_i = 1;
    if (host_tx.empty()) return;
    tx_byte = host_tx.front();
    host_tx.pop_front();
    tx_bit = 0;
    tx_t = 0;
  }
  int level = tx_bit == 0 ? 0 : tx_bit == 9 ? 1 : (tx_byte >> (tx_bit - 1)) & 1;
  top->uart_rx_i = level;
  tx_t += 1;
  if (tx_t >= tx_bit_clks) {
    tx_t -= tx_bit_clks;
    if (++tx_bit == 10) tx_bit = -1;
  }
}
// Parse frames out of rx_bytes (the board sends frames back to back).
static void parse_up() {
  for (;;) {
    size_t i = 0;
    while (i < rx_bytes.size() && rx_bytes[i] != kSync) i++;
    CHECK(i == 0, "board sent %zu bytes outside a frame", i);
    rx_bytes.erase(rx_bytes.begin(), rx_bytes.begin() + i);
    if (rx_bytes.size() < 4) return;
    size_t len = rx_bytes[2] | (rx_bytes[3] << 8);
    if (rx_bytes.size() < 6 + len) return;
    uint16_t c = crc16(rx_bytes.data() + 1, 3 + len);
    uint16_t got = rx_bytes[4 + len] | (rx_bytes[5 + len] << 8);
    if (c != got) {
      bad_up_frames++;
      CHECK(false, "board frame type %02x: CRC %04x, expected %04x", rx_bytes[1], got, c);
    } else {
      frames.push_back(Frame{rx_bytes[1], Bytes(rx_bytes.begin() + 4, rx_bytes.begin() + 4 + len)});
    }
    rx_bytes.erase(rx_bytes.begin(), rx_bytes.begin() + 6 + len);
  }
}
static void host_rx_step(int line) {
  if (rx_state < 0) {
    if (!line) rx_state = 0;
    return;
  }
  rx_state++;
  // sample bit k (0 = start) at its centre
  int k = (rx_state - kClksPerBit / 2) / kClksPerBit;
  if ((rx_state - kClksPerBit / 2) % kClksPerBit == 0 && k >= 0) {
    if (k == 0) {
      CHECK(line == 0, "board UART: start bit not low at cycle %lu", cycle);
    } else if (k <= 8) {
      rx_shift = (rx_shift >> 1) | (line << 7);
    } else {
      CHECK(line == 1, "board UART: stop bit low at cycle %lu", cycle);
      rx_bytes.push_back(rx_shift & 0xFF);
      parse_up();
      rx_state = -1;
    }
  }
}

static void tick() {
  host_tx_step();
  top->clk_i = 0;
  top->eval();
  top->clk_i = 1;
  top->eval();
  host_rx_step(top->uart_tx_o);
  cycle++;
}
static void run(uint64_t n) {
  for (uint64_t i = 0; i < n; i++) tick();
}
template <typename F>
static bool run_until(F done, uint64_t max) {
  for (uint64_t i = 0; i < max; i++) {
    if (done()) return true;
    tick();
  }
  return done();
}
static void send(const Bytes& f) { host_tx.insert(host_tx.end(), f.begin(), f.end()); }
// Clocks to send n bytes (with margin) and to get a 290-byte frame back.
static uint64_t byte_clks(size_t n) { return uint64_t(n * 10 * tx_bit_clks) + 200; }
static const uint64_t kFrameWait = byte_clks(300) * 3;

static bool wait_frames(size_t n, uint64_t max = kFrameWait) {
  return run_until([n] { return frames.size() >= n && host_tx.empty(); }, max);
}
static bool reg_read(uint8_t addr, uint32_t& val) {
  frames.clear();
  send(make_frame(FtRegRead, Bytes{addr}));
  if (!wait_frames(1)) return false;
  const Frame f = frames[0];
  frames.clear();
  if (f.type != FtRegReadResp || f.payload.size() != 5 || f.payload[0] != addr) return false;
  val = f.payload[1] | (f.payload[2] << 8) | (f.payload[3] << 16) | (uint32_t(f.payload[4]) << 24);
  return true;
}
static uint32_t rd(uint8_t addr) {
  uint32_t v = 0xDEADBEEF;
  CHECK(reg_read(addr, v), "register read 0x%02x over the UART failed", addr);
  return v;
}
static void wr(uint8_t addr, uint32_t v) {
  send(make_frame(FtRegWrite, Bytes{addr, uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)}));
  run_until([] { return host_tx.empty(); }, byte_clks(20));
  run(2 * kClksPerBit * 10);
}
static void check_bytes(const Bytes& got, const Bytes& want, const char* what) {
  CHECK(got == want, "%s: %zu bytes, expected %zu, differ", what, got.size(), want.size());
  for (size_t i = 0; i < got.size() && i < want.size(); i++) {
    if (got[i] != want[i]) {
      std::fprintf(stderr, "  %s byte %zu: got %02x want %02x\n", what, i, got[i], want[i]);
      break;
    }
  }
}
// RX meta (docs/uart.md): slid, dlid (LE), sl, port, class, hop_ptr, hop_cnt, 3 x 0
static Bytes rx_meta(uint16_t slid, uint16_t dlid, uint8_t sl, uint8_t port, uint8_t cls, uint8_t hp,
                     uint8_t hc) {
  Bytes m = cat(le16(slid), le16(dlid));
  Bytes t{sl, port, cls, hp, hc, 0, 0, 0};
  return cat(m, t);
}

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  Verilated::randReset(2);
  std::string root = argc > 1 ? argv[1] : ".";
  top = std::make_unique<Vib_ca_board>();

  const char* chk = "123456789";
  CHECK(crc16(reinterpret_cast<const uint8_t*>(chk), 9) == 0x0A3D, "frame CRC check value");
  auto vec = read_vectors(root);
  const Bytes& V1 = vec[0];
  const Bytes& V2 = vec[1];
  CHECK(V1.size() == 290 && V2.size() == 290, "vector sizes");

  top->uart_rx_i = 1;
  top->rst_ni = 0;
  run(10);
  top->rst_ni = 1;
  run(100);
  CHECK(top->uart_tx_o == 1, "UART TX not idle high after reset");
  CHECK((top->led_o & 1) == 1, "link LED off with PortState Init");
  CHECK((top->led_o & 6) == 0, "SMP/drop LEDs on after reset");

  // ---- Register read of RegId over the UART ------------------------------
  CHECK(rd(kRegId) == 0x564C3135u, "RegId over the UART");
  {
    uint32_t caps = rd(kRegBoardCaps);
    CHECK((caps & 0xFFFF) == uint32_t(kClksPerBit) && (caps >> 16) == 512, "RegBoardCaps %08x", caps);
    uint32_t prof = rd(kRegBoardProfile);
    CHECK(prof == (uint32_t(DATAW) | uint32_t(GSI_CHK) << 8), "RegBoardProfile %08x", prof);
  }

  // ---- V1 in as WIRE_RX -> SMA_RX frame ----------------------------------
  frames.clear();
  send(make_frame(FtWireRx, V1));
  CHECK(wait_frames(1), "V1: no frame from the board");
  CHECK((top->led_o & 2) == 2, "SMP LED off after an SMP reached the SMA");
  if (frames.size() == 1) {
    CHECK(frames[0].type == FtSmaRx, "V1: frame type %02x, expected SMA_RX", frames[0].type);
    Bytes want_mad = mad_of(V1);
    want_mad[6] = 2;        // hop pointer after the receive + send rules (hc + 1)
    want_mad[192 + 1] = 1;  // ReturnPath[1] := port 1
    // M_Key verdict trailer: port M_Key 0 after reset, every key valid
    check_bytes(frames[0].payload, cat(cat(rx_meta(0xFFFF, 0xFFFF, 0, 1, 0x81, 2, 1), want_mad), Bytes{0}),
                "SMA_RX");
  }
  frames.clear();

  // ---- SMA response as SMA_TX -> WIRE_TX frame = V2 ----------------------
  {
    Bytes resp = mad_of(V2);
    resp[6] = 2;
    send(make_frame(FtSmaTx, cat(tx_meta(0xFFFF, 0xFFFF, 0, 0), resp)));
    CHECK(wait_frames(1), "SMA response: no frame from the board");
    if (frames.size() == 1) {
      CHECK(frames[0].type == FtWireTx, "SMA response: frame type %02x, expected WIRE_TX", frames[0].type);
      check_bytes(frames[0].payload, V2, "WIRE_TX");
    }
    frames.clear();
  }
  CHECK(rd(kRegCtrBase + kCtrSmiToSma) == 1, "SmiToSma counter");
  CHECK(rd(kRegCtrBase + kCtrTxVl15Pkts) == 1, "TxVl15Pkts counter");
  CHECK((top->led_o & 4) == 0, "drop LED on with nothing dropped");

  // ---- A packet the port drops (bad VCRC) lights the drop LED -------------
  // (docs/uart.md: an event of one of the port's drop counters)
  {
    Bytes bad = V1;
    bad.back() ^= 0x01;  // the VCRC is the packet's last two bytes
    frames.clear();
    send(make_frame(FtWireRx, bad));
    run_until([] { return host_tx.empty(); }, byte_clks(300));
    run(byte_clks(20));
    CHECK(frames.empty(), "a packet with a bad VCRC produced a frame");
    CHECK(rd(kRegCtrBase + kCtrRxVcrcErr) == 1, "RxVcrcErr after a bad VCRC");
    CHECK((top->led_o & 4) == 4, "drop LED off after a port drop (bad VCRC)");
  }

  // ---- A frame with a bad CRC is dropped and counted ----------------------
  {
    uint32_t ok0 = rd(kRegBoardFramesOk);
    Bytes f = make_frame(FtRegRead, Bytes{kRegId});
    f.back() ^= 0x01;
    frames.clear();
    send(f);
    run_until([] { return host_tx.empty(); }, byte_clks(10));
    run(byte_clks(20));
    CHECK(frames.empty(), "bad-CRC register read was answered");
    CHECK(rd(kRegBoardCrcErr) == 1, "RegBoardCrcErr after one bad frame");
    CHECK((top->led_o & 4) == 4, "drop LED off after a bad frame");
    // the bad frame is not counted as good: the reads around it are
    CHECK(rd(kRegBoardFramesOk) == ok0 + 2, "RegBoardFramesOk counts the bad frame");
    // and a bad-CRC WIRE_RX frame never reaches the port
    Bytes g = make_frame(FtWireRx, V1);
    g[10] ^= 0x40;
    send(g);
    run_until([] { return host_tx.empty(); }, byte_clks(300));
    run(byte_clks(40));
    CHECK(frames.empty(), "bad-CRC WIRE_RX frame produced a frame");
    CHECK(rd(kRegBoardCrcErr) == 2, "RegBoardCrcErr after two bad frames");
    // RxPkts counts every packet on the wire: V1 and the bad-VCRC packet
    CHECK(rd(kRegCtrBase + 0) == 2, "RxPkts: the bad-CRC frame reached the port");
  }

  // ---- A lost byte: the frame is abandoned after the idle timeout ---------
  {
    Bytes f = make_frame(FtWireRx, V1);
    f.erase(f.begin() + 100);
    frames.clear();
    send(f);
    run_until([] { return host_tx.empty(); }, byte_clks(300));
    run(kTimeoutClks + 1000);  // the host waits out the timeout, then retries
    CHECK(frames.empty(), "truncated frame produced a frame");
    CHECK(rd(kRegBoardFrameErr) == 1, "RegBoardFrameErr after a truncated frame");
    send(make_frame(FtWireRx, V1));
    CHECK(wait_frames(1), "retry after a lost byte: no frame");
    CHECK(frames.size() == 1 && frames[0].type == FtSmaRx, "retry after a lost byte: not SMA_RX");
    frames.clear();
  }
  // An unknown type and a wrong MAD length are refused at the header.
  {
    send(make_frame(0x7F, Bytes{1, 2, 3}));
    send(make_frame(FtSmaTx, Bytes(100, 0)));
    run_until([] { return host_tx.empty(); }, byte_clks(200));
    run(kTimeoutClks + 1000);
    CHECK(rd(kRegBoardFrameErr) == 3, "RegBoardFrameErr after two bad headers");
    CHECK(frames.empty(), "refused frames produced a frame");
  }

  // ---- Internal loopback: SM request -> SMA -> response -> SM -------------
  wr(kRegBoardCtrl, 1);
  CHECK(rd(kRegBoardCtrl) == 1, "RegBoardCtrl loopback bit");
  {
    Bytes req = mad_of(V1);
    req[6] = 0;  // originator: the send rules make it 1
    frames.clear();
    send(make_frame(FtSmTx, cat(tx_meta(0xFFFF, 0, 0, 0), req)));
    CHECK(wait_frames(1), "loopback: SM request did not come back as SMA_RX");
    if (frames.size() == 1) {
      Bytes want_mad = mad_of(V1);
      want_mad[6] = 2;
      want_mad[192 + 1] = 1;
      CHECK(frames[0].type == FtSmaRx, "loopback request: frame type %02x", frames[0].type);
      check_bytes(frames[0].payload, cat(cat(rx_meta(0xFFFF, 0xFFFF, 0, 1, 0x81, 2, 1), want_mad), Bytes{0}),
                  "loopback SMA_RX");
    }
    frames.clear();
    Bytes resp = mad_of(V2);
    resp[6] = 2;
    send(make_frame(FtSmaTx, cat(tx_meta(0xFFFF, 0xFFFF, 0, 0), resp)));
    CHECK(wait_frames(1), "loopback: response did not come back as SM_RX");
    if (frames.size() == 1) {
      Bytes want_mad = mad_of(V2);
      want_mad[6] = 0;  // returning at hp 1 -> 0, to the SM
      CHECK(frames[0].type == FtSmRx, "loopback response: frame type %02x", frames[0].type);
      check_bytes(frames[0].payload, cat(rx_meta(0xFFFF, 0xFFFF, 0, 1, 0x81, 0, 1), want_mad),
                  "loopback SM_RX");
    }
    frames.clear();
  }
  CHECK(rd(kRegCtrBase + kCtrSmiToSm) == 1, "SmiToSm counter after loopback");
  wr(kRegBoardCtrl, 0);

  // ---- A GMP on a data VL (V3): counted by the link; the GSI checks count
  // it as a GMP only when the board has them (GsiChk); never framed to the
  // host (the board has no data-VL path) ---------------------------------
  {
    const Bytes& V3 = vec[2];
    uint32_t rx0 = rd(kRegCtrBase + kCtrRxPkts), data0 = rd(kRegCtrBase + kCtrRxDataPkts);
    uint32_t gmp0 = rd(kRegCtrBase + kCtrGsiGmps);
    frames.clear();
    send(make_frame(FtWireRx, V3));
    run_until([] { return host_tx.empty(); }, byte_clks(300));
    run(byte_clks(20));
    CHECK(frames.empty(), "V3 (data VL) produced a frame");
    CHECK(rd(kRegCtrBase + kCtrRxPkts) == rx0 + 1 && rd(kRegCtrBase + kCtrRxDataPkts) == data0 + 1,
          "V3: RxPkts / RxDataPkts");
    CHECK(rd(kRegCtrBase + kCtrGsiGmps) == gmp0 + (GSI_CHK ? 1 : 0), "V3: GsiGmps with GsiChk %d", GSI_CHK);
  }

  // ---- Port state and counters; clear ------------------------------------
  wr(kRegPortState, 1);  // Down
  run(100);
  CHECK((top->led_o & 1) == 0, "link LED on with PortState Down");
  wr(kRegPortState, 4);  // Active
  run(100);
  CHECK((top->led_o & 1) == 1, "link LED off with PortState Active");
  CHECK(rd(kRegBoardOverrun) == 0 && rd(kRegBoardTxDrop) == 0, "overrun / TX drop counters");
  uint32_t txf = rd(kRegBoardTxFrames);
  CHECK(txf >= 10, "RegBoardTxFrames %u", txf);
  wr(kRegCtrClear, 1);
  CHECK(rd(kRegBoardCrcErr) == 0 && rd(kRegBoardFrameErr) == 0, "board counters not cleared");
  // docs/uart.md: a frame is counted when its CRC is checked, before its
  // register access: the two reads since the clear, and this one.
  CHECK(rd(kRegBoardFramesOk) == 3, "RegBoardFramesOk after clear");
  CHECK(bad_up_frames == 0, "board sent frames with bad CRCs");

  std::printf("ib_ca_board DataW=%d GsiChk=%d: %lu cycles, %d clocks/bit\n", DATAW, GSI_CHK, cycle, kClksPerBit);
  top->final();
  int rc = finish("ib_ca_board");
  std::fflush(stdout);
  tb_coverage_write();
  top.reset();
  return rc;
}
