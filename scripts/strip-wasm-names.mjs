// Drops the `name` custom section (function names for profilers and stack traces: 0.5-0.8 MB) from the
// simulator's release module after wasm-pack has built it: `node scripts/strip-wasm-names.mjs [FILE]`.
// Neither tool in the build offers it: wasm-pack exposes no switch for wasm-bindgen's `--remove-name-section`;
// Cargo's `strip = "debuginfo"` keeps the section (rustc 1.95 keeps names under `--strip-debug`) and `strip =
// "symbols"` drops the `target_features` section too, which wasm-bindgen reads (without it the glue loses
// multi-value returns and reference types). Every other section is kept byte for byte. For a profile with names, rebuild with `npm run build:wasm:names`.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const file =
  process.argv[2] ?? fileURLToPath(new URL('../web/src/sim/pkg/schedsim_wasm_bg.wasm', import.meta.url));
const bytes = readFileSync(file);
if (bytes.readUInt32BE(0) !== 0x0061736d) throw new Error(`${file}: not a WebAssembly module`);

/** Reads an unsigned LEB128 at `at`: [value, offset after it]. */
function leb(at) {
  let value = 0;
  let shift = 0;
  for (;;) {
    const b = bytes[at++];
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if (!(b & 0x80)) return [value, at];
  }
}

// The module is the 8-byte header, then sections: an id byte, the payload's size (LEB128), the payload. A
// custom section (id 0) opens its payload with its name (a size, then UTF-8).
const kept = [bytes.subarray(0, 8)];
let dropped = 0;
for (let at = 8; at < bytes.length;) {
  const [size, payload] = leb(at + 1);
  const end = payload + size;
  let name = null;
  if (bytes[at] === 0) {
    const [len, text] = leb(payload);
    name = bytes.subarray(text, text + len).toString('utf8');
  }
  if (name === 'name') dropped += end - at;
  else kept.push(bytes.subarray(at, end));
  at = end;
}
writeFileSync(file, Buffer.concat(kept));
console.log(`${file}: dropped the name section (${dropped} bytes), ${bytes.length - dropped} bytes left`);
