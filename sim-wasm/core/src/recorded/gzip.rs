//! gzip-compressed traces, decompressed with a bound: the readers need to seek (two passes, xentrace's per-CPU
//! windows), so a `.gz` trace is expanded into memory, and a small file can expand to gigabytes (a gzip of zeros
//! grows about a thousand times). The stream is read a chunk at a time and stops at [`MAX_GUNZIP_BYTES`], or
//! once past [`RATIO_FLOOR`] at more than [`MAX_GUNZIP_RATIO`] times the compressed size, with a message saying
//! which rule it broke. The CLI, Python and the page all decompress here.

use super::NotATrace;
use std::io::Read;

/// Most bytes a compressed trace may expand to (a trace passed uncompressed is read streaming, in any size).
pub const MAX_GUNZIP_BYTES: u64 = 512 << 20;
/// Most a compressed trace may expand by, once past [`RATIO_FLOOR`] (real traces compress 5 to 20 times).
pub const MAX_GUNZIP_RATIO: u64 = 200;
/// Below this expanded size the ratio is not checked [bytes].
pub const RATIO_FLOOR: u64 = 16 << 20;
/// Bytes decompressed at a time.
const CHUNK: usize = 1 << 16;

/// Whether a file starts with gzip's magic number.
pub fn is_gzip(head: &[u8]) -> bool {
    head.starts_with(&[0x1f, 0x8b])
}

/// The bytes a gzip stream (one member or several, as `cat a.gz b.gz` makes) of `compressed` bytes expands to,
/// within the bounds.
pub fn gunzip<R: Read>(r: R, compressed: u64) -> Result<Vec<u8>, NotATrace> {
    gunzip_within(r, compressed, MAX_GUNZIP_BYTES)
}

fn gunzip_within<R: Read>(r: R, compressed: u64, max: u64) -> Result<Vec<u8>, NotATrace> {
    let mut d = flate2::read::MultiGzDecoder::new(r);
    let mut out = Vec::new();
    let mut chunk = vec![0u8; CHUNK];
    loop {
        let n = match d.read(&mut chunk) {
            Ok(0) => return Ok(out),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(NotATrace(format!("gzip: the file does not decompress: {e}"))),
        };
        let total = (out.len() + n) as u64;
        if total > max {
            return Err(NotATrace(format!(
                "gzip: a compressed trace expands to at most {} MiB, and this one expands past that; decompress it \
                 and give the file itself (read streaming, in any size)",
                max >> 20
            )));
        }
        if total > RATIO_FLOOR && total > compressed.saturating_mul(MAX_GUNZIP_RATIO) {
            return Err(NotATrace(format!(
                "gzip: a compressed trace expands at most {MAX_GUNZIP_RATIO} times, and this one's {compressed} bytes \
                 expand past {total}: refused as a decompression bomb"
            )));
        }
        out.extend_from_slice(&chunk[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gz(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    /// A bomb stops at the ratio bound, and a stream past the size bound at that one; concatenated members read;
    /// a damaged stream says so.
    #[test]
    fn bombs_stop_at_the_bounds() {
        let bomb = gz(&vec![0u8; (RATIO_FLOOR as usize) * 2]);
        let e = gunzip(&bomb[..], bomb.len() as u64).unwrap_err();
        assert!(e.0.starts_with("gzip: a compressed trace expands at most 200 times"), "{e}");
        let e = gunzip_within(&bomb[..], u64::MAX / 1024, 1 << 20).unwrap_err();
        assert!(e.0.starts_with("gzip: a compressed trace expands to at most 1 MiB"), "{e}");
        let two = [gz(b"ab"), gz(b"cd")].concat();
        assert_eq!(gunzip(&two[..], 4).unwrap(), b"abcd");
        let e = gunzip(&[0x1f, 0x8b, 0, 0][..], 4).unwrap_err();
        assert!(e.0.contains("does not decompress"), "{e}");
    }
}
