// The register face of a port's P_Key table (the table itself is in
// gsi_rx_check): an index register, a data register that reads and writes
// entry <index> (a write then steps the index, so a 32-entry P_KeyTable block
// takes 33 writes), and the table size. ib_ca_top uses it at its 8-bit
// register addresses (RegPkey*), ib_switch_top for port 0 at its 16-bit ones
// (SwRegPkey*).
module pkey_regs #(
  parameter int unsigned          AddrW    = 8,
  parameter logic [AddrW-1:0]     CapAddr  = '0,  // RO: Entries
  parameter logic [AddrW-1:0]     IdxAddr  = '0,  // RW [7:0]: the entry index
  parameter logic [AddrW-1:0]     DataAddr = '0,  // RW [15:0]: entry <index>
  parameter int unsigned          Entries  = 64
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic             reg_we_i,
  input  logic [AddrW-1:0] reg_addr_i,
  input  logic [7:0]       reg_wdata_i,   // the index bits of the write data
  output logic             sel_o,         // reg_addr_i names one of the three
  output logic [31:0]      rdata_o,       // their read data (0 when !sel_o)
  // to the table in gsi_rx_check
  output logic             pkey_we_o,
  output logic [7:0]       pkey_idx_o,
  input  logic [15:0]      pkey_rdata_i
);

  logic [7:0] idx_q;

  assign pkey_we_o  = reg_we_i && (reg_addr_i == DataAddr);
  assign pkey_idx_o = idx_q;
  assign sel_o      = reg_addr_i == CapAddr || reg_addr_i == IdxAddr ||
                      reg_addr_i == DataAddr;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      idx_q <= '0;
    end else if (reg_we_i && reg_addr_i == IdxAddr) begin
      idx_q <= reg_wdata_i;
    end else if (pkey_we_o) begin
      idx_q <= idx_q + 8'd1;
    end
  end

  always_comb begin
    rdata_o = '0;
    if (reg_addr_i == CapAddr) rdata_o = 32'(Entries);
    if (reg_addr_i == IdxAddr) rdata_o = {24'h0, idx_q};
    if (reg_addr_i == DataAddr) rdata_o = {16'h0, pkey_rdata_i};
  end

endmodule
