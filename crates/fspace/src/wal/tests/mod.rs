//! The log's tests that need its insides: the power-cut model of storage
//! and the run that cuts it at every call, the sync-method fallbacks at
//! open, and faults injected through the storage seam (on the filesystem
//! matrix, and before a power cut on loop images).

mod fallback;
mod faults;
mod killed_rename;
mod model;
mod power_cut;
