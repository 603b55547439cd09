//! The log's tests that need its insides: the power-cut model of storage
//! and the run that cuts it at every call, the sync-method fallbacks at
//! open, and faults injected through the storage seam.

mod fallback;
mod model;
mod power_cut;
