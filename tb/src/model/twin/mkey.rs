//! The M_Key state of a port (`rtl/smi_mkey_chk.sv`), shared by the CA
//! twin and port 0 of the switch twin: the key, protect bits, lease period,
//! tick, violation count and the lease timer, kept as the cycle it started
//! (evaluated when read or when it is due to expire), not counted per cycle.

use crate::model::regmap::reg::MKEY_TICK_RESET as TICK_RESET;

/// The port's M_Key state (smi_mkey_chk).
#[derive(Debug, Clone)]
pub(crate) struct Mkey {
    pub(crate) key: u64,
    pub(crate) lo_stage: u32,
    pub(crate) prot: u8,
    pub(crate) lease: u16,
    pub(crate) tick: u32,
    pub(crate) viols: u16,
    /// The lease timer, while it runs: (cycle, cyc_q, sec_q in that cycle).
    pub(crate) run: Option<(u64, u64, u16)>,
}

impl Mkey {
    pub(crate) fn new() -> Self {
        Mkey {
            key: 0,
            lo_stage: 0,
            prot: 0,
            lease: 0,
            tick: TICK_RESET,
            viols: 0,
            run: None,
        }
    }
    pub(crate) fn tick_m1(&self) -> u64 {
        u64::from(self.tick.saturating_sub(1))
    }
    /// (cyc_q, sec_q) of the running timer in cycle `t`: cyc_q counts up
    /// to the tick's last cycle, then sec_q counts (saturating).
    pub(crate) fn timer(&self, t: u64) -> (u64, u16) {
        match self.run {
            None => (0, 0),
            Some((base, cyc0, sec0)) => {
                let n = t - base;
                let d = self.tick_m1().saturating_sub(cyc0);
                if n <= d {
                    (cyc0 + n, sec0)
                } else {
                    let m = n - d - 1;
                    let p = self.tick_m1() + 1;
                    let sec = (u64::from(sec0) + 1 + m / p).min(0xFFFF) as u16;
                    (m % p, sec)
                }
            }
        }
    }
    /// The running timer counted from its state in cycle `t` (the same
    /// timer: [`Mkey::timer`] and [`Mkey::expiry`] then count from `t`).
    fn rebase(&mut self, t: u64) {
        if self.run.is_some() {
            let (cyc, sec) = self.timer(t);
            self.run = Some((t, cyc, sec));
        }
    }
    /// The cycle in which the running lease expires (its edge clears the
    /// protect bits and stops the timer): the end of a second with sec_q
    /// at least the period - 1.
    pub(crate) fn expiry(&self) -> Option<u64> {
        let (base, cyc0, sec0) = self.run?;
        if self.lease == 0 {
            return None;
        }
        let d = self.tick_m1().saturating_sub(cyc0);
        let lm1 = u64::from(self.lease - 1);
        let more = lm1.saturating_sub(u64::from(sec0));
        Some(base + d + more * (self.tick_m1() + 1))
    }
    pub(crate) fn read(&self, idx: u8, t: u64) -> u32 {
        match idx {
            0 => self.key as u32,
            1 => (self.key >> 32) as u32,
            2 => u32::from(self.prot),
            3 => u32::from(self.lease),
            4 => self.tick,
            5 => u32::from(self.viols),
            6 => {
                let (_, sec) = self.timer(t);
                (u32::from(self.run.is_some()) << 16) | u32::from(sec)
            }
            _ => 0,
        }
    }
    /// A register write of M_Key register `idx` in cycle `t`.
    pub(crate) fn write(&mut self, idx: u8, w: u32, t: u64) {
        match idx {
            0 => self.lo_stage = w,
            1 => self.key = (u64::from(w) << 32) | u64::from(self.lo_stage),
            2 => self.prot = (w & 3) as u8,
            3 => {
                // the running timer expires at the end of the first second
                // from the next cycle on with sec_q >= the new period - 1
                // (`expire`, rtl/smi_mkey_chk.sv:142-143): counted from its
                // state of the next cycle, also when the new period has
                // already passed
                self.rebase(t + 1);
                self.lease = w as u16;
            }
            4 => {
                // the running timer counts on from its state of the next
                // cycle with the new tick
                self.rebase(t + 1);
                self.tick = w;
            }
            5 => self.viols = w as u16,
            _ => {}
        }
    }

    /// The verdict on the SMA-bound MAD `mad` against this cycle's state
    /// (rtl/smi_mkey_chk.sv): (violation, masked Get, a checked method
    /// with a valid key: stops the lease timer).
    pub(crate) fn verdict(&self, mad: &[u8]) -> (bool, bool, bool) {
        let method = mad.get(3).copied().unwrap_or(0);
        let key = mad
            .get(24..32)
            .and_then(|k| <[u8; 8]>::try_from(k).ok())
            .map_or(0, u64::from_be_bytes);
        let checked = matches!(method, 0x01 | 0x02 | 0x07);
        let eq = key == self.key;
        let key_ok = self.key == 0 || eq;
        let viol = checked && !key_ok && (method != 0x01 || self.prot & 2 != 0);
        let mask = method == 0x01 && !eq && self.prot == 1;
        (viol, mask, checked && key_ok)
    }

    /// The SMA takes the tlast beat of a MAD in cycle `t` with the verdict
    /// `viol` / `stop`: count a violation, start or stop the lease timer.
    /// A stop in the cycle the lease expires still clears the protect bits
    /// (`expire` does not look at `stop`, rtl/smi_mkey_chk.sv:143, 213-215).
    pub(crate) fn handshake(&mut self, t: u64, viol: bool, stop: bool) {
        if viol {
            self.viols = self.viols.saturating_add(1);
            if self.run.is_none() && self.lease != 0 {
                self.run = Some((t + 1, 0, 0));
                return;
            }
        }
        if stop {
            self.expire(t);
            self.run = None;
        }
    }

    /// The edge of cycle `t`: a lease expiring now clears the protect bits
    /// and stops the timer.
    pub(crate) fn expire(&mut self, t: u64) {
        if self.expiry() == Some(t) {
            self.run = None;
            self.prot = 0;
        }
    }
}
