// ib_pkg: InfiniBand field layouts, constants, CRC step functions and the
// register map shared by every vl15 RTL module.
//
// Facts are from ../shared/reference/ibspec.md (sections in brackets).
// Byte offsets are from the start of the named structure; "packet byte" means
// the offset from the first LRH byte (first on the wire).
package ib_pkg;

  // A catalogue of constants: no single module uses all of them.
  /* verilator lint_off UNUSEDPARAM */

  // ---------------------------------------------------------------------------
  // Packet geometry [§1, §2, §11]
  // ---------------------------------------------------------------------------
  localparam int unsigned LrhBytes      = 8;
  localparam int unsigned BthBytes      = 12;
  localparam int unsigned DethBytes     = 8;
  localparam int unsigned MadOffset     = LrhBytes + BthBytes + DethBytes;  // 28
  localparam int unsigned MadBytes      = 256;
  localparam int unsigned IcrcBytes     = 4;
  localparam int unsigned VcrcBytes     = 2;
  localparam int unsigned SmpPktBytes   = MadOffset + MadBytes + IcrcBytes;  // 288, LRH..ICRC
  localparam int unsigned SmpWireBytes  = SmpPktBytes + VcrcBytes;           // 290
  localparam int unsigned SmpPktLen     = SmpPktBytes / 4;                   // 72 words
  // Shortest packet a receiver accepts: LRH + BTH + ICRC (PktLen 6).
  localparam int unsigned MinPktLen     = (LrhBytes + BthBytes + IcrcBytes) / 4;

  // Packet-byte offsets of the header fields the datapath reads or writes.
  localparam int unsigned PbLrhVlLver   = 0;   // VL[7:4] LVer[3:0]
  localparam int unsigned PbLrhSlLnh    = 1;   // SL[7:4] rsvd[3:2] LNH[1:0]
  localparam int unsigned PbLrhDlid     = 2;   // 2 bytes
  localparam int unsigned PbLrhPktLen   = 4;   // 11 bits in bytes 4..5
  localparam int unsigned PbLrhSlid     = 6;   // 2 bytes
  localparam int unsigned PbBthOpcode   = 8;
  localparam int unsigned PbBthFlags    = 9;   // SE M PadCnt[5:4] TVer[3:0]
  localparam int unsigned PbBthPkey     = 10;  // 2 bytes
  localparam int unsigned PbBthResv8a   = 12;  // masked to 1s in the ICRC
  localparam int unsigned PbBthDestQp   = 13;  // 3 bytes
  localparam int unsigned PbBthPsn      = 17;  // 3 bytes
  localparam int unsigned PbDethQkey    = 20;  // 4 bytes
  localparam int unsigned PbDethSrcQp   = 25;  // 3 bytes

  // Global Route Header (LNH 3, 40 bytes after the LRH) [§1, §3.1]: the
  // transport headers and the MAD move by GrhBytes.
  localparam int unsigned GrhBytes      = 40;
  localparam int unsigned PbGrhVerTc    = 8;   // IPVer[7:4] TClass[7:4] in [3:0]
  localparam int unsigned PbGrhTcFlow   = 9;   // TClass[3:0] in [7:4], FlowLabel[19:16]
  localparam int unsigned PbGrhFlow     = 10;  // FlowLabel[15:0], 2 bytes
  localparam int unsigned PbGrhNxtHdr   = 14;  // must be 0x1B (IBA transport)
  localparam int unsigned PbGrhHopLmt   = 15;
  localparam logic [7:0]  GrhNxtHdrIba  = 8'h1B;

  // ---------------------------------------------------------------------------
  // Header constants [§1, §2]
  // ---------------------------------------------------------------------------
  localparam logic [3:0]  Vl15            = 4'hF;
  localparam logic [1:0]  LnhRaw          = 2'd0;
  localparam logic [1:0]  LnhIpv6         = 2'd1;
  localparam logic [1:0]  LnhIbaLocal     = 2'd2;
  localparam logic [1:0]  LnhIbaGlobal    = 2'd3;
  localparam logic [7:0]  OpUdSendOnly    = 8'h64;
  localparam logic [15:0] PermissiveLid   = 16'hFFFF;
  localparam logic [15:0] DefaultPkey     = 16'hFFFF;
  localparam logic [15:0] MulticastBase   = 16'hC000;
  localparam logic [31:0] Qp1Qkey         = 32'h8001_0000;

  // ---------------------------------------------------------------------------
  // MAD / SMP [§4, §7, §8]
  // ---------------------------------------------------------------------------
  // MAD-byte offsets (from the first MAD byte, packet byte 28).
  localparam int unsigned MbBaseVersion   = 0;
  localparam int unsigned MbMgmtClass     = 1;
  localparam int unsigned MbClassVersion  = 2;
  localparam int unsigned MbMethod        = 3;   // bit 7 = R
  localparam int unsigned MbStatus        = 4;   // DR: bit 15 = D
  localparam int unsigned MbHopPtr        = 6;
  localparam int unsigned MbHopCnt        = 7;
  localparam int unsigned MbTid           = 8;
  localparam int unsigned MbAttrId        = 16;
  localparam int unsigned MbAttrMod       = 20;
  localparam int unsigned MbMkey          = 24;
  localparam int unsigned MbDrSlid        = 32;
  localparam int unsigned MbDrDlid        = 34;
  localparam int unsigned MbSmpData       = 64;
  localparam int unsigned MbInitialPath   = 128;
  localparam int unsigned MbReturnPath    = 192;
  localparam int unsigned MaxPathHops     = 64;  // valid hop count 0..63 (C14-6)

  localparam logic [7:0] MadBaseVersion   = 8'h01;
  localparam logic [7:0] ClassSubnLid     = 8'h01;
  localparam logic [7:0] ClassSubnDr      = 8'h81;

  localparam logic [7:0] MethodGet        = 8'h01;
  localparam logic [7:0] MethodSet        = 8'h02;
  localparam logic [7:0] MethodSend       = 8'h03;
  localparam logic [7:0] MethodTrap       = 8'h05;
  localparam logic [7:0] MethodReport     = 8'h06;
  localparam logic [7:0] MethodTrapRepress = 8'h07;
  localparam logic [7:0] MethodGetResp    = 8'h81;
  localparam logic [7:0] MethodRespBit    = 8'h80;

  localparam logic [15:0] StatusBadVersion   = 16'h0004;
  localparam logic [15:0] StatusMethodUnsup  = 16'h0008;
  localparam logic [15:0] StatusAttrUnsup    = 16'h000C;
  localparam logic [15:0] StatusInvalidField = 16'h001C;
  localparam logic [15:0] SmpDirectionBit    = 16'h8000;

  localparam logic [15:0] AttrNotice      = 16'h0002;
  localparam logic [15:0] AttrNodeDesc    = 16'h0010;
  localparam logic [15:0] AttrNodeInfo    = 16'h0011;
  localparam logic [15:0] AttrSwitchInfo  = 16'h0012;
  localparam logic [15:0] AttrPortInfo    = 16'h0015;
  localparam logic [15:0] AttrSmInfo      = 16'h0020;

  // PortState encodings [§8]
  localparam logic [3:0] PortStateNoChange = 4'd0;
  localparam logic [3:0] PortStateDown     = 4'd1;
  localparam logic [3:0] PortStateInit     = 4'd2;
  localparam logic [3:0] PortStateArmed    = 4'd3;
  localparam logic [3:0] PortStateActive   = 4'd4;

  // ---------------------------------------------------------------------------
  // CRCs [§3]
  // ---------------------------------------------------------------------------
  // ICRC: CRC-32, polynomial 0x04C11DB7 processed reflected (0xEDB88320),
  // init 0xFFFFFFFF, final XOR 0xFFFFFFFF (zlib). Sent least-significant byte
  // first (hardware-validated). Covers LRH..payload with LRH.VL and
  // BTH.resv8a replaced by 1s.
  localparam logic [31:0] Crc32Init    = 32'hFFFF_FFFF;
  localparam logic [31:0] Crc32PolyRef = 32'hEDB8_8320;
  localparam logic [31:0] Crc32XorOut  = 32'hFFFF_FFFF;
  // CRC-32 register (no final XOR) after the covered bytes followed by their
  // ICRC, least-significant byte first: the same for every good packet, so a
  // receiver checks the ICRC without locating it (zlib.crc32 of the same
  // bytes = 0x2144DF1C = ~Crc32Residue, ibspec §3.1 "Residue check").
  localparam logic [31:0] Crc32Residue = 32'hDEBB_20E3;
  // VCRC: CRC-16, polynomial 0x100B processed reflected (0xD008), init 0xFFFF,
  // final XOR 0xFFFF. Covers LRH..ICRC, unmasked.
  localparam logic [15:0] Crc16Init    = 16'hFFFF;
  localparam logic [15:0] Crc16PolyRef = 16'hD008;
  localparam logic [15:0] Crc16XorOut  = 16'hFFFF;
  // VCRC wire byte order is unverified against hardware (ibspec §12 item 1).
  // This is the single place that decides it: 1 = least-significant byte
  // first (as the ICRC, and as the reference vectors were built).
  localparam bit VcrcLsbFirst = 1'b1;

  // One byte into a reflected CRC-32 state (no final XOR).
  function automatic logic [31:0] crc32_byte(logic [31:0] crc, logic [7:0] data);
    logic [31:0] c;
    c = crc ^ {24'h0, data};
    for (int i = 0; i < 8; i++) begin
      c = c[0] ? ((c >> 1) ^ Crc32PolyRef) : (c >> 1);
    end
    return c;
  endfunction

  // One byte into a reflected CRC-16 state (no final XOR).
  function automatic logic [15:0] crc16_byte(logic [15:0] crc, logic [7:0] data);
    logic [15:0] c;
    c = crc ^ {8'h0, data};
    for (int i = 0; i < 8; i++) begin
      c = c[0] ? ((c >> 1) ^ Crc16PolyRef) : (c >> 1);
    end
    return c;
  endfunction

  // ---------------------------------------------------------------------------
  // Parallel CRC update in matrix form. A CRC step over n bytes is linear in
  // {data, state}: next[o] = XOR of the inputs selected by row o of a constant
  // matrix. The matrix is computed at elaboration (a constant function over
  // crc*_byte), and the update is one XOR reduction per output bit, so
  // synthesis builds a balanced XOR tree per bit instead of the n-deep chain of
  // the byte-serial form (measured on ECP5-85F: 8 bytes of CRC-32 as a chain
  // 82 MHz / 783 LUT4, in matrix form 236 MHz / 530 LUT4).
  //
  // Columns: state bits 0..W-1, then data bits W..W+8*CrcMaxBytes-1 with
  // data byte j (the j-th byte in wire order) at data bits 8j..8j+7. Data
  // bytes at or above n have all-zero columns, so their logic disappears.
  // Use: localparam crc32_mat_t M = crc32_mat(8);  next = crc32_mul(M, s, d);
  // ---------------------------------------------------------------------------
  localparam int unsigned CrcMaxBytes = 32;  // a DataW 128 beat plus the 12 bytes after it

  typedef logic [32+8*CrcMaxBytes-1:0] crc32_row_t;
  typedef crc32_row_t [31:0]           crc32_mat_t;
  typedef logic [16+8*CrcMaxBytes-1:0] crc16_row_t;
  typedef crc16_row_t [15:0]           crc16_mat_t;

  function automatic crc32_mat_t crc32_mat(int unsigned nbytes);
    crc32_mat_t m;
    for (int unsigned o = 0; o < 32; o++) begin
      m[o] = '0;  // row by row: one '0 of the whole matrix is a 9 kbit literal
    end
    for (int unsigned i = 0; i < 32 + 8 * nbytes; i++) begin
      logic [31:0]              c;
      logic [8*CrcMaxBytes-1:0] d;
      c = '0;
      d = '0;
      if (i < 32) c[i] = 1'b1;
      else        d[i-32] = 1'b1;
      for (int unsigned j = 0; j < nbytes; j++) begin
        c = crc32_byte(c, d[8*j +: 8]);
      end
      for (int unsigned o = 0; o < 32; o++) begin
        m[o][i] = c[o];
      end
    end
    return m;
  endfunction

  function automatic logic [31:0] crc32_xor(crc32_mat_t m, logic [31:0] s,
                                            logic [8*CrcMaxBytes-1:0] d);
    logic [31:0] r;
    for (int unsigned o = 0; o < 32; o++) begin
      r[o] = ^(m[o] & {d, s});
    end
    return r;
  endfunction

  function automatic crc16_mat_t crc16_mat(int unsigned nbytes);
    crc16_mat_t m;
    for (int unsigned o = 0; o < 16; o++) begin
      m[o] = '0;
    end
    for (int unsigned i = 0; i < 16 + 8 * nbytes; i++) begin
      logic [15:0]              c;
      logic [8*CrcMaxBytes-1:0] d;
      c = '0;
      d = '0;
      if (i < 16) c[i] = 1'b1;
      else        d[i-16] = 1'b1;
      for (int unsigned j = 0; j < nbytes; j++) begin
        c = crc16_byte(c, d[8*j +: 8]);
      end
      for (int unsigned o = 0; o < 16; o++) begin
        m[o][i] = c[o];
      end
    end
    return m;
  endfunction

  function automatic logic [15:0] crc16_xor(crc16_mat_t m, logic [15:0] s,
                                            logic [8*CrcMaxBytes-1:0] d);
    logic [15:0] r;
    for (int unsigned o = 0; o < 16; o++) begin
      r[o] = ^(m[o] & {d, s});
    end
    return r;
  endfunction

  // ---------------------------------------------------------------------------
  // The same CRC step as the simulator evaluates it: table-driven, by
  // "slicing". The update is linear, so a group of bytes XORed into the low
  // end of the state steps as the XOR of one table entry per byte:
  // T[k][v] is the CRC register after byte v into a zero state and then k
  // zero bytes. CRC-32 takes 4 bytes a step (T[3][x0] ^ T[2][x1] ^
  // T[1][x2] ^ T[0][x3], x = state ^ the 4 bytes), CRC-16 2 bytes, and a
  // byte left over one (state >> 8 ^ T[0][state[7:0] ^ byte]). About n
  // table reads instead of one 288-bit parity per output bit (the simulator
  // evaluates the matrix form as written: a 5-word AND and a parity per bit).
  // The tables are constants computed from crc*_byte, like the matrices
  // (small: a constant function filling a large array is slow to elaborate).
  //
  // crc*_mul is the step every module calls: the matrix form in synthesis
  // (the XOR network above, unchanged), the table form in simulation. Both
  // forms are checked equal, and against a byte-serial CRC, by the
  // crc_step_tb unit harness.
  // ---------------------------------------------------------------------------
  typedef logic [31:0] crc32_tab_t [4*256];  // T[k][v] at 256k + v
  typedef logic [15:0] crc16_tab_t [2*256];

  function automatic crc32_tab_t crc32_tab_init();
    crc32_tab_t t;
    logic [31:0] c;
    for (int unsigned v = 0; v < 256; v++) begin
      c = crc32_byte(32'h0, 8'(v));
      for (int unsigned k = 0; k < 4; k++) begin
        t[256*k + v] = c;
        c = crc32_byte(c, 8'h00);
      end
    end
    return t;
  endfunction

  function automatic crc16_tab_t crc16_tab_init();
    crc16_tab_t t;
    logic [15:0] c;
    for (int unsigned v = 0; v < 256; v++) begin
      c = crc16_byte(16'h0, 8'(v));
      for (int unsigned k = 0; k < 2; k++) begin
        t[256*k + v] = c;
        c = crc16_byte(c, 8'h00);
      end
    end
    return t;
  endfunction

  localparam crc32_tab_t Crc32Tab = crc32_tab_init();
  localparam crc16_tab_t Crc16Tab = crc16_tab_init();

  // n bytes of d (byte j at bits 8j..8j+7) into state s, by the tables.
  function automatic logic [31:0] crc32_tab(int unsigned n, logic [31:0] s,
                                            logic [8*CrcMaxBytes-1:0] d);
    logic [31:0] c, x;
    c = s;
    for (int unsigned j = 0; j + 4 <= n; j += 4) begin
      x = c ^ d[8*j +: 32];
      c = Crc32Tab[768 + 32'(x[7:0])] ^ Crc32Tab[512 + 32'(x[15:8])] ^
          Crc32Tab[256 + 32'(x[23:16])] ^ Crc32Tab[32'(x[31:24])];
    end
    for (int unsigned j = n & ~32'd3; j < n; j++) begin
      c = (c >> 8) ^ Crc32Tab[32'(c[7:0] ^ d[8*j +: 8])];
    end
    return c;
  endfunction

  function automatic logic [15:0] crc16_tab(int unsigned n, logic [15:0] s,
                                            logic [8*CrcMaxBytes-1:0] d);
    logic [15:0] c, x;
    c = s;
    for (int unsigned j = 0; j + 2 <= n; j += 2) begin
      x = c ^ d[8*j +: 16];
      c = Crc16Tab[256 + 32'(x[7:0])] ^ Crc16Tab[32'(x[15:8])];
    end
    if (n % 2 == 1) begin
      c = (c >> 8) ^ Crc16Tab[32'(c[7:0] ^ d[8*(n-1) +: 8])];
    end
    return c;
  endfunction

  // The step over n bytes; m must be crc32_mat(n) (crc16_mat(n)).
`ifdef SYNTHESIS
  function automatic logic [31:0] crc32_mul(crc32_mat_t m, int unsigned n, logic [31:0] s,
                                            logic [8*CrcMaxBytes-1:0] d);
    return crc32_xor(m, s, d);
  endfunction

  function automatic logic [15:0] crc16_mul(crc16_mat_t m, int unsigned n, logic [15:0] s,
                                            logic [8*CrcMaxBytes-1:0] d);
    return crc16_xor(m, s, d);
  endfunction
`else
  /* verilator lint_off UNUSEDSIGNAL */
  // (m is the synthesis form's; the tables give the same step)
  function automatic logic [31:0] crc32_mul(crc32_mat_t m, int unsigned n, logic [31:0] s,
                                            logic [8*CrcMaxBytes-1:0] d);
    return crc32_tab(n, s, d);
  endfunction

  function automatic logic [15:0] crc16_mul(crc16_mat_t m, int unsigned n, logic [15:0] s,
                                            logic [8*CrcMaxBytes-1:0] d);
    return crc16_tab(n, s, d);
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */
`endif

  // The ICRC mask: packet byte `idx` as the ICRC sees it (VL and resv8a as 1s).
  function automatic logic [7:0] icrc_mask_byte(int unsigned idx, logic [7:0] data);
    logic [7:0] b;
    b = data;
    if (idx == PbLrhVlLver) b = data | 8'hF0;
    if (idx == PbBthResv8a) b = 8'hFF;
    return b;
  endfunction

  // ---------------------------------------------------------------------------
  // Register map (word addresses of the port register interface)
  // ---------------------------------------------------------------------------
  localparam logic [7:0] RegId           = 8'h00;  // RO 0x564C3135 "VL15"
  localparam logic [7:0] RegPortLid      = 8'h01;  // RW [15:0]
  localparam logic [7:0] RegPortLmc      = 8'h02;  // RW [2:0]
  localparam logic [7:0] RegMasterSmLid  = 8'h03;  // RW [15:0]
  localparam logic [7:0] RegMasterSmSl   = 8'h04;  // RW [3:0]
  localparam logic [7:0] RegPortState    = 8'h05;  // RW [3:0], reset Init
  localparam logic [7:0] RegPortNum      = 8'h06;  // RO
  localparam logic [7:0] RegCaps         = 8'h07;  // RO [7:0] DataW/8, [15:8] RX depth, [23:16] TX depth
  localparam logic [7:0] RegRxDepth      = 8'h08;  // RW VL15 RX slots in use, 1..Vl15RxDepth
  localparam logic [7:0] RegCtrClearSel  = 8'h0E;  // WO: clears counter i for every set bit i
  localparam logic [7:0] RegCtrClear     = 8'h0F;  // WO: any write clears every counter
  // P_Key table of the port (gsi_rx_check; 0x40..0x4F reserved for it):
  // entry RegPkeyIdx is read/written through RegPkeyData; a write of
  // RegPkeyData also steps RegPkeyIdx by 1 (a 32-entry block in 33 writes).
  localparam logic [7:0] RegPkeyCap      = 8'h40;  // RO entries (= NodeInfo.PartitionCap)
  localparam logic [7:0] RegPkeyIdx      = 8'h41;  // RW [7:0] entry index
  localparam logic [7:0] RegPkeyData     = 8'h42;  // RW [15:0] entry RegPkeyIdx (write: then index + 1)

  localparam int unsigned NumCtrs = 27;
  typedef enum logic [4:0] {
    CtrRxPkts       = 5'd0,   // every packet seen on the wire (tlast)
    CtrRxVcrcErr    = 5'd1,   // VCRC mismatch
    CtrRxLverErr    = 5'd2,   // LVer != 0
    CtrRxLnhErr     = 5'd3,   // LNH not 2 or 3
    CtrRxLenErr     = 5'd4,   // PktLen != length, or shorter than LRH+BTH+ICRC
    CtrRxDataPkts   = 5'd5,   // good packets on a data VL (to the data RX port)
    CtrVl15Dropped  = 5'd6,   // good VL15 packet found the VL15 RX buffer full
    CtrSmiIcrcErr   = 5'd7,   // SMP ICRC mismatch
    CtrSmiBadHdr    = 5'd8,   // SMP validation (LNH, opcode, TVer, DestQP, PktLen, BaseVersion, class)
    CtrSmiLidErr    = 5'd9,   // DLID not ours, permissive DLID/SLID on a LID-routed SMP
    CtrSmiDrDiscard = 5'd10,  // directed-route receive rules said discard
    CtrSmiPortDown  = 5'd11,  // SMP arrived while PortState = Down
    CtrSmiToSma     = 5'd12,  // SMPs delivered to the SMA interface
    CtrSmiToSm      = 5'd13,  // SMPs delivered to the SM interface
    CtrSqDrDiscard  = 5'd14,  // directed-route send rules said discard
    CtrSqLocal      = 5'd15,  // DR SMP with hop count 0: local, never on the wire
    CtrSqPkts       = 5'd16,  // SMPs the SMI send engine put into the VL15 TX buffer
    CtrTxVl15Pkts   = 5'd17,  // VL15 packets sent on the wire
    CtrTxDataPkts   = 5'd18,  // data-VL packets sent on the wire
    // GSI receive checks on the data VLs (gsi_rx_check); the packets they
    // count are also in CtrRxDataPkts (which counts the link layer's verdict)
    CtrDataIcrcErr  = 5'd19,  // data-VL packet with an ICRC mismatch
    CtrGsiBadHdr    = 5'd20,  // data-VL packet: DestQP 0, or a QP1 GMP failing validation
    CtrGsiGmps      = 5'd21,  // good GMPs (QP1) delivered to the host
    // IBA PortRcvData / PortXmitData: 4-byte words (LRH.PktLen, LRH..ICRC)
    CtrRxWords      = 5'd22,  // every packet that passed ib_link_rx's checks, VL15 and data
    CtrTxWords      = 5'd23,  // every packet sent on the wire (not those the link gate discarded)
    // M_Key check (smi_mkey_chk): SMPs for the SMA dropped for a bad M_Key
    CtrMkeyViol     = 5'd24,
    // QP1 key checks (gsi_rx_check): PortInfo P_KeyViolations / Q_KeyViolations
    CtrPkeyViol     = 5'd25,  // QP1 packet whose P_Key matches no P_Key table entry
    CtrQkeyViol     = 5'd26   // QP1 packet whose Q_Key is not 0x80010000
  } ctr_e;
  localparam logic [7:0] RegCtrBase = 8'h10;  // counter i at RegCtrBase + i, RO; writable in simulation (test-only, CtrRam = 0)
  // The counters must fit below the board's registers (0xC0..0xFF, ib_ca_board)
  // and a RegCtrClearSel word must name every one of them.
  localparam int unsigned RegCtrEnd = 32'(RegCtrBase) + NumCtrs;  // first address after them
  // Width of a counter's add amount (ib_port_regs add_i): one PktLen.
  localparam int unsigned CtrAddW   = 11;

  localparam logic [31:0] RegIdValue = 32'h564C_3135;

  // The directed-route receive rule that decided an SMP (ibspec §5, the
  // C14-… IDs of the engines' comments), for the rules' cover points
  // (docs/coverage.md): C14-6, C14-9:1..5 (D = 0), C14-13:1..5 (D = 1).
  typedef enum logic [3:0] {
    DrRuleNone    = 4'd0,
    DrRuleC14_6   = 4'd1,
    DrRuleC14_9_1 = 4'd2,
    DrRuleC14_9_2 = 4'd3,
    DrRuleC14_9_3 = 4'd4,
    DrRuleC14_9_4 = 4'd5,
    DrRuleC14_9_5 = 4'd6,
    DrRuleC14_13_1 = 4'd7,
    DrRuleC14_13_2 = 4'd8,
    DrRuleC14_13_3 = 4'd9,
    DrRuleC14_13_4 = 4'd10,
    DrRuleC14_13_5 = 4'd11
  } dr_rule_e;

  // Why gsi_rx_check discarded a data-VL packet (its out_reason_o / the
  // tops' drx_reason_o, valid with tlast): the host builds Trap 257/258
  // from a P_Key/Q_Key discard.
  typedef enum logic [2:0] {
    GsiOk       = 3'd0,  // not discarded
    GsiLinkDrop = 3'd1,  // the link layer discarded it (VCRC, length, LVer, LNH, ...)
    GsiIcrcErr  = 3'd2,  // ICRC mismatch
    GsiBadHdr   = 3'd3,  // header validation (DestQP 0, not a well-formed GMP)
    GsiPkeyViol = 3'd4,  // QP1: P_Key matches no table entry
    GsiQkeyViol = 3'd5   // QP1: Q_Key not 0x80010000
  } gsi_reason_e;

  // M_Key state of the port (smi_mkey_chk), RegMkeyBase + idx, idx 0..7:
  // 0 M_Key[31:0] (staged), 1 M_Key[63:32] (commits both), 2 ProtectBits,
  // 3 LeasePeriod (s), 4 cycles per lease second, 5 M_KeyViolations,
  // 6 lease status (RO: [16] running, [15:0] seconds elapsed)
  localparam logic [7:0] RegMkeyBase  = 8'h30;
  localparam logic [7:0] RegMkeyEnd   = 8'h38;  // first address after them

  /* verilator lint_on UNUSEDPARAM */

  // ---------------------------------------------------------------------------
  // SMI receive meta: smi_rq -> VL15 RX ib_pkt_fifo -> smi_rx_dispatch
  // (docs/arch.md "RX meta"; field order = packing order, MSB first)
  // ---------------------------------------------------------------------------
  typedef struct packed {
    logic [15:0] slid;        // LRH SLID
    logic [15:0] dlid;        // LRH DLID
    logic [3:0]  sl;          // LRH SL
    logic [7:0]  port;        // receiving port number
    logic [7:0]  mgmt_class;  // MAD MgmtClass (0x01 or 0x81)
    logic [6:0]  hop_ptr;     // hop pointer after the DR rules (0 for class 0x01)
    logic [6:0]  hop_cnt;     // hop count (0 for class 0x01)
    logic        to_sm;       // 1: SM interface, 0: SMA interface
    logic        rp_we;       // write ReturnPath[rp_idx] := rp_val
    logic [5:0]  rp_idx;
    logic [7:0]  rp_val;
  } smi_rx_meta_t;

  // ---------------------------------------------------------------------------
  // SMI engines' shared parts (smi_rx_core with smi_rx_fields, smi_icrc_chk,
  // smi_mad_align; smi_tx_ctrl with smi_tx_emit; smi_tx_fields; used by
  // smi_rq/smi_sq and sw_smi_rq/sw_smi_sq)
  // ---------------------------------------------------------------------------
  // Waiver: a build of sw_port_tile alone has no SMI engine.
  /* verilator lint_off UNUSEDPARAM */
  // Receive side: packet byte offset of a beat, 9 bits, saturating (every
  // offset the engines compare lies below 496, the saturation at DataB 16).
  localparam int unsigned SmiRxPosW = 9;

  // Header fields picked up by smi_rx_fields. Fields the checks only compare
  // with a constant are kept as per-byte compare flags, taken when their
  // byte is (exactly as comparing the held byte at tlast: a flag, like a
  // byte, holds until its byte comes again).
  typedef struct packed {
    logic [3:0]  sl;
    logic [1:0]  lnh;
    logic [15:0] dlid;
    logic [1:0]  pktlen_ok;   // PktLen [10:8], [7:0] = SmpPktLen's
    logic [15:0] slid;
    logic        opcode_ok;   // BTH OpCode = UD SEND Only
    logic        tver_ok;     // BTH TVer = 0
    logic [2:0]  destqp_zero; // BTH DestQP bytes = 0
    logic        base_ver_ok; // MAD BaseVersion = 1
    logic [7:0]  mgmt_class;
    logic [7:0]  method;
    logic        dir;         // DR D bit (status bit 15)
    logic [7:0]  hop_ptr;
    logic [7:0]  hop_cnt;
    logic [1:0]  attr_sminfo; // AttributeID bytes = SMInfo's
    logic [1:0]  dr_slid_ff;  // DrSLID bytes = 0xFF (permissive)
    logic [1:0]  dr_dlid_ff;  // DrDLID bytes = 0xFF
    logic [15:0] dr_slid;     // DrSLID
    logic [15:0] dr_dlid;     // DrDLID
    logic [7:0]  rp_hc;       // ReturnPath[hop_cnt]
    logic        rp_port;     // ReturnPath[hop_cnt] = rp_cmp_i when taken
  } smi_rx_hdr_t;

  // after reset every byte reads 0: the flags of a zero byte (rp_port 0)
  localparam smi_rx_hdr_t SmiRxHdrReset = '{
    tver_ok:     1'b1,
    destqp_zero: 3'b111,
    attr_sminfo: {AttrSmInfo[15:8] == 8'd0, AttrSmInfo[7:0] == 8'd0},
    default:     '0
  };
  /* verilator lint_on UNUSEDPARAM */

  // Send side: the send engines' FSM (smi_tx_emit builds the beat of each
  // state).
  typedef enum logic [1:0] {
    TxIdle,
    TxHdr,
    TxMad,
    TxTail
  } smi_tx_state_e;

  // MAD fields picked up by smi_tx_fields for the send engines' directed-
  // route rules: each whole and, where a rule only compares it, as a compare
  // flag (taken with its byte; a CA keeps the flags, a switch the bytes).
  typedef struct packed {
    logic [7:0]  mgmt_class;
    logic        dir;         // DR D bit (status bit 15)
    logic [7:0]  hop_ptr;
    logic [7:0]  hop_cnt;
    logic [15:0] dr_slid;     // DrSLID
    logic [15:0] dr_dlid;     // DrDLID
    logic [1:0]  dr_slid_ff;  // DrSLID bytes = 0xFF (permissive)
    logic [1:0]  dr_dlid_ff;  // DrDLID bytes = 0xFF
    logic        ip1_port;    // InitialPath[1] = the compare port
    logic [7:0]  path;        // the path byte at the engine's MAD offset
    logic        path_port;   // that byte = the compare port
  } smi_tx_mad_t;

  // LRH/BTH/DETH of an SMP sent by an SMI send engine, byte i at bits
  // 8*i +: 8, padded with zeros to SmpHdrPad bytes (the header beats plus
  // the beat where the MAD starts, at every DataW).
  /* verilator lint_off UNUSEDPARAM */
  localparam int unsigned SmpHdrPad = 32;
  /* verilator lint_on UNUSEDPARAM */
  function automatic logic [8*SmpHdrPad-1:0] smp_hdr(logic [15:0] dlid, logic [15:0] slid,
                                                      logic [3:0] sl, logic [23:0] psn);
    logic [8*SmpHdrPad-1:0] h;
    h = '0;
    h[8*PbLrhVlLver +: 8]       = {Vl15, 4'h0};
    h[8*PbLrhSlLnh +: 8]        = {sl, 2'b00, LnhIbaLocal};
    h[8*PbLrhDlid +: 8]         = dlid[15:8];
    h[8*(PbLrhDlid + 1) +: 8]   = dlid[7:0];
    h[8*PbLrhPktLen +: 8]       = {5'd0, 3'(SmpPktLen >> 8)};
    h[8*(PbLrhPktLen + 1) +: 8] = 8'(SmpPktLen);
    h[8*PbLrhSlid +: 8]         = slid[15:8];
    h[8*(PbLrhSlid + 1) +: 8]   = slid[7:0];
    h[8*PbBthOpcode +: 8]       = OpUdSendOnly;
    h[8*PbBthPkey +: 8]         = DefaultPkey[15:8];
    h[8*(PbBthPkey + 1) +: 8]   = DefaultPkey[7:0];
    h[8*PbBthPsn +: 8]          = psn[23:16];
    h[8*(PbBthPsn + 1) +: 8]    = psn[15:8];
    h[8*(PbBthPsn + 2) +: 8]    = psn[7:0];
    // flags, resv8a, DestQP, A, Q_Key, SrcQP: 0
    return h;
  endfunction

  // ===========================================================================
  // Switch (ib_switch_top, docs/fabric.md) — constants and types used only by
  // the switch modules (sw_*).
  // ===========================================================================
  // Waiver: a build of the CA alone uses none of these constants.
  /* verilator lint_off UNUSEDPARAM */
  // Register map (16-bit word addresses)
  localparam logic [15:0] SwRegId          = 16'h0000;  // RO 0x564C5357 "VLSW"
  localparam logic [15:0] SwRegPort0Lid    = 16'h0001;
  localparam logic [15:0] SwRegMasterSmLid = 16'h0003;
  localparam logic [15:0] SwRegMasterSmSl  = 16'h0004;
  localparam logic [15:0] SwRegNumPorts    = 16'h0006;
  localparam logic [15:0] SwRegNumPortsMax = 16'h0007;
  localparam logic [15:0] SwRegLinearTop   = 16'h0008;
  localparam logic [15:0] SwRegPortChange  = 16'h0009;
  localparam logic [15:0] SwRegLftDepth    = 16'h000A;
  localparam logic [15:0] SwRegCtrClear    = 16'h000F;
  localparam logic [15:0] SwRegMkeyBase    = 16'h0010;  // + idx 0..7: port 0's M_Key state (smi_mkey_chk)
  // Port 0's P_Key table (its GMP path's gsi_rx_check; 0x0020..0x002F
  // reserved for it), accessed as a CA port's RegPkey*: index, data (a write
  // steps the index), size.
  localparam logic [15:0] SwRegPkeyCap     = 16'h0020;  // RO entries (= NodeInfo.PartitionCap)
  localparam logic [15:0] SwRegPkeyIdx     = 16'h0021;  // RW [7:0]
  localparam logic [15:0] SwRegPkeyData    = 16'h0022;  // RW [15:0] entry SwRegPkeyIdx
  localparam int unsigned SwPkeyEntries    = 8;         // switch NodeInfo.PartitionCap (ibsim: 8)
  localparam logic [15:0] SwRegPortState   = 16'h0100;  // + p
  // Counters (SwRegCtrBase, SwRegCtr0GBase windows): RO; writable in simulation (test-only)
  localparam logic [15:0] SwRegCtrBase     = 16'h0200;  // + 16p + c
  localparam logic [15:0] SwRegCtr0GBase   = 16'h0700;  // + c: port-0 GMP counter bank (after 65 ports of counters)
  localparam logic [15:0] SwRegCtrClrSel   = 16'h0800;  // + p: clear the counters of port p named by a bitmask
  localparam logic [15:0] SwRegLftBase     = 16'h1000;  // + w (entries 4w..4w+3)
  localparam logic [31:0] SwRegIdValue     = 32'h564C_5357;
  localparam int unsigned SwNumCtrs        = 16;        // counter slots per port
  // A counter event: 0..2047 per cycle (packet events 0..3, word counters a
  // PktLen, 11 bits).
  localparam int unsigned SwEvW            = 11;
  typedef logic [SwEvW-1:0] sw_ev_t;

  // Counters of an external port p (0x0200 + 16p + c)
  typedef enum logic [3:0] {
    SwCtrRxPkts       = 4'd0,   // every packet seen on the wire
    SwCtrRxVcrcErr    = 4'd1,   // link: VCRC mismatch (dropped)
    SwCtrRxLenErr     = 4'd2,   // link: length error (dropped)
    SwCtrRxLverErr    = 4'd3,   // link: LVer != 0 (dropped)
    SwCtrRxLnhErr     = 4'd4,   // link: LNH not 2 or 3 (dropped)
    SwCtrVl15Dropped  = 4'd5,   // good VL15 packet: VL15 input buffer full or > 288 B
    SwCtrDataDropped  = 4'd6,   // good data packet: data input buffer full or > DataSlotBytes
    SwCtrLinkDownDrop = 4'd7,   // packet cut by link_up_i falling
    SwCtrNoRoute      = 4'd8,   // DLID 0/multicast, LFT 0xFF or > NumPorts, DLID > LinearFDBTop, LFT 0 for data not to the port-0 LID
    SwCtrLoopDrop     = 4'd9,   // LFT egress = input port
    SwCtrStateDrop    = 4'd10,  // PortState gating (VL15: egress Down; data: input or egress not Active)
    SwCtrFwdPkts      = 4'd11,  // packets sent from this input to an output (port 0 included)
    SwCtrTxVl15Pkts   = 4'd12,  // VL15 packets sent on the wire
    SwCtrTxDataPkts   = 4'd13,  // data-VL packets sent on the wire
    SwCtrRxWords      = 4'd14,  // sum of LRH.PktLen of every packet that passed the link checks
    SwCtrTxWords      = 4'd15   // sum of LRH.PktLen of every packet counted in TxVl15Pkts/TxDataPkts
  } sw_ctr_e;

  // Counters of port 0 (the switch SMI), same address scheme with p = 0
  typedef enum logic [3:0] {
    SwCtr0ToSma       = 4'd0,   // SMPs delivered to the SMA interface
    SwCtr0ToSm        = 4'd1,   // SMPs delivered to the SM interface
    SwCtr0IcrcErr     = 4'd2,   // SMP ICRC mismatch
    SwCtr0BadHdr      = 4'd3,   // SMP validation failed
    SwCtr0LidErr      = 4'd4,   // LID check failed
    SwCtr0DrDiscard   = 4'd5,   // DR receive rules said discard
    SwCtr0DrForwarded = 4'd6,   // DR SMPs handed to the send engine to be forwarded
    SwCtr0PortDown    = 4'd7,   // SMP arrived on a port whose PortState is Down
    SwCtr0Vl15Dropped = 4'd8,   // SMI receive buffer full
    SwCtr0SqPkts      = 4'd9,   // SMPs the send engine put into the port-0 input buffer
    SwCtr0SqDrDiscard = 4'd10,  // send rules / egress check said discard (hc >= 64, egress 0, > N, Down)
    SwCtr0SqLocal     = 4'd11,  // DR SMP for the local node after the send rules, not sent
    SwCtr0NoRoute     = 4'd12,  // port-0 packet: LFT no route
    SwCtr0LoopDrop    = 4'd13,  // port-0 packet: LFT egress = 0
    SwCtr0StateDrop   = 4'd14,  // port-0 packet: PortState gating (VL15: egress Down; GMP: egress not Active)
    SwCtr0MkeyViol    = 4'd15   // SMP for the switch SMA dropped for a bad M_Key (smi_mkey_chk)
  } sw_ctr0_e;

  // Port 0, the GMP (QP1) path: a second bank (SwRegCtr0GBase + c)
  typedef enum logic [3:0] {
    SwCtr0gRxPkts     = 4'd0,   // data packets the crossbar delivered to the GMP receive path
    SwCtr0gIcrcErr    = 4'd1,   // gsi_rx_check: ICRC mismatch
    SwCtr0gBadHdr     = 4'd2,   // gsi_rx_check: GMP validation failed
    SwCtr0gGmps       = 4'd3,   // gsi_rx_check: GMPs passed to gmp_rx_*
    SwCtr0gTxPkts     = 4'd4,   // gmp_tx packets taken into the port-0 data buffer
    SwCtr0gTxDrop     = 4'd5,   // gmp_tx packets dropped: VL15, or longer than 288 bytes
    SwCtr0gRxWords    = 4'd6,   // sum of PktLen of the packets counted in RxPkts
    SwCtr0gTxWords    = 4'd7,   // sum of PktLen of the packets counted in TxPkts
    SwCtr0gPkeyViol   = 4'd8,   // gsi_rx_check: QP1 P_Key matches no port-0 table entry
    SwCtr0gQkeyViol   = 4'd9    // gsi_rx_check: QP1 Q_Key not 0x80010000
  } sw_ctr0g_e;
  /* verilator lint_on UNUSEDPARAM */

  // Receive meta of the switch SMI: sw_smi_rq -> RX buffer -> dispatch/forward
  typedef struct packed {
    smi_rx_meta_t base;       // as on a CA; port = ingress port
    logic         fwd;        // 1: forward through the send engine
    logic         fwd_lft;    // forward by the LFT (LID-routed segment), else by the path
    logic [15:0]  fwd_dlid;   // LRH DLID of the forwarded SMP
    logic [15:0]  fwd_slid;   // LRH SLID of the forwarded SMP
  } sw_rx_meta_t;

  // Route of a packet in the port-0 input buffer (from the send engine)
  typedef struct packed {
    logic        lft;         // 1: route by LFT[dlid]; 0: egress port
    logic [7:0]  egress;
    logic [15:0] dlid;
  } sw_route_meta_t;

endpackage
