import { describe, expect, it } from 'vitest';
import {
  MAX_TRACE_FILE_BYTES,
  encodeTraces,
  parseTraces,
  sha256,
  traceTooLarge,
  withTraces,
} from './traceLink';

const H = 'a'.repeat(64);

describe('traceLink', () => {
  it('refuses a trace file over the size limit by its size, naming the limit first', () => {
    expect(traceTooLarge('t.data', MAX_TRACE_FILE_BYTES)).toBeNull();
    const m = traceTooLarge('huge.data', 3 * 1024 ** 3);
    expect(m).toMatch(/^the page opens trace files of at most 512 MiB, and huge.data is 3072 MiB/);
  });

  it('names traces in the fragment and reads them back', () => {
    const refs = [
      { hash: H, name: 'sched.data', mapping: '{"domains":[]}', tscHz: 2.4e9 },
      { hash: H, name: 'x' },
    ];
    const search = withTraces('?v=1&scenario=a', refs);
    expect(search.startsWith('?v=1&scenario=a#traces=')).toBe(true);
    const back = parseTraces(search.slice(search.indexOf('#')));
    expect(back.errors).toEqual([]);
    expect(back.refs).toEqual([refs[0], { hash: H, name: 'x', mapping: undefined, tscHz: undefined }]);
    // After a fragment that is already there.
    expect(withTraces('?v=1#s=abc', refs)).toMatch(/^\?v=1#s=abc&traces=/);
    expect(withTraces('?v=1', [])).toBe('?v=1');
    expect(encodeTraces([])).toBe('');
  });

  it('leaves out what is not a trace reference, with a message', () => {
    expect(parseTraces('#traces=nope').errors[0]).toContain('not JSON');
    expect(parseTraces('#traces=%7B%7D').errors[0]).toContain('not a list');
    const r = parseTraces(
      `#traces=${encodeURIComponent(
        JSON.stringify([
          { h: 'zz', n: 'a' },
          { h: H, n: 'b', f: -1 },
        ]),
      )}`,
    );
    expect(r.refs).toEqual([{ hash: H, name: 'b', mapping: undefined, tscHz: undefined }]);
    expect(r.errors).toHaveLength(1);
    expect(parseTraces('#s=1').refs).toEqual([]);
  });

  it('hashes bytes as SHA-256 hex', async () => {
    const empty = await sha256(new Uint8Array(new ArrayBuffer(0)));
    expect(empty).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});
