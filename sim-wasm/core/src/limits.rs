//! Size limits of a scenario that more than the file format needs: JSON Patch application (`patch`) bounds a
//! patched document by them, and the format (`scenario`) re-exports them, so neither imports the other for them.

/// Largest scenario file accepted [bytes]; bigger inputs are refused before parsing.
pub const MAX_SCENARIO_BYTES: usize = 4 << 20;
/// Most physical CPUs of a host.
pub const MAX_PCPUS: u32 = 256;
/// Most vCPUs over all domains.
pub const MAX_TOTAL_VCPUS: u32 = 4096;
