// The repository's generated docs shown in the page (docs/script-api.md): the Markdown those generators write,
// headings, paragraphs, lists, tables, code blocks, inline code and links, as React elements (no HTML is
// injected, so the page's CSP and React's escaping hold).
import { Fragment, type ReactNode } from 'react';

/** Inline Markdown: `code` and [text](url). */
function inline(text: string): ReactNode[] {
  const out: ReactNode[] = [];
  const re = /`([^`]+)`|\[([^\]]+)\]\(([^)]+)\)/g;
  let last = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    if (m[1] !== undefined) out.push(<code key={m.index}>{m[1]}</code>);
    else
      out.push(
        <a key={m.index} href={m[3]} target="_blank" rel="noreferrer">
          {m[2]}
        </a>,
      );
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** Table cells of a `| a | b |` row; a `|` inside backticks stays in its cell. */
function cells(row: string): string[] {
  const out: string[] = [];
  let cur = '';
  let code = false;
  for (const ch of row.trim().replace(/^\||\|$/g, '')) {
    if (ch === '`') code = !code;
    if (ch === '|' && !code) {
      out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  out.push(cur.trim());
  return out;
}

export function Markdown({ text, headingLevel = 3 }: { text: string; headingLevel?: number }) {
  const blocks: ReactNode[] = [];
  const lines = text.replace(/<!--[\s\S]*?-->/g, '').split('\n');
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    const key = blocks.length;
    if (line.trim() === '') {
      i++;
    } else if (line.startsWith('```')) {
      const body: string[] = [];
      for (i++; i < lines.length && !lines[i]!.startsWith('```'); i++) body.push(lines[i]!);
      i++;
      blocks.push(
        <pre key={key}>
          <code>{body.join('\n')}</code>
        </pre>,
      );
    } else if (/^#+ /.test(line)) {
      const depth = line.indexOf(' ');
      const H = `h${Math.min(6, headingLevel + depth - 1)}` as 'h3';
      blocks.push(<H key={key}>{inline(line.slice(depth + 1))}</H>);
      i++;
    } else if (line.startsWith('|')) {
      const rows: string[][] = [];
      for (; i < lines.length && lines[i]!.startsWith('|'); i++)
        if (!/^\|[-| :]+\|$/.test(lines[i]!)) rows.push(cells(lines[i]!));
      const [head, ...body] = rows;
      blocks.push(
        <table key={key}>
          <thead>
            <tr>
              {head?.map((c, k) => (
                <th key={k}>{inline(c)}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {body.map((r, j) => (
              <tr key={j}>
                {r.map((c, k) => (
                  <td key={k}>{inline(c)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>,
      );
    } else if (line.startsWith('- ')) {
      const items: string[] = [];
      for (; i < lines.length && (lines[i]!.startsWith('- ') || lines[i]!.startsWith('  ')); i++)
        if (lines[i]!.startsWith('- ')) items.push(lines[i]!.slice(2));
        else items[items.length - 1] += ` ${lines[i]!.trim()}`;
      blocks.push(
        <ul key={key}>
          {items.map((t, k) => (
            <li key={k}>{inline(t)}</li>
          ))}
        </ul>,
      );
    } else {
      const para: string[] = [];
      for (; i < lines.length && lines[i]!.trim() !== '' && !/^(#|\||- |```)/.test(lines[i]!); i++)
        para.push(lines[i]!);
      blocks.push(<p key={key}>{inline(para.join(' '))}</p>);
    }
  }
  return <Fragment>{blocks}</Fragment>;
}
