//! Reliability: property tests, forged arguments, hostile input, faults and load.
//!
//! One test binary for the folder, one module per file.

mod faults;
mod forgery;
mod heap;
mod hostile;
mod hostile_depth;
mod hostile_values;
mod load;
mod props;
