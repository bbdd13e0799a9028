//! What says the RTL is right: the reference models of the CA port and
//! the switch (`refmodel`, with the switch's generator, scoreboard and
//! soak), the CA port's scoreboard (`scoreboard`), its fault generator and
//! soak (`faults`), the spine regression's scenarios (`scenario`), the
//! fuzzers of the parsers and the server (`fuzz`, `hostile`), and the RTL's
//! coverage, merged and reported (`coverage`).

pub mod coverage;
pub mod faults;
pub mod fuzz;
pub mod hostile;
pub mod refmodel;
pub mod rtl_replay;
pub mod scenario;
pub mod scoreboard;
pub mod waivers;
